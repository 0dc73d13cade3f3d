// The shared constraint toolkit of the natural-coordinate formulations: the kept (independent)
// constraint rows of a model, their Jacobian G = Phi_q (dense or on a fixed sparse pattern), and the
// Schur complement S = G M^-1 G^T (M diagonal) with its factorization. On these it builds what the
// second-order and index-3 methods each used to carry a copy of:
//   - consistent accelerations and multipliers at a state (q, v):
//       M a + G^T lambda = Q,  G a = -gamma,  gamma = d/dt(Phi_q) v
//     reduce exactly to (G M^-1 G^T) lambda = G M^-1 Q + gamma,  a = M^-1 (Q - G^T lambda);
//   - the mass-orthogonal projections onto Phi(q) = 0 (Gauss-Newton, to round-off) and Phi_q v = 0
//     (one linear solve), the minimizers of |dq|_M and |dv|_M subject to the constraints.
// The kept rows come from common/independent_rows.hpp (a pivoted QR at q0); the dropped ones are
// combinations of the kept ones, so they hold too, and their multipliers are 0 (scatter()).
//
// Singular positions (Phi_q losing rank along the motion, e.g. the N-four-bar with every crank
// horizontal): eigenvalues s of S vanish there like the squared distance to the singular position,
// and the components of a right-hand side along them carry the state's inconsistency e (an RK stage
// is off the constraints by the step's error; a projected state by round-off amplified by 1/s). The
// multipliers along them are then e / s and the accelerations e / sqrt(s): on the N-four-bar a step
// that landed close to the singular position computed accelerations far beyond the motion's
// (docs/formulations.md, Method notes). So a factorization is of S + delta I, delta = kSingularShift
// x the largest diagonal entry of S, with every solve refined once against S (iterated Tikhonov),
// wherever S is near-singular: its smallest Cholesky pivot's share of its row's diagonal has fallen
// below kSingularDrop times its value at q0. Elsewhere S is factored as it is, so that regular
// mechanisms keep exact multipliers (an always-on shift cost a driven slider-crank its 8th-order
// energy balance, and a spinning regulator with thin bodies, whose S has a tiny pivot share all
// along, its angular momentum). The filter 1 - (delta / (s + delta))^2 leaves modes with s >> delta
// exact to (delta / s)^2 and caps the accelerations of the vanishing modes at ~e / sqrt(delta); the
// position projection becomes a Levenberg-Marquardt step. One kept row cannot become singular and is
// solved exactly.
//
// Evaluation happens at a loaded state (load()): the NaturalCoordinates calls then go through
// references bound once, since binding a Ref<const VectorXd> per call costs a construction and a
// free(nullptr) in the hot loop; fixed sizes evaluate the rows as explicit quadratics
// (common/quadratic_rows.hpp) instead. NQ, NR are fixed for the smallest models (all rows kept),
// Eigen::Dynamic otherwise; everything is sized in the constructor and nothing after it allocates.
#pragma once

#include <fmt/format.h>

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common/length_scale.hpp"
#include "common/shifted_llt.hpp"
#include "common/quadratic_rows.hpp"
#include "common/sparse_natural.hpp"
#include "core/formulation.hpp"
#include "core/natural_coordinates.hpp"

namespace mbs {

inline constexpr double kProjectionPhiTol = 1e-14;   // x scale (m): |Phi|_inf at round-off
inline constexpr double kProjectionStepTol = 1e-8;   // x scale (m): a correction this small leaves ~1e-16 scale
inline constexpr int kProjectionMaxIterations = 10;
// Regularization of G M^-1 G^T (file comment): kSingularShift and kSingularDrop of
// common/shifted_llt.hpp.

// kSparse: G and S on fixed sparse patterns (dynamic sizes only), chosen once as a type, like the
// linear-solver seam's (common/linear_solver.hpp), so no operation branches on it.
template <int NQ, int NR, bool kSparse = false>
class KeptConstraints {
 public:
  static constexpr bool kDynamic = NQ == Eigen::Dynamic || NR == Eigen::Dynamic;
  static_assert(!kSparse || kDynamic, "the sparse path has dynamic sizes");
  using VecQ = Eigen::Matrix<double, kDynamic ? Eigen::Dynamic : NQ, 1>;
  using VecR = Eigen::Matrix<double, kDynamic ? Eigen::Dynamic : NR, 1>;
  using Jac = Eigen::Matrix<double, kDynamic ? Eigen::Dynamic : NR, kDynamic ? Eigen::Dynamic : NQ>;
  using MatR = Eigen::Matrix<double, kDynamic ? Eigen::Dynamic : NR, kDynamic ? Eigen::Dynamic : NR>;

