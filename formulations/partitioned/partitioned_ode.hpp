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
#include "common/partitioned_coordinates.hpp"

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

template <int NQ, int NC, int NR>
class PartitionedOde {
 public:
  using Coordinates = PartitionedCoordinates<NQ, NC, NR>;
  static constexpr bool kDynamic = Coordinates::kDynamic;
  static constexpr int NI = Coordinates::NI;
  static constexpr int S = kDynamic ? Eigen::Dynamic : 2 * NI;
  using State = Eigen::Matrix<double, S, 1>;  // y = [q_i; v_i]
  using VecQ = typename Coordinates::VecQ;
  using VecC = typename Coordinates::VecC;
  using VecR = typename Coordinates::VecR;
  using VecI = typename Coordinates::VecI;
  using Jac = typename Coordinates::Jac;
  using MatB = typename Coordinates::MatB;
  using MatI = Eigen::Matrix<double, NI, NI>;

  // stats: the simulator's counters, where Newton iterations and Jacobian evaluations are added.
  // rank: of Phi_q, fixed for the run (a change throws in the partition keeper).
  PartitionedOde(const Model& model, RunStats& stats, int rank)
      : nat_(model), n_q_(nat_.nq()), n_r_(rank), n_i_(n_q_ - rank), M_(nat_.M_diag()), Q_(nat_.Q()),
        gamma_(nat_.nc()), M_d_(n_r_), Q_d_(n_r_), M_i_(n_i_), Q_i_(n_i_), w_d_(n_r_), f_d_(n_r_), Q_bar_(n_i_),
        MB_(n_r_, n_i_), M_bar_(n_i_, n_i_), llt_(n_i_),
        pc_("partitioned", n_q_, nat_.nc(), rank, kPhiTol * position_scale(model), kNewtonStep * position_scale(model),
            stats) {}

  const char* name() const { return "partitioned"; }
  int size() const { return 2 * n_i_; }
  void initial_full_state(VecQ& q, VecQ& v) const {
    q = nat_.model().initial_q();
    v = nat_.model().initial_v();
  }

  void rhs(double t, const State& y, State& dydt) {
    pc_.coordinates(t, y, rows_);
    const IdxR& rows = pc_.rows();
    const IdxR& dep = pc_.dependent();
    const IdxI& ind = pc_.independent();
    // w_d = Phi_d^-1 gamma_R = -c_d, so Q_d - M_d c_d = Q_d + M_d w_d.
    cf_.Phi_q_dot_v(pc_.q(), pc_.v(), gamma_);
    if (nat_.has_force_elements()) {  // Q(q, v): split again at this state
      nat_.Q(pc_.q(), pc_.v(), Q_);
      for (int k = 0; k < n_r_; ++k) Q_d_[k] = Q_[dep[k]];
      for (int k = 0; k < n_i_; ++k) Q_i_[k] = Q_[ind[k]];
    }
    for (int k = 0; k < n_r_; ++k) f_d_[k] = gamma_[rows[k]];
    if (n_r_ > 0) w_d_.noalias() = pc_.lu().solve(f_d_);
    f_d_ = Q_d_ + M_d_.cwiseProduct(w_d_);
    const MatB& B = pc_.B();
    Q_bar_ = Q_i_;
    Q_bar_.noalias() += B.transpose() * f_d_;
    MB_.noalias() = M_d_.asDiagonal() * B;
    M_bar_.noalias() = B.transpose() * MB_;
    M_bar_.diagonal() += M_i_;
    llt_.compute(M_bar_);
    head(dydt) = tail(y);
    tail(dydt).noalias() = llt_.solve(Q_bar_);
  }

  // Uses partition p from the consistent natural state (q, v) (PartitionedCoordinates::set_partition).
  double set_partition(const Partition& p, const VecQ& q, const VecQ& v, State& y) {
    const double ratio = pc_.set_partition(p, rows_, q, v, y);
    const IdxR& dep = pc_.dependent();
    const IdxI& ind = pc_.independent();
    for (int k = 0; k < n_r_; ++k) M_d_[k] = M_[dep[k]], Q_d_[k] = Q_[dep[k]];
    for (int k = 0; k < n_i_; ++k) M_i_[k] = M_[ind[k]], Q_i_[k] = Q_[ind[k]];
    return ratio;
  }
  void anchor() { pc_.anchor(); }

  // The natural state for y, into q(), v() (Newton-Raphson on q_d from the last solution), with
  // Phi_q() and the factored Phi_d at it.
  void full_state(double t, const State& y) { pc_.coordinates(t, y, rows_); }
  void model_state_at(double t, const State& y, Eigen::VectorXd& q, Eigen::VectorXd& v) {
    pc_.coordinates(t, y, rows_);
    q = pc_.q();
    v = pc_.v();
  }
  const VecQ& q() const { return pc_.q(); }
  const VecQ& v() const { return pc_.v(); }
  const Jac& Phi_q() const { return pc_.Phi_q(); }  // at q()
  double pivot_ratio() const { return pc_.pivot_ratio(); }
  double take_min_pivot_ratio() { return pc_.take_min_pivot_ratio(); }

 private:
  using IdxR = typename Coordinates::IdxR;
  using IdxI = typename Coordinates::IdxI;

  // The natural-coordinate rows for PartitionedCoordinates: explicit quadratics at fixed sizes.
  struct Rows {
    ConstraintFunctions<NQ, NC>& cf;
    void Phi(const VecQ& q, VecC& Phi) { cf.Phi(q, Phi); }
    void Phi_q(const VecQ& q, bool /*after_Phi*/, Jac& J) { cf.Phi_q(q, J); }
  };

  // y = [q_i; v_i]: fixed-size segments when the sizes are fixed.
  template <typename V>
  auto head(V& y) const { return head_of<NI>(y, n_i_); }
  template <typename V>
  auto tail(V& y) const { return tail_of<NI>(y, n_i_); }

  NaturalCoordinates nat_;
  ConstraintFunctions<NQ, NC> cf_{nat_};  // Phi, Phi_q, ...: explicit quadratics at fixed sizes
  int n_q_, n_r_, n_i_;
  VecQ M_, Q_;            // mass diagonal (kg), applied forces (N)
  VecC gamma_;            // d/dt(Phi_q) v
  VecR M_d_, Q_d_;        // M and Q on q_d
  VecI M_i_, Q_i_;        // and on q_i
  VecR w_d_, f_d_;
  VecI Q_bar_;
  MatB MB_;               // M_d B
  MatI M_bar_;            // M_i + B^T M_d B
  Eigen::LLT<MatI> llt_;
  Coordinates pc_;
  Rows rows_{cf_};
};

}  // namespace mbs::partitioned
