// The index-1 (acceleration-level) equations of motion in natural coordinates, as an ODE in
// y = [q; v] for the explicit integrators of common/explicit_rk.hpp, and the mass-orthogonal
// projection of a state onto the position and velocity constraints.
//
// With G = Phi_q(q) (the kept, independent rows), gamma = d/dt(Phi_q) v and M diagonal:
//   M a + G^T lambda = Q,   G a = -gamma
// reduces exactly to its Schur complement (M^-1 is a vector)
//   (G M^-1 G^T) lambda = G M^-1 Q + gamma,   a = M^-1 Q - M^-1 G^T lambda,
// an LLT of the kept rows' nr x nr matrix per right-hand side.
//
// Projection (after an accepted step, ProjectionOde::project):
//   positions   Gauss-Newton, q -= M^-1 G^T (G M^-1 G^T)^-1 Phi(q), G at the current q, until
//               |Phi|_inf <= kPhiTol x scale, or right after a correction |dq|_inf <= kStepTol x
//               scale (constraints are quadratic: the residual it leaves is ~|dq|^2 / L, round-off);
//               at most kMaxProjectionIterations corrections, else SolverError.
//   velocities  v -= M^-1 G^T (G M^-1 G^T)^-1 G v with G at the projected q (one linear solve).
// Both are the minimizers of the kinetic-energy metric |dq|_M, |dv|_M subject to the constraints.
//
// Baumgarte stabilization (set_baumgarte; Baumgarte 1972): G a = -gamma - 2 alpha G v - beta^2 Phi
// instead of -gamma, i.e. Phi'' + 2 alpha Phi' + beta^2 Phi = 0 along the motion, so that a drift of
// the constraints decays instead of growing (formulation "baumgarte", without projection).
//
// Redundant constraints: only the rows chosen once at setup (common/independent_rows.hpp, a pivoted
// QR of Phi_q^T at q0) enter G; the dropped ones are combinations of the kept ones, so they hold too.
//
// Singular positions (Phi_q losing rank along the motion, e.g. the N-four-bar with every crank
// horizontal): N eigenvalues s of S = G M^-1 G^T vanish there like the squared distance to the
// singular position, and the components of the right-hand side along them carry the state's
// inconsistency e (an RK stage is off the constraints by the step's error; a projected state by
// round-off amplified by 1/s in the velocity projection). The multipliers along them are then
// e / s and the accelerations they drive e / sqrt(s): on the N-four-bar a step that landed close to
// the singular position computed accelerations far beyond the motion's and an energy jump
// (docs/formulations.md, Method notes). So every factorization
// is of S + delta I, delta = kSingularShift x the largest diagonal entry of S, and every solve is
// refined once against S itself (iterated Tikhonov), wherever S is near-singular. Near-singular is
// relative to the start: the smallest Cholesky pivot's share of its row's diagonal (the sine
// squared of the angle between a row and those before it, in the M^-1 metric) has fallen below
// kSingularDrop times its value at q0. Elsewhere S is factored as it is, so that regular mechanisms
// keep exact multipliers: an always-on shift cost a driven slider-crank its 8th-order energy
// balance and a spinning regulator with thin bodies its angular momentum (Method notes); the
// latter's S has a tiny pivot share all along (a body's small second moment dominates the
// metric), not a singular position, so a fixed threshold cannot tell the two apart. The filter 1 - (delta / (s + delta))^2 leaves
// modes with s >> delta exact to (delta / s)^2 relative (1e-10 for the N-four-bar's softest mode
// away from singular positions; ~1e-14 on the small problems) and caps the accelerations of the
// vanishing modes at ~e / sqrt(delta). The position projection becomes a Levenberg-Marquardt step.
// kSingularShift was chosen by the energy error after the worst crossing of the N-four-bar
// (docs/formulations.md, Method notes): smaller shifts leave larger jumps, larger ones lose the
// constraint forces the vanishing modes do need. One kept row (the pendulum) cannot become singular
// and is solved exactly.
//
// Large models (common/sparse_natural.hpp): G as a fixed-pattern sparse matrix of the kept rows, and
// G M^-1 G^T assembled on its pattern and factored by a sparse LDLT (AMD order fixed at setup), with
// the same regularization.
//
// NQ, NR (coordinates, kept rows) are fixed for the smallest models (all rows kept), Eigen::Dynamic
// otherwise; everything is sized in the constructor, rhs() and project() allocate nothing.
#pragma once

