// Formulation "minimal": joint (minimal) coordinates from the model's joint tree, as an ODE
// integrated by fixed-step RK4 or DOP853's 8th-order method, or by adaptive embedded Runge-Kutta
// pairs. Frictionless point-plane contacts are events: located impacts with Newton's law,
// persistent contacts as bilateral constraints (common/contact_events.hpp). A model without
// contacts takes exactly the plain paths.
#include "common/dense_limit.hpp"
#include "common/erk_simulators.hpp"
#include "common/integrator_table.hpp"
#include "core/formulation.hpp"
#include "minimal/hinge.hpp"
#include "minimal/joint_tree.hpp"
#include "minimal/linearizer.hpp"
#include "minimal/minimal_ode.hpp"

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

class Minimal final : public Formulation {
 public:
  std::string name() const override { return "minimal"; }
  std::string description() const override {
    return "joint (minimal) coordinates from the joint tree; ODE by velocity transformation";
  }
  std::vector<IntegratorInfo> integrators() const override { return cases_.integrators(); }
  // Joint coordinates from the joints' tree descriptions: rods (a tree of point masses) and
  // spherical joints (a body hinged on two of them); contacts by their gap form.
  Accepts accepts() const override { return {{ElementRole::kContact}, {TreeJointType::kRod, TreeJointType::kSpherical}}; }
  std::string structure_unsupported_reason(const Model& model) const override {
    if (!model.bodies.empty()) {  // a rigid body: only one hinged to the ground
      Hinge hinge;
      return build_hinge(model, hinge);
    }
    // A tree of rods has nq - nc joint coordinates n; R (nq x n), R^T M R and its Cholesky factor
    // (n x n) are dense.
    const double n = model.nq() - model.nc(), nq = model.nq();
    if (std::string why = dense_limit_reason("R and R^T M R", 8.0 * (nq * n + 2.0 * n * n), n * n * n / 3.0); !why.empty())
      return why;
    JointTree tree;
    return build_joint_tree(model, tree);
  }
  std::unique_ptr<Simulator> create(const Model& model, const std::string& integrator, double setting) const override {
    const ErkCase c = cases_.find(name(), integrator, setting);
    if (!model.bodies.empty()) {
      Hinge hinge;
      if (const std::string why = build_hinge(model, hinge); !why.empty()) throw SolverError(why);
      return make_hinge_simulator(c, model, hinge, setting);
    }
    JointTree tree;
    if (const std::string why = build_joint_tree(model, tree); !why.empty()) throw SolverError(why);
    return make_sized(c, model, std::move(tree), setting);
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
