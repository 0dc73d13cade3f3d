// The equations of motion in the independent natural coordinates q_i of a partition (velocity
// transformation; Wehage & Haug 1982), for the explicit integrators of common/explicit_rk.hpp.
//
// State y = [q_i; v_i]. With R the kept constraint rows, Phi_d = Phi_q(R, q_d), Phi_i = Phi_q(R, q_i):
//   positions      Phi_R(q_i, q_d) = 0 for q_d, by Newton-Raphson
//   velocities     v_d = B v_i,  B = -Phi_d^-1 Phi_i                (Phi_R v = 0)
//   accelerations  a = [I; B] a_i + [0; c_d],  c_d = -Phi_d^-1 gamma_R,  gamma = d/dt(Phi_q) v
//                  (M_i + B^T M_d B) a_i = Q_i + B^T (Q_d - M_d c_d)
// The last line is R_v^T (M a - Q) = 0 with R_v = [I; B], which removes the multipliers: R_v spans
// the null space of Phi_q, so R_v^T Phi_q^T lambda = 0 whatever lambda is, redundant rows included.
// The dropped (redundant) rows are linear combinations of the kept ones, so positions, velocities and
// accelerations satisfying the kept rows satisfy them too; no multiplier is ever computed.
//
// NQ, NC, NR (coordinates, constraints, rank) are fixed for small models, so that the right-hand
// side runs on the stack; Eigen::Dynamic otherwise (sized once at construction).
#pragma once

#include <fmt/format.h>

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <limits>

#include "common/explicit_rk.hpp"
#include "common/fixed_segments.hpp"
#include "common/length_scale.hpp"
#include "core/formulation.hpp"
#include "core/natural_coordinates.hpp"
#include "common/quadratic_rows.hpp"
#include "common/partition.hpp"

namespace mbs::partitioned {

// Newton-Raphson on the dependent coordinates stops when |Phi_R|_inf <= kPhiTol x the model's length
// scale (the longest rod, a body's length scale or the largest initial coordinate, whichever is
// largest: far from the origin the rod vectors themselves lose digits), or right after a correction |dq_d|_inf <= kNewtonStep x the
// scale. Natural-coordinate constraints are quadratic in q, so the residual a correction dq leaves
// is exactly 1/2 Phi_qq[dq, dq] (|dq_a - dq_b|^2 / 2L for a rod), ~1e-12 of the scale after a 1e-6
// correction: the second test skips an evaluation of Phi that could only confirm convergence, and
// ends the iteration where round-off keeps |Phi| above the first.
inline constexpr double kPhiTol = 1e-12;
inline constexpr double kNewtonStep = 1e-6;
inline constexpr int kMaxNewtonIterations = 20;

template <int NQ, int NC, int NR>
class PartitionedOde {
 public:
  static constexpr bool kDynamic = NQ == Eigen::Dynamic || NR == Eigen::Dynamic;
  static constexpr int NI = kDynamic ? Eigen::Dynamic : NQ - NR;
  static constexpr int S = kDynamic ? Eigen::Dynamic : 2 * NI;
  using State = Eigen::Matrix<double, S, 1>;  // y = [q_i; v_i]
  using VecQ = Eigen::Matrix<double, NQ, 1>;
  using VecC = Eigen::Matrix<double, NC, 1>;
  using VecR = Eigen::Matrix<double, NR, 1>;
  using VecI = Eigen::Matrix<double, NI, 1>;
  using Jac = Eigen::Matrix<double, NC, NQ>;
  using MatD = Eigen::Matrix<double, NR, NR>;
  using MatB = Eigen::Matrix<double, NR, NI>;
  using MatI = Eigen::Matrix<double, NI, NI>;
  using IdxR = Eigen::Matrix<int, NR, 1>;
  using IdxI = Eigen::Matrix<int, NI, 1>;

