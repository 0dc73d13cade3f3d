// Formulations "projection" and "unprojected": natural coordinates, the index-1 (acceleration-level)
// equations M a + Phi_q^T lambda = Q, Phi_q a = -d/dt(Phi_q) v solved through G M^-1 G^T
// (projection_ode.hpp), integrated by the explicit Runge-Kutta methods of common/explicit_rk.hpp.
// "projection" projects the state mass-orthogonally onto Phi(q) = 0 and then Phi_q v = 0 after
// every accepted step (and once at t = 0); "unprojected" is the same method without any projection,
// registered as its own formulation so that the table shows what the projection buys (its
// constraint violations drift as the integration error accumulates). "baumgarte"
// (formulations/baumgarte/) is the same method with Baumgarte's feedback (set_baumgarte).
//
// Integrators: rk4 (fixed step), fehlberg8-fixed (the 8th-order weights of ARKODE's Fehlberg 8(7)
// table at a fixed step: 13 right-hand sides per step), dop853-fixed (Dormand & Prince's 8th-order
// method of DOP853 at a fixed step: 12 right-hand sides, and a smaller error constant; ARKODE 6.4
// does not ship it, common/butcher_tables.cpp), dopri5 and fehlberg8 (adaptive, EmbeddedRk with
// local extrapolation, rtol = atol = tol).
//
// FSAL (dopri5): after a step EmbeddedRk keeps its last stage f(t, y_unprojected) as the next step's
// first stage, and the projection then moves y. We keep that stage, not re-evaluated: the projection
// moves y by the step's constraint drift, O(h^(p+1)), so the stale stage differs from f(t, y) by as
// much and enters the next step multiplied by h, below that step's own local error; re-evaluating
// costs one right-hand side per step (1/6 of dopri5's) and EmbeddedRk can only drop the stage
// together with its step size (initialize()). Fehlberg 8(7) is not FSAL.
//
// Redundant constraints: independent rows chosen once at setup (common/independent_rows.hpp).
// Contacts: frictionless point-plane contacts as events, located by re-integration, with Newton's
// impact law through the joints' constrained inverse mass (common/contact_events.hpp,
// projection_ode.hpp). Linearization: none.
#include "common/integrator_table.hpp"
#include "core/formulation.hpp"
#include "projection/projection.hpp"
#include "projection/projection_ode.hpp"
#include "projection/simulators.hpp"

namespace mbs::projection {
namespace {

class Index1Formulation : public Formulation {
 public:
  explicit Index1Formulation(bool project) : project_(project) {}
  std::string name() const override { return project_ ? "projection" : "unprojected"; }
  std::string description() const override {
    return project_ ? "natural coordinates, index-1 equations through G M^-1 G^T, explicit Runge-Kutta, "
                      "mass-orthogonal projection of positions and velocities after every step"
                    : "natural coordinates, index-1 equations through G M^-1 G^T, explicit Runge-Kutta, "
                      "no projection (constraint drift left as it grows)";
  }
  std::vector<IntegratorInfo> integrators() const override { return index1_cases().integrators(); }
  // Any joint by its rows and any force element by Q(q, v): an explicit method needs no Jacobian;
  // contacts by their normal rows, as events.
  Accepts accepts() const override {
    return {{ElementRole::kJoint, ElementRole::kForce, ElementRole::kContact}, {}};
  }
  std::unique_ptr<Simulator> create(const Model& model, const std::string& integrator, double setting) const override {
    const ErkCase c = index1_cases().find(name(), integrator, setting);
    if (const std::string why = unsupported_reason(model); !why.empty()) throw SolverError(name() + ": " + why);
    return make_index1<false>(c, model, setting, project_, LinearAlgebra::kAuto);
  }
  std::string linearization_unsupported_reason(const Model& /*model*/) const override {
    return "no linearization implemented for " + name() + " (the index-1 equations' constraint drift modes would "
           "be double zero eigenvalues)";
  }

 private:
  bool project_;
};

class Projection final : public Index1Formulation {
 public:
  Projection() : Index1Formulation(true) {}
};

class Unprojected final : public Index1Formulation {
 public:
  Unprojected() : Index1Formulation(false) {}
};

}  // namespace

const ErkCases& index1_cases() {
  static const ErkCases cases{{&kRk4, &kFehlberg8Fixed, &kDop853Fixed, &kDopri5, &kFehlberg8}};
  return cases;
}

std::unique_ptr<Simulator> make_simulator(const Model& model, const std::string& integrator, double setting, bool project,
                                          LinearAlgebra la) {
  const ErkCase c = index1_cases().find(project ? "projection" : "unprojected", integrator, setting);
  return make_index1<false>(c, model, setting, project, la);
}

MBS_REGISTER_FORMULATION(Projection);
MBS_REGISTER_FORMULATION(Unprojected);

}  // namespace mbs::projection