  // nat: the caller's, which must outlive this. rows: the kept rows, ascending. stats: the
  // simulator's counters (Jacobian evaluations, projection iterations). who: the formulation's name,
  // for error messages.
  KeptConstraints(const NaturalCoordinates& nat, std::vector<int> rows, RunStats& stats, std::string who)
      : nat_(&nat), cf_(nat), stats_(&stats), who_(std::move(who)), n_q_(nat.nq()),
        n_r_(static_cast<int>(rows.size())), rows_(std::move(rows)), all_rows_(n_r_ == nat.nc()),
        Minv_(nat.M_diag().cwiseInverse()), Phi_all_(nat.nc()),
        G_all_(all_rows_ || kSparse ? 0 : nat.nc(), all_rows_ || kSparse ? 0 : n_q_), r_(n_r_), c_(n_r_), mu_(n_r_),
        rr_(n_r_), dq_(n_q_), G_(dense(n_r_), dense(n_q_)), GMi_(dense(n_r_), dense(n_q_)), schur_(dense(n_r_)),
        qb_(n_q_), vb_(n_q_),
        q_ref_(qb_), v_ref_(vb_) {
    if constexpr (kSparse) {
      G_sp_ = std::make_unique<SparseJacobian>(nat, rows_);
      S_sp_ = std::make_unique<SparseSchur>(*G_sp_);
    }
    const double scale = position_scale(nat.model());
    tol_Phi_ = kProjectionPhiTol * scale;
    tol_dq_ = kProjectionStepTol * scale;
    if (n_r_ > 1) {  // the pivot share at q0, from which a singular position is judged
      const long jacobian_evals = stats_->jacobian_evals;
      const Eigen::VectorXd q0 = nat.model().initial_q();
      qb_ = q0;  // a copy: move-assigning the temporary would swap qb_'s storage from under q_ref_
      jacobian();
      factor();
      stats_->jacobian_evals = jacobian_evals;
      if constexpr (kSparse) pivot_floor_ = kSingularDrop * S_sp_->pivot_ratio();
      else schur_.set_floor_from_current();
    }
  }
  KeptConstraints(const KeptConstraints&) = delete;
  KeptConstraints& operator=(const KeptConstraints&) = delete;

  int nq() const { return n_q_; }
  int kept_rows() const { return n_r_; }
  int dropped_rows() const { return nat_->nc() - n_r_; }
  const std::vector<int>& rows() const { return rows_; }
  static constexpr bool sparse() { return kSparse; }
  const VecQ& Minv() const { return Minv_; }  // M^-1 (1/kg)

  // The state the evaluations below use.
  template <typename Q>
  void load(const Q& q) { qb_ = q; }
  template <typename Q, typename V>
  void load(const Q& q, const V& v) {
    qb_ = q;
    vb_ = v;
  }
  const VecQ& q() const { return qb_; }
  const VecQ& v() const { return vb_; }
  const Eigen::Ref<const Eigen::VectorXd>& q_ref() const { return q_ref_; }
  const Eigen::Ref<const Eigen::VectorXd>& v_ref() const { return v_ref_; }

