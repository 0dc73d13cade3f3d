// The coordinates of a partitioned ODE (Wehage & Haug 1982), shared by `partitioned` (natural
// coordinates) and `joint-partitioned` (a spanning tree's joint coordinates): the full state (q, v)
// recovered from y = [q_i; v_i] in a partition (common/partition.hpp) of the kept constraint rows R,
//   positions   Phi_R(q_i, q_d) = 0 for q_d by Newton-Raphson, from the last solution moved along
//               the tangent (q_d += B dq_i, which leaves Newton an O(dq_i^2) error)
//   velocities  v_d = B v_i,  B = -Phi_d^-1 Phi_i                       (Phi_R v = 0)
// with Phi_d factored and its conditioning (the pivot ratio) tracked for the re-partition rule
// (common/partition_keeper.hpp). The constraints are the formulation's, through Rows:
//   void Phi(const VecQ& q, VecC& Phi);                     // every row
//   void Phi_q(const VecQ& q, bool after_Phi, Jac& Phi_q);  // after_Phi: Phi was last evaluated at this q
// NQ, NC, NR (coordinates, rows, rank) are fixed for small models, Eigen::Dynamic otherwise; sized
// once at construction, nothing allocates after it.
#pragma once

#include <fmt/format.h>

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <limits>

#include "common/explicit_rk.hpp"
#include "common/fixed_segments.hpp"
#include "common/partition.hpp"
#include "core/formulation.hpp"

namespace mbs {

inline constexpr int kPartitionMaxNewtonIterations = 20;

template <int NQ, int NC, int NR>
class PartitionedCoordinates {
 public:
  static constexpr bool kDynamic = NQ == Eigen::Dynamic || NR == Eigen::Dynamic;
  static constexpr int NI = kDynamic ? Eigen::Dynamic : NQ - NR;
  using VecQ = Eigen::Matrix<double, NQ, 1>;
  using VecC = Eigen::Matrix<double, NC, 1>;
  using VecR = Eigen::Matrix<double, NR, 1>;
  using VecI = Eigen::Matrix<double, NI, 1>;
  using Jac = Eigen::Matrix<double, NC, NQ>;
  using MatD = Eigen::Matrix<double, NR, NR>;
  using MatB = Eigen::Matrix<double, NR, NI>;
  using IdxR = Eigen::Matrix<int, NR, 1>;
  using IdxI = Eigen::Matrix<int, NI, 1>;

  // name: the formulation, for errors. Newton stops at |Phi_R|_inf <= tol_Phi, or right after a
  // correction |dq_d|_inf <= tol_dq. stats: where Newton iterations and Jacobians are counted.
  PartitionedCoordinates(const char* name, int nq, int nc, int rank, double tol_Phi, double tol_dq, RunStats& stats)
      : name_(name), stats_(&stats), n_r_(rank), n_i_(nq - rank), tol_Phi_(tol_Phi), tol_dq_(tol_dq), q_(nq), v_(nq),
        q_anchor_(nq), Phi_(nc), Phi_q_(nc, nq), rows_(n_r_), dep_(n_r_), ind_(n_i_), Phi_R_(n_r_), dq_d_(n_r_),
        dq_i_(n_i_), Phi_d_(n_r_, n_r_), Phi_i_(n_r_, n_i_), B_(n_r_, n_i_), B_anchor_(n_r_, n_i_), lu_(n_r_) {}

  int n_r() const { return n_r_; }
  int n_i() const { return n_i_; }
  const IdxR& rows() const { return rows_; }       // kept rows
  const IdxR& dependent() const { return dep_; }   // q_d
  const IdxI& independent() const { return ind_; } // q_i
  const VecQ& q() const { return q_; }
  const VecQ& v() const { return v_; }
  const Jac& Phi_q() const { return Phi_q_; }      // at q()
  const MatB& B() const { return B_; }
  const Eigen::PartialPivLU<MatD>& lu() const { return lu_; }  // Phi_d factored

  // Uses partition p from the consistent state (q, v): y, the Newton start and the tangent B are
  // set from it. Returns the conditioning of the new Phi_d (pivot_ratio()).
  template <class Rows, class State>
  double set_partition(const Partition& p, Rows& rows, const VecQ& q, const VecQ& v, State& y) {
    for (int k = 0; k < n_r_; ++k) rows_[k] = p.rows[k], dep_[k] = p.dependent[k];
    for (int k = 0; k < n_i_; ++k) ind_[k] = p.independent[k];
    q_ = q;
    v_ = v;
    for (int k = 0; k < n_i_; ++k) y[k] = q[ind_[k]], y[n_i_ + k] = v[ind_[k]];
    rows.Phi_q(q_, false, Phi_q_);
    factor();
    update_ratio();
    tangent();
    ++stats_->jacobian_evals;
    anchor();
    return ratio_;
  }