  // stats: the simulator's counters, where Newton iterations and Jacobian evaluations are added.
  // rank: of Phi_q, fixed for the run (a change throws in the partition keeper).
  PartitionedOde(const Model& model, RunStats& stats, int rank)
      : nat_(model), stats_(&stats), n_q_(nat_.nq()), n_r_(rank), n_i_(n_q_ - rank), M_(nat_.M_diag()),
        Q_(nat_.Q()), q_(n_q_), v_(n_q_), q_anchor_(n_q_), Phi_(nat_.nc()), gamma_(nat_.nc()), Phi_q_(nat_.nc(), n_q_),
        rows_(n_r_), dep_(n_r_), ind_(n_i_), M_d_(n_r_), Q_d_(n_r_), M_i_(n_i_), Q_i_(n_i_), Phi_R_(n_r_),
        dq_d_(n_r_), w_d_(n_r_), f_d_(n_r_), dq_i_(n_i_), Q_bar_(n_i_), Phi_d_(n_r_, n_r_), Phi_i_(n_r_, n_i_),
        B_(n_r_, n_i_), MB_(n_r_, n_i_), B_anchor_(n_r_, n_i_), M_bar_(n_i_, n_i_), lu_(n_r_), llt_(n_i_) {
    double scale = max_model_length(model);
    if (!(scale > 0.0)) scale = 0.0;
    const Eigen::VectorXd q0 = model.initial_q();
    if (q0.size() > 0) scale = std::max(scale, q0.cwiseAbs().maxCoeff());
    if (!(scale > 0.0)) scale = 1.0;
    tol_Phi_ = kPhiTol * scale;
    tol_dq_ = kNewtonStep * scale;
  }

  const char* name() const { return "partitioned"; }
  int size() const { return 2 * n_i_; }
  void initial_full_state(VecQ& q, VecQ& v) const {
    q = nat_.model().initial_q();
    v = nat_.model().initial_v();
  }

  void rhs(double t, const State& y, State& dydt) {
    coordinates(t, y);
    // w_d = Phi_d^-1 gamma_R = -c_d, so Q_d - M_d c_d = Q_d + M_d w_d.
    cf_.Phi_q_dot_v(q_, v_, gamma_);
    if (nat_.has_force_elements()) {  // Q(q, v): split again at this state
      nat_.Q(q_, v_, Q_);
      for (int k = 0; k < n_r_; ++k) Q_d_[k] = Q_[dep_[k]];
      for (int k = 0; k < n_i_; ++k) Q_i_[k] = Q_[ind_[k]];
    }
    for (int k = 0; k < n_r_; ++k) f_d_[k] = gamma_[rows_[k]];
    if (n_r_ > 0) w_d_.noalias() = lu_.solve(f_d_);
    f_d_ = Q_d_ + M_d_.cwiseProduct(w_d_);
    Q_bar_ = Q_i_;
    Q_bar_.noalias() += B_.transpose() * f_d_;
    MB_.noalias() = M_d_.asDiagonal() * B_;
    M_bar_.noalias() = B_.transpose() * MB_;
    M_bar_.diagonal() += M_i_;
    llt_.compute(M_bar_);
    head(dydt) = tail(y);
    tail(dydt).noalias() = llt_.solve(Q_bar_);
  }

  // Uses partition p from the consistent natural state (q, v): the reduced state y, the Newton
  // start and the tangent predictor B are set from it. Returns the conditioning of the new Phi_d
  // (see pivot_ratio()).
  double set_partition(const Partition& p, const VecQ& q, const VecQ& v, State& y) {
    for (int k = 0; k < n_r_; ++k) rows_[k] = p.rows[k], dep_[k] = p.dependent[k];
    for (int k = 0; k < n_i_; ++k) ind_[k] = p.independent[k];
    for (int k = 0; k < n_r_; ++k) M_d_[k] = M_[dep_[k]], Q_d_[k] = Q_[dep_[k]];
    for (int k = 0; k < n_i_; ++k) M_i_[k] = M_[ind_[k]], Q_i_[k] = Q_[ind_[k]];
    q_ = q;
    v_ = v;
    for (int k = 0; k < n_i_; ++k) y[k] = q[ind_[k]], y[n_i_ + k] = v[ind_[k]];
    cf_.Phi_q(q_, Phi_q_);
    factor();
    update_ratio();
    tangent();
    ++stats_->jacobian_evals;
    anchor();
    return ratio_;
  }