  // G = kept rows of Phi_q at the loaded q (dense_G() or sparse_G()), counted as a Jacobian
  // evaluation; evaluate_G() does the same uncounted (for methods that count factorizations).
  void jacobian() {
    ++stats_->jacobian_evals;
    evaluate_G();
  }
  void evaluate_G() {
    if constexpr (kSparse) {
      G_sp_->evaluate(q_ref_);
      return;
    }
    if constexpr (!kDynamic) {  // fixed sizes: the inline arithmetic on the fixed-size types
      cf_.Phi_q(qb_, G_);
      return;
    }
    if (all_rows()) {
      nat_->Phi_q(q_ref_, G_);
      return;
    }
    nat_->Phi_q(q_ref_, G_all_);
    for (int k = 0; k < n_r_; ++k) G_.row(k) = G_all_.row(rows_[k]);
  }
  const Jac& dense_G() const { return G_; }
  const SparseJacobian& sparse_G() const { return *G_sp_; }
  SparseJacobian& sparse_G() { return *G_sp_; }
  // r = kept rows of Phi at the loaded q.
  void constraints(VecR& r) {
    if constexpr (!kDynamic) {
      cf_.Phi(qb_, r);
      return;
    }
    if (all_rows()) {
      nat_->Phi(q_ref_, r);
      return;
    }
    nat_->Phi(q_ref_, Phi_all_);
    for (int k = 0; k < n_r_; ++k) r[k] = Phi_all_[rows_[k]];
  }
  // gamma = kept rows of d/dt(Phi_q) v at the loaded (q, v).
  void velocity_terms(VecR& gamma) {
    if constexpr (!kDynamic) {
      cf_.Phi_q_dot_v(qb_, vb_, gamma);
      return;
    }
    if (all_rows()) {
      nat_->Phi_q_dot_v(q_ref_, v_ref_, gamma);
      return;
    }
    nat_->Phi_q_dot_v(q_ref_, v_ref_, Phi_all_);
    for (int k = 0; k < n_r_; ++k) gamma[k] = Phi_all_[rows_[k]];
  }
  // lambda over every row of the model from the kept rows' (0 on the dropped rows).
  template <typename All>
  void scatter(const VecR& lambda, All& all) const {
    all.setZero();
    for (int k = 0; k < n_r_; ++k) all[rows_[k]] = lambda[k];
  }

  // S = G M^-1 G^T of the last jacobian(), factored (file comment: near-singular S is shifted).
  void factor() {
    if constexpr (kSparse) {
      if (!S_sp_->assemble_and_factorize(*G_sp_, Minv_, kSingularShift, pivot_floor_))
        throw SolverError(who_ + ": the sparse LDLT of G M^-1 G^T + delta I failed");
      return;
    }
    GMi_.noalias() = G_ * Minv_.asDiagonal();
    if constexpr (NR == 1) {
      s_inv_ = 1.0 / GMi_.row(0).dot(G_.row(0));
    } else {
      schur_.S().noalias() = GMi_ * G_.transpose();
      schur_.factor();
    }
  }
  // x = S^-1 b with the S of the last factor(): (S + delta I)^-1 b refined once against S.
  void solve(const VecR& b, VecR& x) {
    if constexpr (kSparse) {
      S_sp_->solve(b, x);
      return;
    }
    if constexpr (NR == 1) {
      x[0] = s_inv_ * b[0];
    } else {
      schur_.solve(b, x);
    }
  }
  // y = G x (x of size nq).
  template <typename X>
  void g_times(const X& x, VecR& y) const {
    if constexpr (kSparse) {
      y.noalias() = G_sp_->matrix() * x;
      return;
    }
    y.noalias() = G_ * x;
  }
  // y = G^T x.
  template <typename Y>
  void gt_times(const VecR& x, Y& y) const {
    if constexpr (kSparse) {
      y.noalias() = G_sp_->matrix().transpose() * x;
      return;
    }
    y.noalias() = G_.transpose() * x;
  }
  // y = M^-1 G^T x (after factor(), which forms G M^-1 on the dense path).
  void mi_gt_times(const VecR& x, VecQ& y) const {
    if constexpr (kSparse) {
      y.noalias() = G_sp_->matrix().transpose() * x;
      y.array() *= Minv_.array();
      return;
    }
    y.noalias() = GMi_.transpose() * x;
  }

  // y -= M^-1 G^T x (after factor()).
  template <typename Y>
  void sub_mi_gt_times(const VecR& x, Y&& y) {
    if constexpr (kSparse) {
      dq_.noalias() = G_sp_->matrix().transpose() * x;
      y -= Minv_.cwiseProduct(dq_);
      return;
    }
    y.noalias() -= GMi_.transpose() * x;
  }