  // Where Newton-Raphson starts again after it failed (it then throws StageFailure, and an adaptive
  // integrator retries the step shorter): the solution of the last right-hand side when this was
  // called, after each accepted step and by set_partition. Without it the retry would start from
  // the failed stage's neighbour, a step away, and fail again.
  void anchor() {
    q_anchor_ = q_;
    B_anchor_ = B_;
  }

  // q(), v(), Phi_q() and the factored Phi_d, B at y.
  template <class Rows, class State>
  void coordinates(double t, const State& y, Rows& rows) {
    for (int k = 0; k < n_i_; ++k) dq_i_[k] = y[k] - q_[ind_[k]], q_[ind_[k]] = y[k];
    dq_d_.noalias() = B_ * dq_i_;
    for (int k = 0; k < n_r_; ++k) q_[dep_[k]] += dq_d_[k];
    positions(t, rows);
    tangent();
    min_ratio_ = std::min(min_ratio_, ratio_);
    for (int k = 0; k < n_i_; ++k) v_[ind_[k]] = y[n_i_ + k];
    dq_d_.noalias() = B_ * tail_of<NI>(y, n_i_);
    for (int k = 0; k < n_r_; ++k) v_[dep_[k]] = dq_d_[k];
  }

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
  // Newton-Raphson on Phi_R(q) = 0 for q_d; leaves Phi_q, its factored Phi_d and pivot_ratio() at
  // the solution.
  template <class Rows>
  void positions(double t, Rows& rows) {
    bool after_Phi = false;  // the last evaluation was Phi at q_
    for (int it = 0;; ++it) {
      rows.Phi(q_, Phi_);
      for (int k = 0; k < n_r_; ++k) Phi_R_[k] = Phi_[rows_[k]];
      const double residual = n_r_ == 0 ? 0.0 : Phi_R_.cwiseAbs().maxCoeff();
      if (residual <= tol_Phi_) {
        after_Phi = true;
        break;
      }
      if (it == kPartitionMaxNewtonIterations || !std::isfinite(residual)) {
        update_ratio();
        q_ = q_anchor_, B_ = B_anchor_;  // the retry starts from the accepted state, not from here
        throw StageFailure(fmt::format(
            "{}: Newton-Raphson on the dependent coordinates did not converge at t = {:.9g} s "
            "({} iterations, |Phi| = {:.3g} m, Phi_d pivot ratio {:.3g})",
            name_, t, it, residual, ratio_));
      }
      rows.Phi_q(q_, true, Phi_q_);
      factor();
      ++stats_->jacobian_evals;
      dq_d_.noalias() = lu_.solve(Phi_R_);
      for (int k = 0; k < n_r_; ++k) q_[dep_[k]] -= dq_d_[k];
      ++stats_->newton_iterations;
      if (dq_d_.cwiseAbs().maxCoeff() <= tol_dq_) break;  // the residual left is far below tol_Phi
    }
    rows.Phi_q(q_, after_Phi, Phi_q_);
    factor();
    ++stats_->jacobian_evals;
    update_ratio();
    if (!(ratio_ > kRankThreshold))
      throw SolverError(fmt::format(
          "{}: Phi_d is singular at t = {:.9g} s (pivot ratio {:.3g} <= {:.0e}): the mechanism is "
          "at a singular configuration, or the step is too large for the partition",
          name_, t, ratio_, kRankThreshold));
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

  // B = -Phi_d^-1 Phi_i from the factored Phi_d.
  void tangent() {
    if (n_r_ == 0) return;
    B_.noalias() = lu_.solve(Phi_i_);
    B_ = -B_;
  }

  const char* name_;
  RunStats* stats_;
  int n_r_, n_i_;
  double tol_Phi_, tol_dq_;
  VecQ q_, v_;            // the full state at the last y
  VecQ q_anchor_;         // q_ and B_ at anchor(), where a failed Newton-Raphson leaves them
  VecC Phi_;
  Jac Phi_q_;
  IdxR rows_, dep_;       // kept rows, dependent coordinates
  IdxI ind_;              // independent coordinates
  VecR Phi_R_, dq_d_;
  VecI dq_i_;
  MatD Phi_d_;
  MatB Phi_i_, B_;        // Phi_q(R, q_i); B = -Phi_d^-1 Phi_i
  MatB B_anchor_;
  Eigen::PartialPivLU<MatD> lu_;
  double ratio_ = 1.0, min_ratio_ = std::numeric_limits<double>::infinity();
};

}  // namespace mbs
