// Formulation "minimal": joint (minimal) coordinates, the equations of motion by the velocity
// transformation of the natural coordinates, (R^T M R) theta'' = R^T (Q - M c), R and R^T M R
// dense. On a planar tree of rods (points hanging from ground or from each other, free points) and
// on a body hinged by collinear spherical joints, its own coordinates: each rod's absolute angle from
// the vertical (fixed sizes up to 2 DOF; R^T M R constant when every rod hangs from ground), or the
// hinge's one angle. Every other model its tree ODE takes (spatial trees, rigid bodies, prismatic and
// fixed joints, force elements, free bodies, closed loops) runs in the relative joint coordinates of
// recursive's spanning tree (recursive/tree_ode.hpp, velocity_transformation.hpp). Integrated by
// fixed-step RK4 or DOP853's 8th-order method, or by adaptive embedded Runge-Kutta pairs.
// Frictionless point-plane contacts are events: located impacts with Newton's law, persistent
// contacts as bilateral constraints (common/contact_events.hpp). A model without contacts takes
// exactly the plain paths.
#include "common/dense_limit.hpp"
#include "common/erk_simulators.hpp"
#include "common/integrator_table.hpp"
#include "core/formulation.hpp"
#include "minimal/hinge.hpp"
#include "minimal/joint_tree.hpp"
#include "minimal/linearizer.hpp"
#include "minimal/minimal_ode.hpp"
#include "recursive/tree_ode.hpp"

namespace mbs::minimal {
namespace {

// MinimalOde on a joint tree that it owns (the simulators build the ODE from the model and the tree).
struct OwnedTree {
  JointTree tree;
};
template <int N, int NQ>
class TreeOde final : private OwnedTree, public MinimalOde<N, NQ> {
 public:
  using Base = MinimalOde<N, NQ>;
  using typename Base::State;
  static constexpr bool kContacts = true;  // common/erk_simulators.hpp: a model without contacts takes the plain step
  TreeOde(const Model& model, JointTree tree) : OwnedTree{std::move(tree)}, Base(model, OwnedTree::tree), model_(model) {}
  const char* name() const { return "minimal"; }
  void initial_state(State& y) const { Base::initial_state(model_, y); }

 private:
  const Model& model_;
};

// Fixed sizes for the smallest planar systems, dynamic sizes otherwise.
std::unique_ptr<Simulator> make_sized(const ErkCase& c, const Model& model, JointTree tree, double setting) {
  if (tree.ndof == 1 && model.nq() == 2) return make_erk_simulator<TreeOde<1, 2>>(c, model, setting, std::move(tree));
  if (tree.ndof == 2 && model.nq() == 4) return make_erk_simulator<TreeOde<2, 4>>(c, model, setting, std::move(tree));
  return make_erk_simulator<TreeOde<Eigen::Dynamic, Eigen::Dynamic>>(c, model, setting, std::move(tree));
}

// Which description of the model minimal runs: its planar rods in absolute angles or its hinge
// where they apply and no force element acts (the one built is left in tree or hinge), else
// recursive's spanning tree.
enum class Path { kRods, kHinge, kTree };

Path path_of(const Model& model, JointTree& tree, Hinge& hinge) {
  for (const auto& e : model.elements)
    if (e->role() != ElementRole::kContact && e->tree_joint().type != TreeJointType::kRod &&
        e->tree_joint().type != TreeJointType::kSpherical)
      return Path::kTree;
  if (model.bodies.empty()) {
    if (build_joint_tree(model, tree).empty()) return Path::kRods;
  } else {
    if (build_hinge(model, hinge).empty()) return Path::kHinge;
  }
  return Path::kTree;
}

// The spanning tree's dense objects: R and sqrt(M) R (n_n x nv), H (nv x nv), and the loops' G,
// H^-1 G^T, G H^-1 G^T; one right-hand side forms H by a rank update, n_n nv^2 / 2 flops.
std::string tree_dense_reason(const Model& model, const recursive::SpatialTree& tree) {
  const double nn = model.nq(), nv = tree.nv, d = tree.depth, m = recursive::cut_row_count(model, tree);
  return dense_limit_reason(m > 0.0 ? "R, R^T M R and the loops' G, H^-1 G^T, G H^-1 G^T" : "R and R^T M R",
                            8.0 * (2.0 * nn * nv + nv * nv + 2.0 * m * nv + m * m),
                            nn * nv * nv / 2.0 + nv * d * d + m * m * m / 3.0);
}

class Minimal final : public Formulation {
 public:
  std::string name() const override { return "minimal"; }
  std::string description() const override {
    return "joint (minimal) coordinates; ODE by velocity transformation, dense R^T M R";
  }
  std::vector<IntegratorInfo> integrators() const override { return cases_.integrators(); }
  // What recursive's tree takes: joints by their tree descriptions, contacts by their gap forms,
  // force elements by their Q in natural coordinates.
  Accepts accepts() const override {
    return {{ElementRole::kForce, ElementRole::kContact}, recursive::tree_joint_types()};
  }
  std::string structure_unsupported_reason(const Model& model) const override {
    JointTree rods;
    Hinge hinge;
    switch (path_of(model, rods, hinge)) {
      case Path::kHinge:
        return "";
      case Path::kRods: {
        // nq - nc joint coordinates n; R (nq x n), R^T M R and its Cholesky factor (n x n) are dense.
        const double n = model.nq() - model.nc(), nq = model.nq();
        return dense_limit_reason("R and R^T M R", 8.0 * (nq * n + 2.0 * n * n), n * n * n / 3.0);
      }
      case Path::kTree:
        break;
    }
    recursive::SpatialTree tree;
    if (std::string why = recursive::tree_ode_unsupported_reason(model, &tree); !why.empty()) return why;
    return tree_dense_reason(model, tree);
  }
  std::unique_ptr<Simulator> create(const Model& model, const std::string& integrator, double setting) const override {
    const ErkCase c = cases_.find(name(), integrator, setting);
    JointTree rods;
    Hinge hinge;
    switch (path_of(model, rods, hinge)) {
      case Path::kHinge:
        return make_hinge_simulator(c, model, hinge, setting);
      case Path::kRods:
        return make_sized(c, model, std::move(rods), setting);
      case Path::kTree:
        break;
    }
    recursive::SpatialTree tree;
    if (const std::string why = recursive::build_spatial_tree(model, tree); !why.empty()) throw SolverError(why);
    if (const std::string why = tree_dense_reason(model, tree); !why.empty()) throw SolverError("minimal/" + integrator + ": " + why);
    return make_erk_simulator<recursive::TreeOde>(c, model, setting, std::move(tree), recursive::Algorithm::kVt);
  }
  std::string linearization_unsupported_reason(const Model& model) const override {
    return linearizer_unsupported_reason(model);
  }
  std::unique_ptr<Linearizer> create_linearizer(const Model& model) const override { return make_linearizer(model); }

 private:
  const ErkCases cases_{{&kRk4, &kDop853Fixed, &kDopri5, &kFehlberg8}};
};

}  // namespace

MBS_REGISTER_FORMULATION(Minimal);

}  // namespace mbs::minimal