  // Consistent accelerations and multipliers at the loaded (q, v) under the applied forces Q (file
  // comment): a = M^-1 (Q - G^T lambda) with G a = -gamma. Evaluates G and factors S.
  template <typename A>
  void accelerations(const VecQ& Q, A& a, VecR& lambda) {
    a = Minv_.cwiseProduct(Q);
    if (n_r_ == 0) return;
    jacobian();
    factor();
    velocity_terms(c_);
    g_times(a, rr_);
    c_ += rr_;
    solve(c_, lambda);
    sub_mi_gt_times(lambda, a);
    if (!a.allFinite() || !lambda.allFinite()) throw SolverError(who_ + ": non-finite consistent accelerations");
  }

  // Mass-orthogonal projection of q onto Phi(q) = 0 (Gauss-Newton, to round-off: |Phi|_inf <=
  // kProjectionPhiTol x scale, or right after a correction |dq|_inf <= kProjectionStepTol x scale,
  // the constraints being quadratic), at most kProjectionMaxIterations corrections, else SolverError.
  // Leaves q loaded. t only labels the error.
  template <typename Q>
  void project_positions(double t, Q&& q) {
    if (n_r_ == 0) return;
    qb_ = q;
    for (int it = 0;; ++it) {
      constraints(r_);
      const double residual = r_.cwiseAbs().maxCoeff();
      if (residual <= tol_Phi_) break;
      if (it == kProjectionMaxIterations || !std::isfinite(residual))
        throw SolverError(fmt::format("{}: the position projection did not converge at t = {:.9g} s ({} iterations, |Phi| = {:.3g} m)",
                                      who_, t, it, residual));
      jacobian();
      factor();
      solve(r_, mu_);
      mi_gt_times(mu_, dq_);
      q -= dq_;
      qb_ = q;
      ++stats_->newton_iterations;
      if (dq_.cwiseAbs().maxCoeff() <= tol_dq_) break;  // see kProjectionStepTol
    }
  }
  // Mass-orthogonal projection of v onto G v = 0 at the loaded q (one linear solve). Evaluates G
  // and factors S.
  template <typename V>
  void project_velocities(V&& v) {
    if (n_r_ == 0) return;
    jacobian();
    factor();
    g_times(v, c_);
    solve(c_, mu_);
    sub_mi_gt_times(mu_, v);
  }

 private:
  static int dense(int n) { return kSparse ? 0 : n; }  // dense matrices are empty on the sparse path
  // No row dropped (always so for the fixed sizes): Phi, Phi_q, gamma are evaluated in place.
  bool all_rows() const {
    if constexpr (kDynamic) return all_rows_;
    else return true;
  }

  const NaturalCoordinates* nat_;
  ConstraintFunctions<NQ, NR> cf_;  // the fixed sizes' rows as quadratics (every row kept there)
  RunStats* stats_;
  std::string who_;
  int n_q_, n_r_;
  std::vector<int> rows_;
  bool all_rows_;
  VecQ Minv_;
  Eigen::VectorXd Phi_all_;  // every row (only when rows are dropped)
  Eigen::MatrixXd G_all_;
  VecR r_, c_, mu_, rr_;
  VecQ dq_;
  Jac G_, GMi_;
  ShiftedLlt<MatR, VecR> schur_;  // S = G M^-1 G^T and its factor, shifted where near-singular
  double pivot_floor_ = 0.0;      // kSparse: kSingularDrop x S's pivot share at q0
  std::unique_ptr<SparseJacobian> G_sp_;  // kSparse: instead of G_, GMi_, schur_
  std::unique_ptr<SparseSchur> S_sp_;
  double tol_Phi_ = 0.0, tol_dq_ = 0.0;
  double s_inv_ = 0.0;  // 1 / (G M^-1 G^T) for one kept row
  VecQ qb_, vb_;        // the loaded state
  Eigen::Ref<const Eigen::VectorXd> q_ref_, v_ref_;  // bound to qb_, vb_ (so: never copied or moved)
};

}  // namespace mbs