  // Where Newton-Raphson starts again after it failed (it then throws StageFailure, and an
  // adaptive integrator retries the step shorter): the solution of the last right-hand side when
  // this was called, by the simulator after each accepted step and by set_partition. Without it
  // the retry would start from the failed stage's neighbour, a step away, and fail again.
  void anchor() {
    q_anchor_ = q_;
    B_anchor_ = B_;
  }

  // The natural state for y, into q(), v() (Newton-Raphson on q_d from the last solution), with
  // Phi_q() and the factored Phi_d at it.
  void full_state(double t, const State& y) { coordinates(t, y); }
  void model_state_at(double t, const State& y, Eigen::VectorXd& q, Eigen::VectorXd& v) {
    coordinates(t, y);
    q = q_;
    v = v_;
  }
  const VecQ& q() const { return q_; }
  const VecQ& v() const { return v_; }
  const Jac& Phi_q() const { return Phi_q_; }  // at q()

  // Conditioning of Phi_d: min |pivot| of its LU over max |Phi_q| (the largest pivot a full-pivoting
  // LU of Phi_q could take), at q(). 1 when q_d are the best-placed coordinates, -> 0 when singular.
  double pivot_ratio() const { return ratio_; }
  // The smallest pivot_ratio() met by any right-hand side since the last call (then reset).
  double take_min_pivot_ratio() {
    const double r = min_ratio_;
    min_ratio_ = std::numeric_limits<double>::infinity();
    return r;
  }

 private:
  // q, v and the factored Phi_d, B at y.
  void coordinates(double t, const State& y) {
    // Tangent predictor: q_d moves by B dq_i to first order, which leaves Newton an O(dq_i^2) error.
    for (int k = 0; k < n_i_; ++k) dq_i_[k] = y[k] - q_[ind_[k]], q_[ind_[k]] = y[k];
    dq_d_.noalias() = B_ * dq_i_;
    for (int k = 0; k < n_r_; ++k) q_[dep_[k]] += dq_d_[k];
    positions(t);
    tangent();
    min_ratio_ = std::min(min_ratio_, ratio_);
    for (int k = 0; k < n_i_; ++k) v_[ind_[k]] = y[n_i_ + k];
    dq_d_.noalias() = B_ * tail(y);
    for (int k = 0; k < n_r_; ++k) v_[dep_[k]] = dq_d_[k];
  }

  // Newton-Raphson on Phi_R(q) = 0 for q_d; leaves Phi_q, its factored Phi_d and pivot_ratio() at
  // the solution.
  void positions(double t) {
    for (int it = 0;; ++it) {
      cf_.Phi(q_, Phi_);
      for (int k = 0; k < n_r_; ++k) Phi_R_[k] = Phi_[rows_[k]];
      const double residual = n_r_ == 0 ? 0.0 : Phi_R_.cwiseAbs().maxCoeff();
      if (residual <= tol_Phi_) break;
      if (it == kMaxNewtonIterations || !std::isfinite(residual)) {
        update_ratio();
        q_ = q_anchor_, B_ = B_anchor_;  // the retry starts from the accepted state, not from here
        throw StageFailure(fmt::format(
            "partitioned: Newton-Raphson on the dependent coordinates did not converge at t = {:.9g} s "
            "({} iterations, |Phi| = {:.3g} m, Phi_d pivot ratio {:.3g})",
            t, it, residual, ratio_));
      }
      cf_.Phi_q(q_, Phi_q_);
      factor();
      ++stats_->jacobian_evals;
      dq_d_.noalias() = lu_.solve(Phi_R_);
      for (int k = 0; k < n_r_; ++k) q_[dep_[k]] -= dq_d_[k];
      ++stats_->newton_iterations;
      if (dq_d_.cwiseAbs().maxCoeff() <= tol_dq_) break;  // see kNewtonStep
    }
    cf_.Phi_q(q_, Phi_q_);
    factor();
    ++stats_->jacobian_evals;
    update_ratio();
    if (!(ratio_ > kRankThreshold))
      throw SolverError(fmt::format(
          "partitioned: Phi_d is singular at t = {:.9g} s (pivot ratio {:.3g} <= {:.0e}): the mechanism is "
          "at a singular configuration, or the step is too large for the partition",
          t, ratio_, kRankThreshold));
  }

