// Linearization of formulation "ida-index3" about a static equilibrium: its index-3 DAE
//   q' = v,  M v' + Phi_q^T lambda = Q,  Phi(q) = 0
// linearized about (q0, v = 0, lambda0) in (dq, dv, dmu):
//   M dq'' + K_geo dq + G^T dmu = 0,  G dq = 0,   K_geo = sum_k lambda0_k d2Phi_k/dq2,
// as the pencil s diag(I, M, 0) z = [0 I 0; -K_geo 0 -G^T; G 0 0] z, z = [dq; dv; dmu].
//
// Redundant rods: G keeps only a maximal set of independent rows of Phi_q (rank-revealing, pivoted
// QR of Phi_q^T with the 1e-10 threshold ida-index3 uses for its initial conditions); with a
// dependent row the pencil would be singular (det = 0 for every s). lambda0 is the minimum-norm
// least-squares solution over all rows (NaturalEquilibrium). The rank is fixed at setup (the
// configuration is the model's); linearize() re-derives it and throws if it ever differed.
//
// Spectrum: 2 (nq - rank) finite eigenvalues, exact up to rounding, and 3 rank infinite ones (a
// Jordan block of size 3 per independent constraint: index 3), spurious. With independent rows and
// M positive definite on the constraint manifold, LinearModes computes the finite ones there and
// reports the infinite ones by that structure; on its QZ path (the structure broken), Eigen's QZ
// deflates B's zero rows exactly (beta = 0), and were they perturbed into huge finite values
// (beta ~ delta^(1/3) |alpha|), LinearModes would still call them infinite or reject their modes.
#include "ida_index3/linearizer.hpp"

#include <fmt/format.h>

#include "common/linear_modes.hpp"
#include "core/formulation.hpp"

namespace mbs::ida_index3 {
namespace {

class IdaLinearizer final : public Linearizer {
 public:
  explicit IdaLinearizer(const Model& model)
      : eq_(model),
        nq_(eq_.nq()),
        rank_(eq_.rank()),
        modes_(nq_, rank_, nq_, eq_.nc(), false) {
    modes_.R.setIdentity();
    lin_.coordinates =
        "q, v, mu: natural coordinates (the points' positions), their rates and the independent rods' multipliers";
    lin_.rule = modes_.rule();
    lin_.terms = {{"M", modes_.M},
                  {"K_geo = sum lambda0_k Phi_k,qq", eq_.K_geo()},
                  {"Phi_q", eq_.Phi_q()},
                  {"G = independent rows of Phi_q", modes_.G},
                  {"lambda0", eq_.lambda0()}};
    modes_.prepare(lin_.eigenvalues);
  }

  const Linearization& linearize() override {
    eq_.evaluate("ida-index3");
    if (eq_.rank() != rank_)
      throw SolverError(fmt::format("ida-index3: the rank of Phi_q changed from {} to {}", rank_, eq_.rank()));
    modes_.M.setZero();
    modes_.M.diagonal() = eq_.nat().M_diag();
    modes_.K = eq_.K_geo();
    for (int i = 0; i < rank_; ++i) modes_.G.row(i) = eq_.Phi_q().row(eq_.independent_rows()[i]);
    modes_.Phi_q = eq_.Phi_q();
    modes_.compute(lin_.eigenvalues);
    lin_.terms[0].second = modes_.M;
    lin_.terms[1].second = eq_.K_geo();
    lin_.terms[2].second = eq_.Phi_q();
    lin_.terms[3].second = modes_.G;
    lin_.terms[4].second = eq_.lambda0();
    return lin_;
  }

 private:
  NaturalEquilibrium eq_;
  int nq_, rank_;
  LinearModes modes_;
  Linearization lin_;
};

}  // namespace

std::string linearizer_unsupported_reason(const Model& model) { return natural_linearization_unsupported_reason(model); }

std::unique_ptr<Linearizer> make_linearizer(const Model& model) {
  if (const std::string why = linearizer_unsupported_reason(model); !why.empty()) throw SolverError("ida-index3: " + why);
  return std::make_unique<IdaLinearizer>(model);
}

}  // namespace mbs::ida_index3