#include <fmt/format.h>

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <vector>

#include "common/length_scale.hpp"
#include "common/explicit_rk.hpp"
#include "common/sparse_natural.hpp"
#include "core/formulation.hpp"
#include "core/natural_coordinates.hpp"

namespace mbs::projection {

inline constexpr double kPhiTol = 1e-14;   // x scale (m): |Phi|_inf at round-off
inline constexpr double kStepTol = 1e-8;   // x scale (m): a correction this small leaves ~1e-16 scale
inline constexpr int kMaxProjectionIterations = 10;
// Regularization of G M^-1 G^T (file comment): the shift, relative to its largest diagonal entry,
// taken only where the smallest pivot share fell below kSingularDrop times its value at q0.
inline constexpr double kSingularShift = 1e-8;
inline constexpr double kSingularDrop = 1e-3;

// kBaumgarte: with Baumgarte's feedback (set_baumgarte), compiled out of the plain equations.
template <int NQ, int NR, bool kBaumgarte = false>
class ProjectionOde {
 public:
  static constexpr bool kDynamic = NQ == Eigen::Dynamic || NR == Eigen::Dynamic;
  static constexpr int S = kDynamic ? Eigen::Dynamic : 2 * NQ;
  using State = Eigen::Matrix<double, S, 1>;  // y = [q; v]
  using VecQ = Eigen::Matrix<double, kDynamic ? Eigen::Dynamic : NQ, 1>;
  using VecR = Eigen::Matrix<double, kDynamic ? Eigen::Dynamic : NR, 1>;
  using Jac = Eigen::Matrix<double, kDynamic ? Eigen::Dynamic : NR, kDynamic ? Eigen::Dynamic : NQ>;
  using MatR = Eigen::Matrix<double, kDynamic ? Eigen::Dynamic : NR, kDynamic ? Eigen::Dynamic : NR>;

  // rows: the kept (independent) constraint rows, ascending. stats: the simulator's counters, where
  // projection iterations and Jacobian evaluations are added.
  ProjectionOde(const Model& model, std::vector<int> rows, RunStats& stats, bool sparse = false)
      : nat_(model), stats_(&stats), sparse_(sparse), n_q_(nat_.nq()), n_r_(static_cast<int>(rows.size())),
        rows_(std::move(rows)), all_rows_(n_r_ == nat_.nc()), Minv_(nat_.M_diag().cwiseInverse()), Q_(nat_.Q()),
        MiQ_(n_q_), dq_(n_q_), Phi_all_(nat_.nc()),
        G_all_(all_rows_ || sparse ? 0 : nat_.nc(), all_rows_ || sparse ? 0 : n_q_), r_(n_r_), gamma_(n_r_),
        c_(n_r_), lambda_(n_r_), rr_(n_r_), dl_(n_r_), G_(dense(n_r_), dense(n_q_)), GMi_(dense(n_r_), dense(n_q_)),
        S_(dense(n_r_), dense(n_r_)), S_reg_(dense(n_r_), dense(n_r_)), llt_(dense(n_r_)),
        q0_(model.initial_q()), v0_(model.initial_v()), qb_(n_q_), vb_(n_q_), q_ref_(qb_), v_ref_(vb_) {
    if constexpr (kDynamic) {
      if (sparse_) {
        G_sp_ = std::make_unique<SparseJacobian>(nat_, rows_);
        S_sp_ = std::make_unique<SparseSchur>(*G_sp_);
      }
    }
    double scale = max_model_length(model);
    if (!(scale > 0.0)) scale = 0.0;
    const Eigen::VectorXd q0 = model.initial_q();
    if (q0.size() > 0) scale = std::max(scale, q0.cwiseAbs().maxCoeff());
    if (!(scale > 0.0)) scale = 1.0;
    tol_Phi_ = kPhiTol * scale;
    tol_dq_ = kStepTol * scale;
    if (n_r_ > 1) {  // the pivot share at q0, from which a singular position is judged
      const long jacobian_evals = stats_->jacobian_evals;
      qb_ = q0_;
      jacobian();
      factor();
      stats_->jacobian_evals = jacobian_evals;
      pivot_floor_ = kSingularDrop * (sparse_ ? S_sp_->pivot_ratio() : pivot_ratio_);
    }
  }

