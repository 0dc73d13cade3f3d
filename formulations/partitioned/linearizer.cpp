// The reduced equations of the partitioned formulation, M_r(y) y'' = R^T (Q - M R' y'), with the
// velocity transformation dq = R dy, R = [I; B] (rows of q_i and q_d), B = -Phi_d^-1 Phi_i, linearized
// about the equilibrium y0 (y' = 0, so R' y' is quadratic and drops out):
//   (R^T M R) dy'' + (R^T K_geo R) dy = 0,   K_geo = sum_k lambda0_k d2Phi_k/dq2.
// R^T Phi_q^T = 0 for every y, so R^T Q = R^T (Q - Phi_q^T lambda0); its derivative at the
// equilibrium is -R^T K_geo R, the variation of R meeting Q - Phi_q^T lambda0 = 0. For the 3D
// pendulum hanging along -z the rule picks z as dependent: y = (x, y), and the terms are the
// spec's M_q = m diag(1, 1), K_q = (m g / l) diag(1, 1); no spurious eigenvalue can arise (an ODE in
// independent coordinates), which the shared rule confirms rather than assumes.
#include "partitioned/linearizer.hpp"

#include <fmt/format.h>

#include "common/linear_modes.hpp"
#include "core/formulation.hpp"
#include "common/partition.hpp"

namespace mbs::partitioned {
namespace {

std::string coordinate_name(const Model& model, int i) {
  static const char* axes[] = {"x", "y", "z"};
  const int np = static_cast<int>(model.points.size());
  if (i < model.dim * np) return fmt::format("{}({})", axes[i % model.dim], model.points[i / model.dim].name);
  const int nb = model.body_coordinates(), d = model.dim;
  const int k = (i - d * np) / nb, j = (i - d * np) % nb;
  return fmt::format("{}{}({})", j < d ? "r_G." : fmt::format("u{}.", j / d), axes[j % d], model.bodies[k].name);
}

class PartitionedLinearizer final : public Linearizer {
 public:
  explicit PartitionedLinearizer(const Model& model)
      : eq_(model),
        partition_(choose_partition(eq_.Phi_q())),
        n_(partition_.ndof()),
        r_(partition_.rank),
        modes_(n_, 0, eq_.nq(), eq_.nc(), false),
        Phi_d_(r_, r_),
        Phi_i_(r_, n_),
        B_(r_, n_),
        lu_(r_),
        MR_(eq_.nq(), n_) {
    std::string names;
    for (int i : partition_.independent) names += (names.empty() ? "" : ", ") + coordinate_name(model, i);
    lin_.coordinates = fmt::format("independent natural coordinates, chosen by full-pivoting LU of Phi_q at the equilibrium: {}", names);
    lin_.rule = modes_.rule();
    lin_.terms = {{"M_r = R^T M R", modes_.M}, {"K_r = R^T K_geo R", modes_.K}, {"R = dq/dy", modes_.R},
                  {"lambda0", eq_.lambda0()}};
    modes_.prepare(lin_.eigenvalues);
  }

  const Linearization& linearize() override {
    eq_.evaluate("partitioned");
    const Eigen::MatrixXd& Phi_q = eq_.Phi_q();
    for (int a = 0; a < r_; ++a) {
      for (int b = 0; b < r_; ++b) Phi_d_(a, b) = Phi_q(partition_.rows[a], partition_.dependent[b]);
      for (int b = 0; b < n_; ++b) Phi_i_(a, b) = Phi_q(partition_.rows[a], partition_.independent[b]);
    }
    lu_.compute(Phi_d_);
    B_.noalias() = lu_.solve(Phi_i_);
    B_ = -B_;
    Eigen::MatrixXd& R = modes_.R;
    R.setZero();
    for (int b = 0; b < n_; ++b) R(partition_.independent[b], b) = 1.0;
    for (int a = 0; a < r_; ++a) R.row(partition_.dependent[a]) = B_.row(a);
    MR_.noalias() = eq_.nat().M_diag().asDiagonal() * R;
    modes_.M.noalias() = R.transpose() * MR_;
    MR_.noalias() = eq_.K_geo() * R;
    modes_.K.noalias() = R.transpose() * MR_;
    modes_.Phi_q = Phi_q;
    modes_.compute(lin_.eigenvalues);
    lin_.terms[0].second = modes_.M;
    lin_.terms[1].second = modes_.K;
    lin_.terms[2].second = R;
    lin_.terms[3].second = eq_.lambda0();
    return lin_;
  }

 private:
  NaturalEquilibrium eq_;
  Partition partition_;
  int n_, r_;
  LinearModes modes_;
  Eigen::MatrixXd Phi_d_, Phi_i_, B_;
  Eigen::PartialPivLU<Eigen::MatrixXd> lu_;
  Eigen::MatrixXd MR_;
  Linearization lin_;
};

}  // namespace

std::string linearizer_unsupported_reason(const Model& model) {
  if (model.nq() == 0) return "the model has no bodies";
  NaturalCoordinates nat(model);
  Eigen::MatrixXd Phi_q(nat.nc(), nat.nq());
  nat.Phi_q(model.initial_q(), Phi_q);
  if (choose_partition(Phi_q).ndof() == 0) return "the model has no degrees of freedom";
  return "";
}

std::unique_ptr<Linearizer> make_linearizer(const Model& model) { return std::make_unique<PartitionedLinearizer>(model); }

}  // namespace mbs::partitioned
