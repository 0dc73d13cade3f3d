// Linearization of formulation "alm-index3" about a static equilibrium, in natural coordinates q.
//
// The index-3 augmented Lagrangian M q'' + Phi_q^T (alpha Phi + lambda) = Q, with the multiplier
// estimate lambda held at its equilibrium value lambda0 (its update lambda += alpha Phi is the
// iteration within a step, not dynamics), linearized about the rest configuration q0 (Phi = 0):
//   M dq'' + (K_geo + alpha G^T G) dq = 0,   G = Phi_q(q0),  K_geo = sum_k lambda0_k d2Phi_k/dq2,
// alpha = 1e9 x the largest mass, the simulator's (it raises alpha only below h ~ 6e-4 s, so that
// h^2 alpha / 4m >= 100; a linearization has no step, so the base value is used).
//
// Spectrum: per independent rod a pair of constraint modes s ~ +-i sqrt(alpha/m) (~ +-3e4 i rad/s),
// spurious (they stretch the rods); the true ones are those of the constrained system up to the
// compliance 1/alpha: |ds/s| ~ (g/l) / (alpha/m) ~ 1e-8 (exact for modes that stretch no rod, as the
// 3D pendulum's).
#include "alm_index3/linearizer.hpp"

#include "common/linear_modes.hpp"
#include "core/formulation.hpp"

namespace mbs::alm_index3 {
namespace {

class AlmLinearizer final : public Linearizer {
 public:
  AlmLinearizer(const Model& model, double alpha_per_mass)
      : eq_(model),
        nq_(eq_.nq()),
        alpha_(alpha_per_mass * (nq_ > 0 ? eq_.nat().M_diag().maxCoeff() : 1.0)),
        modes_(nq_, 0, nq_, eq_.nc(), false),
        GtG_(nq_, nq_) {
    modes_.R.setIdentity();
    lin_.coordinates = "q: natural coordinates (the points' positions, local frame)";
    lin_.rule = modes_.rule();
    lin_.terms = {{"M", modes_.M},
                  {"K = K_geo + alpha Phi_q^T Phi_q", modes_.K},
                  {"K_geo = sum lambda0_k Phi_k,qq", eq_.K_geo()},
                  {"Phi_q", eq_.Phi_q()},
                  {"lambda0", eq_.lambda0()}};
    modes_.prepare(lin_.eigenvalues);
  }

  const Linearization& linearize() override {
    eq_.evaluate("alm-index3");
    GtG_.noalias() = eq_.Phi_q().transpose() * eq_.Phi_q();
    modes_.M.setZero();
    modes_.M.diagonal() = eq_.nat().M_diag();
    modes_.K = eq_.K_geo() + alpha_ * GtG_;
    modes_.Phi_q = eq_.Phi_q();
    modes_.compute(lin_.eigenvalues);
    lin_.terms[0].second = modes_.M;
    lin_.terms[1].second = modes_.K;
    lin_.terms[2].second = eq_.K_geo();
    lin_.terms[3].second = eq_.Phi_q();
    lin_.terms[4].second = eq_.lambda0();
    return lin_;
  }

 private:
  NaturalEquilibrium eq_;
  int nq_;
  double alpha_;
  LinearModes modes_;
  Eigen::MatrixXd GtG_;
  Linearization lin_;
};

}  // namespace

std::string linearizer_unsupported_reason(const Model& model) { return natural_linearization_unsupported_reason(model); }

std::unique_ptr<Linearizer> make_linearizer(const Model& model, double alpha_per_mass) {
  if (const std::string why = linearizer_unsupported_reason(model); !why.empty()) throw SolverError("alm-index3: " + why);
  return std::make_unique<AlmLinearizer>(model, alpha_per_mass);
}

}  // namespace mbs::alm_index3