  // Gathers Phi_d, Phi_i from Phi_q and factors Phi_d.
  void factor() {
    for (int a = 0; a < n_r_; ++a) {
      for (int b = 0; b < n_r_; ++b) Phi_d_(a, b) = Phi_q_(rows_[a], dep_[b]);
      for (int b = 0; b < n_i_; ++b) Phi_i_(a, b) = Phi_q_(rows_[a], ind_[b]);
    }
    if (n_r_ > 0) lu_.compute(Phi_d_);
  }

  // pivot_ratio() of the factored Phi_d.
  void update_ratio() {
    const double largest = n_r_ == 0 ? 0.0 : Phi_q_.cwiseAbs().maxCoeff();
    ratio_ = n_r_ == 0 ? 1.0 : largest > 0.0 ? lu_.matrixLU().diagonal().cwiseAbs().minCoeff() / largest : 0.0;
  }

  // y = [q_i; v_i]: fixed-size segments when the sizes are fixed.
  template <typename V>
  auto head(V& y) const { return head_of<NI>(y, n_i_); }
  template <typename V>
  auto tail(V& y) const { return tail_of<NI>(y, n_i_); }

  // B = -Phi_d^-1 Phi_i from the factored Phi_d.
  void tangent() {
    if (n_r_ == 0) return;
    B_.noalias() = lu_.solve(Phi_i_);
    B_ = -B_;
  }

  NaturalCoordinates nat_;
  ConstraintFunctions<NQ, NC> cf_{nat_};  // Phi, Phi_q, ...: explicit quadratics at fixed sizes
  RunStats* stats_;
  int n_q_, n_r_, n_i_;
  VecQ M_, Q_;            // mass diagonal (kg), applied forces (N)
  VecQ q_, v_;            // natural state at the last y
  VecQ q_anchor_;         // q_ and B_ at anchor(), where a failed Newton-Raphson leaves them
  VecC Phi_, gamma_;      // Phi(q), d/dt(Phi_q) v
  Jac Phi_q_;
  IdxR rows_, dep_;       // kept rows, dependent coordinates
  IdxI ind_;              // independent coordinates
  VecR M_d_, Q_d_;        // M and Q on q_d
  VecI M_i_, Q_i_;        // and on q_i
  VecR Phi_R_, dq_d_, w_d_, f_d_;
  VecI dq_i_, Q_bar_;
  MatD Phi_d_;
  MatB Phi_i_, B_, MB_;   // Phi_q(R, q_i); B = -Phi_d^-1 Phi_i; M_d B
  MatB B_anchor_;
  MatI M_bar_;            // M_i + B^T M_d B
  Eigen::PartialPivLU<MatD> lu_;
  Eigen::LLT<MatI> llt_;
  double tol_Phi_ = 0.0, tol_dq_ = 0.0;  // Newton's stopping tests (m)
  double ratio_ = 1.0, min_ratio_ = std::numeric_limits<double>::infinity();
};

}  // namespace mbs::partitioned