  ProjectionOde(const ProjectionOde&) = delete;
  ProjectionOde& operator=(const ProjectionOde&) = delete;

  int size() const { return 2 * n_q_; }
  int kept_rows() const { return n_r_; }
  int dropped_rows() const { return nat_.nc() - n_r_; }
  bool sparse() const { return sparse_; }

  // Baumgarte's feedback rates (1/s), used where kBaumgarte; 0, 0 (the default): none.
  void set_baumgarte(double alpha, double beta) {
    two_alpha_ = 2.0 * alpha;
    beta2_ = beta * beta;
  }

  void initial_state(State& y) const {
    q(y) = q0_;
    v(y) = v0_;
  }
  void model_state(const State& y, Eigen::VectorXd& q_out, Eigen::VectorXd& v_out) const {
    q_out = q(y);
    v_out = v(y);
  }

  // dy/dt = [v; a] from the index-1 equations (file comment).
  void rhs(double /*t*/, const State& y, State& dydt) {
    qb_ = q(y);
    vb_ = v(y);
    const VecQ& Qf = applied_forces();
    MiQ_ = Minv_.cwiseProduct(Qf);
    q(dydt) = vb_;
    if (n_r_ == 0) {
      v(dydt) = MiQ_;
      return;
    }
    jacobian();
    velocity_terms();  // gamma_
    factor();
    g_times(MiQ_, c_);
    c_ += gamma_;
    if constexpr (kBaumgarte) {
      g_times(vb_, dl_);  // Phi' = G v
      constraints();      // r_ = Phi
      c_ += two_alpha_ * dl_ + beta2_ * r_;
    }
    solve(c_, lambda_);
    auto a = v(dydt);
    a = MiQ_;
    if constexpr (kDynamic) {
      if (sparse_) {
        dq_.noalias() = G_sp_->matrix().transpose() * lambda_;
        a -= Minv_.cwiseProduct(dq_);
        return;
      }
    }
    a.noalias() -= GMi_.transpose() * lambda_;
  }

  // Mass-orthogonal projection of y onto Phi(q) = 0, then onto Phi_q v = 0 (file comment).
  void project(double t, State& y) {
    if (n_r_ == 0) return;
    auto qy = q(y);
    auto vy = v(y);
    qb_ = qy;
    for (int it = 0;; ++it) {
      constraints();  // r_
      const double residual = r_.cwiseAbs().maxCoeff();
      if (residual <= tol_Phi_) break;
      if (it == kMaxProjectionIterations || !std::isfinite(residual))
        throw SolverError(fmt::format(
            "projection: the position projection did not converge at t = {:.9g} s ({} iterations, |Phi| = {:.3g} m)",
            t, it, residual));
      jacobian();
      factor();
      solve(r_, lambda_);
      mi_gt_times(lambda_, dq_);
      qy -= dq_;
      qb_ = qy;
      ++stats_->newton_iterations;
      if (dq_.cwiseAbs().maxCoeff() <= tol_dq_) break;  // see kStepTol
    }
    jacobian();
    factor();
    if constexpr (kDynamic) {
      if (sparse_) {
        c_.noalias() = G_sp_->matrix() * vy;
        solve(c_, lambda_);
        mi_gt_times(lambda_, dq_);
        vy -= dq_;
        return;
      }
    }
    c_.noalias() = G_ * vy;
    solve(c_, lambda_);
    vy.noalias() -= GMi_.transpose() * lambda_;
  }

 private:
  // The applied force Q(q, v) (N) at the loaded state qb_, vb_: gravity's constant Q0 = M g alone,
  // or with the force elements' Q(q, v). The one place where forces are evaluated.
  const VecQ& applied_forces() {
    if (nat_.has_force_elements()) nat_.Q(qb_, vb_, Q_);
    return Q_;
  }

