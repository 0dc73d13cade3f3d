// Formulation "recursive": joint coordinates for any kinematic tree (spatial_tree.hpp), forward
// dynamics by the articulated-body algorithm (aba-*, O(N)) or by the composite-rigid-body
// algorithm with a tree-sparse L^T D L of the joint-space mass matrix (crba-*, O(N d^2)), integrated
// by minimal's explicit Runge-Kutta methods (common/explicit_rk.hpp), and by Dormand & Prince's
// 8th-order method of DOP853 at a fixed step (*-dop853-fixed, as projection's: a smooth motion whose
// step is set by accuracy takes long steps at 8th order without an error estimate's stages). On a
// planar tree ABA runs on planar 3-vectors (spatial_tree.hpp). Frictionless point-plane contacts on
// the tree's points are events as in minimal (common/contact_events.hpp, tree_contacts.hpp). Force
// elements of every kind act as external forces on the tree's bodies (their natural-coordinate Q
// mapped by virtual work); bodies not joined to ground float on free roots (a free rigid body:
// 6 DOF, position + unit quaternion).
//
// Quaternions (spherical joints, spatial rods) are integrated as ordinary state components,
// q' = 1/2 q (x) (0, omega), and renormalized after every accepted step; within a step the joint
// rotation is read from q / |q|, so every stage sees an exact rotation. The exact flow keeps |q|,
// so the drift renormalized away is the method's own local error (tests/test_recursive.cpp checks
// that energy and a conical pendulum's cone angle converge at the method's order).
//
// `minimal` runs the same tree ODE (tree_ode.hpp) with the velocity transformation of the natural
// coordinates (dense R^T M R) where its own planar-rod and hinge paths do not apply: the two
// formulations share the tree, the joint coordinates, the integrators, contacts and loops, and differ
// in how the accelerations are found (docs/formulations.md says why they stay two formulations).
//
// Closed loops: the tree is a spanning tree of the joint graph and the joints it leaves out close
// the loops with their own rows (loop_closure.hpp): the accelerations by Lagrange multipliers on
// the tree's, H by CRBA in both families, and a projection onto the position and velocity
// constraints after every step, as `projection` does in natural coordinates.
//
// Linearization about a static equilibrium: in the tree's velocity coordinates as tangent
// increments, M = H(q0) by CRBA and the gravity stiffness K analytic (linearizer.cpp).
#include <fmt/format.h>

#include "common/dense_limit.hpp"
#include "common/erk_simulators.hpp"
#include "common/integrator_table.hpp"
#include "core/formulation.hpp"
#include "recursive/linearizer.hpp"
#include "recursive/tree_ode.hpp"

namespace mbs::recursive {
namespace {

class Recursive final : public Formulation {
 public:
  std::string name() const override { return "recursive"; }
  std::string description() const override {
    return "joint coordinates for kinematic trees (spatial vectors, quaternion spherical joints); ABA or CRBA + tree-sparse LTDL";
  }
  std::vector<IntegratorInfo> integrators() const override { return cases_.integrators(); }
  // Joints by their tree descriptions, contacts by their gap forms (an event on a tree point), force
  // elements of any kind (their Q in natural coordinates is mapped onto the tree's bodies by virtual
  // work, TreeForces).
  Accepts accepts() const override {
    return {{ElementRole::kForce, ElementRole::kContact}, tree_joint_types()};
  }
  std::string structure_unsupported_reason(const Model& model) const override { return tree_ode_unsupported_reason(model); }
  std::string linearization_unsupported_reason(const Model& model) const override {
    return linearizer_unsupported_reason(model);
  }
  std::unique_ptr<Linearizer> create_linearizer(const Model& model) const override { return make_linearizer(model); }
  std::unique_ptr<Simulator> create(const Model& model, const std::string& integrator, double setting) const override {
    const ErkCase c = cases_.find(name(), integrator, setting);
    SpatialTree tree;
    if (const std::string why = build_spatial_tree(model, tree); !why.empty()) throw SolverError(why);
    if (c.variant != 0 || !tree.cuts.empty()) {  // CRBA, or loops: H dense (nv x nv), its tree-sparse LTDL O(nv d^2)
      const double nv = tree.nv, d = tree.depth;
      const double m = cut_row_count(model, tree);  // loops: G (m x nv), H^-1 G^T and G H^-1 G^T (m x m) dense, factored in O(m^3)
      const std::string what = m > 0.0 ? "the mass matrix H and the loops' G, H^-1 G^T, G H^-1 G^T" : "the mass matrix H";
      if (const std::string why = dense_limit_reason(what, 8.0 * (nv * nv + 2.0 * m * nv + m * m), nv * d * d + m * m * m / 3.0);
          !why.empty())
        throw SolverError("recursive/" + integrator + ": " + why);
    }
    return make_erk_simulator<TreeOde>(c, model, setting, std::move(tree), c.variant == 0 ? Algorithm::kAba : Algorithm::kCrba);
  }

 private:
  // Every method under each algorithm (Algorithm's order).
  const ErkCases cases_{{&kRk4, &kDopri5, &kFehlberg8, &kDop853Fixed},
                        {{"aba-", "articulated-body algorithm"}, {"crba-", "CRBA + tree-sparse L^T D L"}}};
};

}  // namespace

MBS_REGISTER_FORMULATION(Recursive);

std::string tree_ode_unsupported_reason(const Model& model, SpatialTree* built) {
  SpatialTree local;
  SpatialTree& tree = built != nullptr ? *built : local;
  if (std::string why = build_spatial_tree(model, tree); !why.empty()) return why;
  if (!TreeContacts(model, tree).mapped()) return "a contact's point is not a point of the tree";
  if (!tree.cuts.empty()) {
    if (TreeContacts(model, tree).active())
      return fmt::format("contacts on a closed loop (joint {} closes one): not implemented", tree.cuts.front()->name);
    if (tree.has_quaternions)
      return fmt::format("a closed loop (joint {} closes one) on a tree with spherical joints or spatial rods: not implemented",
                         tree.cuts.front()->name);
  }
  return "";
}

}  // namespace mbs::recursive
