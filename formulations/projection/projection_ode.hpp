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
// Projection (after an accepted step, ProjectionOde::project): mass-orthogonal, of the positions by
// Gauss-Newton to round-off and then of the velocities by one linear solve
// (common/kept_constraints.hpp, which also holds G, S and its factorization, and says how a
// near-singular S is regularized at singular positions).
//
// Baumgarte stabilization (set_baumgarte; Baumgarte 1972): G a = -gamma - 2 alpha G v - beta^2 Phi
// instead of -gamma, i.e. Phi'' + 2 alpha Phi' + beta^2 Phi = 0 along the motion, so that a drift of
// the constraints decays instead of growing (formulation "baumgarte", without projection).
//
// Redundant constraints: only the rows chosen once at setup (common/independent_rows.hpp, a pivoted
// QR of Phi_q^T at q0) enter G; the dropped ones are combinations of the kept ones, so they hold too.
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

#include "common/explicit_rk.hpp"
#include "common/kept_constraints.hpp"
#include "common/sparse_natural.hpp"
#include "core/formulation.hpp"
#include "core/natural_coordinates.hpp"

namespace mbs::projection {

// kBaumgarte: with Baumgarte's feedback (set_baumgarte), compiled out of the plain equations.
template <int NQ, int NR, bool kBaumgarte = false>
class ProjectionOde {
 public:
  using Constraints = KeptConstraints<NQ, NR>;
  static constexpr bool kDynamic = Constraints::kDynamic;
  static constexpr int S = kDynamic ? Eigen::Dynamic : 2 * NQ;
  using State = Eigen::Matrix<double, S, 1>;  // y = [q; v]
  using VecQ = typename Constraints::VecQ;
  using VecR = typename Constraints::VecR;

  // rows: the kept (independent) constraint rows, ascending. stats: the simulator's counters, where
  // projection iterations and Jacobian evaluations are added.
  ProjectionOde(const Model& model, std::vector<int> rows, RunStats& stats, bool sparse = false)
      : nat_(model), kc_(nat_, std::move(rows), stats, sparse, "projection"), n_q_(nat_.nq()), n_r_(kc_.kept_rows()),
        Q_(nat_.Q()), MiQ_(n_q_), r_(n_r_), gamma_(n_r_), c_(n_r_), lambda_(n_r_), dl_(n_r_), q0_(model.initial_q()),
        v0_(model.initial_v()) {}

  ProjectionOde(const ProjectionOde&) = delete;
  ProjectionOde& operator=(const ProjectionOde&) = delete;

  int size() const { return 2 * n_q_; }
  int kept_rows() const { return n_r_; }
  int dropped_rows() const { return kc_.dropped_rows(); }
  bool sparse() const { return kc_.sparse(); }

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
    kc_.load(q(y), v(y));
    const VecQ& Qf = applied_forces();
    MiQ_ = kc_.Minv().cwiseProduct(Qf);
    q(dydt) = kc_.v();
    if (n_r_ == 0) {
      v(dydt) = MiQ_;
      return;
    }
    kc_.jacobian();
    kc_.velocity_terms(gamma_);
    kc_.factor();
    kc_.g_times(MiQ_, c_);
    c_ += gamma_;
    if constexpr (kBaumgarte) {
      kc_.g_times(kc_.v(), dl_);  // Phi' = G v
      kc_.constraints(r_);        // Phi
      c_ += two_alpha_ * dl_ + beta2_ * r_;
    }
    kc_.solve(c_, lambda_);
    auto a = v(dydt);
    a = MiQ_;
    kc_.sub_mi_gt_times(lambda_, a);
  }

  // Mass-orthogonal projection of y onto Phi(q) = 0, then onto Phi_q v = 0 (file comment).
  void project(double t, State& y) {
    if (n_r_ == 0) return;
    kc_.project_positions(t, q(y));
    kc_.project_velocities(v(y));
  }

 private:
  // The applied force Q(q, v) (N) at the loaded state: gravity's constant Q0 = M g alone, or with
  // the force elements' Q(q, v). The one place where forces are evaluated.
  const VecQ& applied_forces() {
    if (nat_.has_force_elements()) nat_.Q(kc_.q_ref(), kc_.v_ref(), Q_);
    return Q_;
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
  Constraints kc_;           // kept rows, G, S = G M^-1 G^T and the projections
  int n_q_, n_r_;
  VecQ Q_, MiQ_;             // applied forces (N), M^-1 Q
  VecR r_, gamma_, c_, lambda_, dl_;
  double two_alpha_ = 0.0, beta2_ = 0.0;  // Baumgarte: 2 alpha (1/s), beta^2 (1/s^2)
  VecQ q0_, v0_;             // the model's initial state (Model::initial_q() builds a new vector)
};

}  // namespace mbs::projection