  // The helpers below evaluate at the loaded state qb_ (and vb_), through the prebuilt references
  // q_ref_, v_ref_: binding a Ref<const VectorXd> per call costs a construction and a free(nullptr).
  // G_ = kept rows of Phi_q(q).
  void jacobian() {
    ++stats_->jacobian_evals;
    if constexpr (kDynamic) {
      if (sparse_) {
        G_sp_->evaluate(q_ref_);
        return;
      }
    }
    if (all_rows()) {
      nat_.Phi_q(q_ref_, G_);
      return;
    }
    nat_.Phi_q(q_ref_, G_all_);
    for (int k = 0; k < n_r_; ++k) G_.row(k) = G_all_.row(rows_[k]);
  }
  // gamma_ = kept rows of d/dt(Phi_q) v.
  void velocity_terms() {
    if (all_rows()) {
      nat_.Phi_q_dot_v(q_ref_, v_ref_, gamma_);
      return;
    }
    nat_.Phi_q_dot_v(q_ref_, v_ref_, Phi_all_);
    for (int k = 0; k < n_r_; ++k) gamma_[k] = Phi_all_[rows_[k]];
  }
  // r_ = kept rows of Phi(q).
  void constraints() {
    if (all_rows()) {
      nat_.Phi(q_ref_, r_);
      return;
    }
    nat_.Phi(q_ref_, Phi_all_);
    for (int k = 0; k < n_r_; ++k) r_[k] = Phi_all_[rows_[k]];
  }
  // GMi_ = G M^-1, S = G M^-1 G^T, and S + delta I factored (one kept row: S is the scalar
  // G M^-1 G^T, exact); see "Singular positions" in the file comment.
  void factor() {
    if constexpr (kDynamic) {
      if (sparse_) {
        if (!S_sp_->assemble_and_factorize(*G_sp_, Minv_, kSingularShift, pivot_floor_))
          throw SolverError("projection: the sparse LDLT of G M^-1 G^T + delta I failed");
        return;
      }
    }
    GMi_.noalias() = G_ * Minv_.asDiagonal();
    if constexpr (NR == 1) {
      s_inv_ = 1.0 / GMi_.row(0).dot(G_.row(0));
    } else {
      S_.noalias() = GMi_ * G_.transpose();
      // Cholesky pivots L_kk^2 against the diagonal: a row nearly dependent on those before it.
      llt_.compute(S_);
      pivot_ratio_ = llt_.info() != Eigen::Success
                         ? 0.0
                         : (llt_.matrixLLT().diagonal().array().square() / S_.diagonal().array()).minCoeff();
      shifted_ = pivot_ratio_ < pivot_floor_;
      if (!shifted_ || n_r_ == 0) return;
      S_reg_ = S_;
      S_reg_.diagonal().array() += kSingularShift * S_.diagonal().cwiseAbs().maxCoeff();
      llt_.compute(S_reg_);
    }
  }
  // x = S^-1 b with the S of the last factor(): (S + delta I)^-1 b refined once against S.
  void solve(const VecR& b, VecR& x) {
    if constexpr (kDynamic) {
      if (sparse_) {
        S_sp_->solve(b, x);
        return;
      }
    }
    if constexpr (NR == 1) {
      x[0] = s_inv_ * b[0];
    } else {
      x = llt_.solve(b);
      if (!shifted_) return;
      rr_ = b;
      rr_.noalias() -= S_ * x;
      dl_ = llt_.solve(rr_);
      x += dl_;
    }
  }
  // y = G x (x of size nq).
  void g_times(const VecQ& x, VecR& y) const {
    if constexpr (kDynamic) {
      if (sparse_) {
        y.noalias() = G_sp_->matrix() * x;
        return;
      }
    }
    y.noalias() = G_ * x;
  }
  // y = M^-1 G^T x.
  void mi_gt_times(const VecR& x, VecQ& y) const {
    if constexpr (kDynamic) {
      if (sparse_) {
        y.noalias() = G_sp_->matrix().transpose() * x;
        y.array() *= Minv_.array();
        return;
      }
    }
    y.noalias() = GMi_.transpose() * x;
  }
  int dense(int n) const { return sparse_ ? 0 : n; }  // dense matrices are empty on the sparse path
  // No row dropped (always so for the fixed sizes): Phi, Phi_q, gamma are evaluated in place.
  bool all_rows() const {
    if constexpr (kDynamic) return all_rows_;
    else return true;
  }

