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
#include <fmt/format.h>

#include <cmath>
#include <utility>

#include "common/explicit_rk.hpp"
#include "common/independent_rows.hpp"
#include "core/formulation.hpp"
#include "core/natural_coordinates.hpp"
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
  std::vector<IntegratorInfo> integrators() const override { return index1_integrators(); }
  // Any joint by its rows and any force element by Q(q, v): an explicit method needs no Jacobian;
  // contacts by their normal rows, as events.
  Accepts accepts() const override {
    return {{ElementRole::kJoint, ElementRole::kForce, ElementRole::kContact}, {}};
  }
  std::unique_ptr<Simulator> create(const Model& model, const std::string& integrator, double setting) const override {
    check_index1_request(name(), integrator, setting);
    if (const std::string why = unsupported_reason(model); !why.empty()) throw SolverError(name() + ": " + why);
    return make_simulator(model, integrator, setting, project_);
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

std::vector<IntegratorInfo> index1_integrators() {
  return {
      {"rk4", SettingKind::kFixedStep, 0.5, 1e-5, "classical Runge-Kutta, fixed step", ""},
      {"fehlberg8-fixed", SettingKind::kFixedStep, 0.5, 1e-5,
       "Fehlberg's 8th-order weights (ARKODE's 8(7) table, 13 stages) at a fixed step", ""},
      {"dop853-fixed", SettingKind::kFixedStep, 0.5, 1e-5,
       "Dormand-Prince's 8th-order method of DOP853 (12 stages) at a fixed step", ""},
      {"dopri5", SettingKind::kTolerance, 1e-2, 1e-13, "Dormand-Prince 5(4), adaptive (ARKODE's table)", ""},
      {"fehlberg8", SettingKind::kTolerance, 1e-2, 1e-13, "Fehlberg 8(7), 13 stages, adaptive (ARKODE's table)", ""},
  };
}

void check_index1_request(const std::string& formulation, const std::string& integrator, double setting) {
  if (integrator != "rk4" && integrator != "fehlberg8-fixed" && integrator != "dop853-fixed" && integrator != "dopri5" &&
      integrator != "fehlberg8")
    throw SolverError(fmt::format("{}: unknown integrator '{}' (known: rk4, fehlberg8-fixed, dop853-fixed, dopri5, fehlberg8)",
                                  formulation, integrator));
  if (!(setting > 0.0) || !std::isfinite(setting))
    throw SolverError(fmt::format("{}: the setting must be positive and finite, got {}", formulation, setting));
}

std::unique_ptr<Simulator> make_simulator(const Model& model, const std::string& integrator, double setting, bool project,
                                          LinearAlgebra la) {
  return make_index1<false>(model, integrator, setting, project, la);
}

MBS_REGISTER_FORMULATION(Projection);
MBS_REGISTER_FORMULATION(Unprojected);

}  // namespace mbs::projection
