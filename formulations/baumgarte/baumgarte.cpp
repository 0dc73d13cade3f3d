// Formulation "baumgarte": natural coordinates, the index-1 equations of "projection" and
// "unprojected" (formulations/projection/projection_ode.hpp) with Baumgarte's stabilization
// (J. Baumgarte, Comput. Methods Appl. Mech. Eng. 1, 1972): the acceleration constraint
//   Phi_q q'' + d/dt(Phi_q) q' = -2 alpha Phi' - beta^2 Phi
// makes the constraint violations obey Phi'' + 2 alpha Phi' + beta^2 Phi = 0, so that a drift decays
// instead of growing, at the cost of one more G v and Phi(q) per right-hand side; no projection.
// The same explicit Runge-Kutta integrators as "projection".
//
// alpha = beta = kRate: critically damped constraint dynamics (double root -alpha). The choice is
// documented, not tuned (a second setting dimension would multiply the tuner's runs): the rate of
// 10 1/s is the usual textbook value (Nikravesh; Flores et al. 2011 survey 1-20 1/s); a larger one
// corrects drift faster but adds a mode of that rate which an explicit method must resolve.
#include <fmt/format.h>

#include "core/formulation.hpp"
#include "projection/projection.hpp"
#include "projection/simulators.hpp"

namespace mbs::baumgarte {
namespace {

constexpr double kRate = 10.0;  // 1/s: alpha = beta

class Baumgarte final : public Formulation {
 public:
  std::string name() const override { return "baumgarte"; }
  std::string description() const override {
    return fmt::format("natural coordinates, index-1 equations through G M^-1 G^T with Baumgarte stabilization "
                       "(alpha = beta = {:g} 1/s), explicit Runge-Kutta, no projection", kRate);
  }
  std::vector<IntegratorInfo> integrators() const override { return projection::index1_cases().integrators(); }
  Accepts accepts() const override { return {{ElementRole::kJoint, ElementRole::kForce}, {}}; }
  std::unique_ptr<Simulator> create(const Model& model, const std::string& integrator, double setting) const override {
    const ErkCase c = projection::index1_cases().find(name(), integrator, setting);
    if (const std::string why = unsupported_reason(model); !why.empty()) throw SolverError("baumgarte: " + why);
    std::unique_ptr<Simulator> sim = projection::make_index1<true>(c, model, setting, false, LinearAlgebra::kAuto);
    dynamic_cast<projection::ProjectionRun&>(*sim).set_baumgarte(kRate, kRate);
    return sim;
  }
  std::string linearization_unsupported_reason(const Model& /*model*/) const override {
    return "no linearization implemented for baumgarte (its linearization would carry the constraint modes "
           "-alpha, -alpha as spurious eigenvalues)";
  }
};

}  // namespace

MBS_REGISTER_FORMULATION(Baumgarte);

}  // namespace mbs::baumgarte