  template <typename Y>
  auto q(Y& y) const {
    if constexpr (kDynamic) return y.head(n_q_);
    else return y.template head<NQ>();
  }
  template <typename Y>
  auto v(Y& y) const {
    if constexpr (kDynamic) return y.tail(n_q_);
    else return y.template tail<NQ>();
  }

  NaturalCoordinates nat_;
  RunStats* stats_;
  bool sparse_ = false;      // G_sp_, S_sp_ instead of G_, GMi_, S_, llt_
  int n_q_, n_r_;
  std::vector<int> rows_;
  bool all_rows_;            // no row dropped: Phi, Phi_q, gamma are evaluated in place
  VecQ Minv_, Q_, MiQ_, dq_; // M^-1 (1/kg), applied forces (N), M^-1 Q, position correction
  Eigen::VectorXd Phi_all_;  // every row (only when rows are dropped)
  Eigen::MatrixXd G_all_;
  VecR r_, gamma_, c_, lambda_, rr_, dl_;
  Jac G_, GMi_;
  MatR S_, S_reg_;           // G M^-1 G^T, and S + delta I (factored when shifted_)
  bool shifted_ = false;     // the last factor() met a near-singular S and factored S + delta I
  double pivot_ratio_ = 0.0; // smallest pivot share of the last factor() (file comment)
  double pivot_floor_ = 0.0; // kSingularDrop x its value at q0: below it, S is near-singular
  Eigen::LLT<MatR> llt_;
  std::unique_ptr<SparseJacobian> G_sp_;
  std::unique_ptr<SparseSchur> S_sp_;
  double tol_Phi_ = 0.0, tol_dq_ = 0.0;
  double s_inv_ = 0.0;  // 1 / (G M^-1 G^T) for one kept row
  double two_alpha_ = 0.0, beta2_ = 0.0;  // Baumgarte: 2 alpha (1/s), beta^2 (1/s^2)
  VecQ q0_, v0_;        // the model's initial state (Model::initial_q() builds a new vector)
  VecQ qb_, vb_;        // the state the helpers evaluate at
  Eigen::Ref<const Eigen::VectorXd> q_ref_, v_ref_;  // bound to qb_, vb_ (so: never copied or moved)
};

// Fixed-step explicit Runge-Kutta with the propagating weights b of a Butcher table (e.g. the
// 8th-order weights of ARKODE's Fehlberg 8(7) table at a fixed step); no error estimate. All stages
// are evaluated at every step (no FSAL reuse: Fehlberg 8(7) is not FSAL).
template <class Ode>
class FixedButcherRk {
 public:
  using State = typename Ode::State;
  FixedButcherRk(Ode& ode, const ButcherTable& table)
      : ode_(ode), tab_(table), k_(table.stages, State::Zero(ode.size())), ytmp_(ode.size()) {}

  void step(double t, double h, State& y, RunStats& stats) {
    const int s = tab_.stages;
    ode_.rhs(t, y, k_[0]);
    for (int i = 1; i < s; ++i) {
      ytmp_ = y;
      for (int j = 0; j < i; ++j) {
        const double a = tab_.A[i * s + j];
        if (a != 0.0) ytmp_ += (h * a) * k_[j];
      }
      ode_.rhs(t + tab_.c[i] * h, ytmp_, k_[i]);
    }
    for (int i = 0; i < s; ++i)
      if (tab_.b[i] != 0.0) y += (h * tab_.b[i]) * k_[i];
    stats.rhs_evals += s;
  }

 private:
  Ode& ode_;
  ButcherTable tab_;
  std::vector<State> k_;
  State ytmp_;
};

}  // namespace mbs::projection
