// Linearization of formulation "penalty" about a static equilibrium, in natural coordinates q.
//
// The simulator's equations (penalty.cpp), with lambda = alpha (Phi'' + 2 xi omega Phi' + omega^2 Phi)
// and Phi'' = Phi_q q'' + d/dt(Phi_q) q', linearized about the rest configuration q0 (Phi(q0) = 0,
// q' = 0; d/dt(Phi_q) q' is quadratic in q', Phi_q^T's variation meets lambda0):
//   (M + alpha G^T G) dq'' + 2 xi omega alpha G^T G dq' + (K_geo + alpha omega^2 G^T G) dq = 0,
// G = Phi_q(q0), K_geo = sum_k lambda0_k d2Phi_k/dq2, lambda0 the equilibrium rod forces
// (NaturalEquilibrium), alpha, xi, omega the simulator's (alpha = 1e8 x the largest mass, xi = 1,
// omega = 10 rad/s). The penalty's own equilibrium sags by lambda0 / (alpha omega^2) (~1e-9 m);
// linearizing at q0 instead changes the terms by that relative amount, below the penalty's error.
//
// Spectrum: per independent rod a pair of constraint modes, s ~ -xi omega (critically damped,
// ~ -10 rad/s, split by rounding into a nearly double pair), judged spurious (they stretch the
// rods); the true ones are those of the constrained system up to the penalty's compliance: a mode
// with rod-force amplitude mu stretches the rods by mu / (alpha p(s)), p(s) = s^2 + 2 xi omega s +
// omega^2, which shifts s^2 by |mu|^2 / (alpha |p(s)| y^T M y), i.e. |ds/s| ~ (g/l) / ((alpha/m) |p(i w)|)
// ~ 1e-9 here. Modes that never stretch a rod (the 3D pendulum's) are exact.
#include "penalty/linearizer.hpp"

#include "common/linear_modes.hpp"
#include "core/formulation.hpp"

namespace mbs::penalty {
namespace {

class PenaltyLinearizer final : public Linearizer {
 public:
  PenaltyLinearizer(const Model& model, double alpha_per_mass, double xi, double omega)
      : eq_(model),
        nq_(eq_.nq()),
        alpha_(alpha_per_mass * (nq_ > 0 ? eq_.nat().M_diag().maxCoeff() : 1.0)),
        xi_(xi),
        omega_(omega),
        modes_(nq_, 0, nq_, eq_.nc(), true),
        GtG_(nq_, nq_) {
    modes_.R.setIdentity();
    lin_.coordinates = "q: natural coordinates (the points' positions, local frame)";
    lin_.rule = modes_.rule();
    lin_.terms = {{"M_bar = M + alpha Phi_q^T Phi_q", modes_.M},
                  {"C = 2 xi omega alpha Phi_q^T Phi_q", modes_.C},
                  {"K = K_geo + alpha omega^2 Phi_q^T Phi_q", modes_.K},
                  {"K_geo = sum lambda0_k Phi_k,qq", eq_.K_geo()},
                  {"Phi_q", eq_.Phi_q()},
                  {"lambda0", eq_.lambda0()}};
    modes_.prepare(lin_.eigenvalues);
  }

  const Linearization& linearize() override {
    eq_.evaluate("penalty");
    GtG_.noalias() = eq_.Phi_q().transpose() * eq_.Phi_q();
    modes_.M = alpha_ * GtG_;
    modes_.M.diagonal() += eq_.nat().M_diag();
    modes_.C = (2.0 * xi_ * omega_ * alpha_) * GtG_;
    modes_.K = eq_.K_geo() + (alpha_ * omega_ * omega_) * GtG_;
    modes_.Phi_q = eq_.Phi_q();
    modes_.compute(lin_.eigenvalues);
    lin_.terms[0].second = modes_.M;
    lin_.terms[1].second = modes_.C;
    lin_.terms[2].second = modes_.K;
    lin_.terms[3].second = eq_.K_geo();
    lin_.terms[4].second = eq_.Phi_q();
    lin_.terms[5].second = eq_.lambda0();
    return lin_;
  }

 private:
  NaturalEquilibrium eq_;
  int nq_;
  double alpha_, xi_, omega_;
  LinearModes modes_;
  Eigen::MatrixXd GtG_;
  Linearization lin_;
};

}  // namespace

std::string linearizer_unsupported_reason(const Model& model) { return natural_linearization_unsupported_reason(model); }

std::unique_ptr<Linearizer> make_linearizer(const Model& model, double alpha_per_mass, double xi, double omega) {
  if (const std::string why = linearizer_unsupported_reason(model); !why.empty()) throw SolverError("penalty: " + why);
  return std::make_unique<PenaltyLinearizer>(model, alpha_per_mass, xi, omega);
}

}  // namespace mbs::penalty
