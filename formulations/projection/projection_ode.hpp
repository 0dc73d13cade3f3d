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
// Contacts (frictionless point-plane; the event logic is common/contact_events.hpp): a contact row
// n^T (the plane's normal at its point's coordinates) is linear in q, so a closed contact adds the
// acceleration-level row n^T a = 0 with no convective term. Through the constrained inverse mass
// W = M^-1 - M^-1 G^T S^-1 G M^-1 (the joints' rows eliminated), the closed contacts' forces f solve
// (N W N^T) f = -N a_free and a = a_free + W N^T f; an impact changes v by W N^T P, so the joints'
// velocity constraints hold through it. The projection after a step covers the joints' rows only.
//
// NQ, NR (coordinates, kept rows) are fixed for the smallest models (all rows kept), Eigen::Dynamic
// otherwise; everything is sized in the constructor, rhs() and project() allocate nothing.
#pragma once

#include <fmt/format.h>

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <vector>

#include "common/contact_lcp.hpp"
#include "common/explicit_rk.hpp"
#include "common/fixed_segments.hpp"
#include "common/kept_constraints.hpp"
#include "common/sparse_natural.hpp"
#include "core/formulation.hpp"
#include "core/natural_coordinates.hpp"

namespace mbs::projection {

// kBaumgarte: with Baumgarte's feedback (set_baumgarte), compiled out of the plain equations.
// kSparse: G and S on fixed sparse patterns (common/kept_constraints.hpp), for large models.
template <int NQ, int NR, bool kBaumgarte = false, bool kSparse = false>
class ProjectionOde {
 public:
  using Constraints = KeptConstraints<NQ, NR, kSparse>;
  static constexpr bool kDynamic = Constraints::kDynamic;
  // Contacts take the dynamic sizes (make_sized): the fixed-size pendulums' right-hand side carries
  // no test for closed contacts, whose call alone was a measurable share of theirs.
  static constexpr bool kContacts = kDynamic;
  static constexpr int S = kDynamic ? Eigen::Dynamic : 2 * NQ;
  using State = Eigen::Matrix<double, S, 1>;  // y = [q; v]
  using VecQ = typename Constraints::VecQ;
  using VecR = typename Constraints::VecR;

  // rows: the kept (independent) constraint rows, ascending. stats: the simulator's counters, where
  // projection iterations and Jacobian evaluations are added.
  ProjectionOde(const Model& model, std::vector<int> rows, RunStats& stats)
      : nat_(model), kc_(nat_, std::move(rows), stats, "projection"), n_q_(nat_.nq()), n_r_(kc_.kept_rows()),
        Q_(nat_.Q()), MiQ_(n_q_), r_(n_r_), gamma_(n_r_), c_(n_r_), lambda_(n_r_), dl_(n_r_), q0_(model.initial_q()),
        v0_(model.initial_v()), cs_(model), nct_(cs_.size()), cY_(n_q_, nct_), cD_(nct_, nct_), cb_(nct_), cx_(nct_), cforce_(nct_),
        cmu_(n_r_), cdy_(2 * n_q_), lcp_(nct_) {}

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
  // Always inlined into the steppers: with the contact code beside it GCC stopped inlining the
  // Baumgarte instantiation into the fixed-step loop (docs/formulations.md, Method notes).
  EIGEN_ALWAYS_INLINE void rhs(double /*t*/, const State& y, State& dydt) {
    kc_.load(q(y), v(y));
    const VecQ& Qf = applied_forces();
    MiQ_ = kc_.Minv().cwiseProduct(Qf);
    q(dydt) = kc_.v();
    if (n_r_ == 0) {
      v(dydt) = MiQ_;
      if constexpr (kContacts)
        if (cs_.num_closed() != 0) constrain(v(dydt));
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
    if constexpr (kContacts)
      if (cs_.num_closed() != 0) constrain(a);
  }

  // Mass-orthogonal projection of y onto Phi(q) = 0, then onto Phi_q v = 0 (file comment).
  void project(double t, State& y) {
    if (n_r_ == 0) return;
    kc_.project_positions(t, q(y));
    kc_.project_velocities(v(y));
  }

  // ---- Contacts (file comment; the event logic is common/contact_events.hpp) ----
  ContactSet& contact_set() { return cs_; }
  // Gaps (m, >= 0 admissible) and normal velocities (m/s, < 0 approaching) of every contact at y.
  void contact_state(const State& y, Eigen::VectorXd& gap, Eigen::VectorXd& vn) const {
    for (int j = 0; j < nct_; ++j) {
      gap[j] = normal_dot(cs_.row(j), q(y)) - cs_.row(j).d0;
      vn[j] = normal_dot(cs_.row(j), v(y));
    }
  }
  // Forces (N, > 0 pushing) of the closed contacts at y, into force[j] (others untouched).
  void closed_forces(const State& y, Eigen::VectorXd& force) {
    rhs(0.0, y, cdy_);
    for (int a = 0; a < cs_.num_closed(); ++a) force[cs_.closed_index(a)] = cforce_[cs_.closed_index(a)];
  }
  // Impact: v += W N^T P over the k contacts idx[0..k), with P from the mixed complementarity
  // problem of contact_lcp.hpp on w = N v+ + e min(N v-, 0) = D P + b, D = N W N^T (see
  // common/contact_events.hpp). Returns P in impulse[0..k) and the post-impact normal velocities.
  void apply_impulses(State& y, const std::vector<int>& idx, const std::vector<char>& eq, const Eigen::VectorXd& e,
                      int k, Eigen::VectorXd& impulse, Eigen::VectorXd& vn_after) {
    kc_.load(q(y), v(y));
    if (n_r_ != 0) {
      kc_.jacobian();
      kc_.factor();
    }
    for (int a = 0; a < k; ++a) {
      const ContactRow& c = cs_.row(idx[a]);
      const double vn = normal_dot(c, v(y));
      cb_[a] = vn + e[a] * std::min(vn, 0.0);
      w_normal(c, a);
    }
    delassus(idx.data(), k);
    lcp_.solve(cD_, cb_, eq, k, impulse);
    for (int a = 0; a < k; ++a) v(y) += impulse[a] * cY_.col(a);
    for (int a = 0; a < k; ++a) vn_after[a] = normal_dot(cs_.row(idx[a]), v(y));
  }

 private:
  // n . x over the contact point's coordinates of x (a q- or v-like vector).
  template <typename X>
  double normal_dot(const ContactRow& c, const X& x) const {
    double s = 0.0;
    for (int d = 0; d < dim_; ++d) s += c.n[d] * x[c.off + d];
    return s;
  }
  // cY_.col(a) = W n_c: M^-1 n_c, less its part along the joints' rows (S factored at the loaded q).
  void w_normal(const ContactRow& c, int a) {
    auto y = cY_.col(a);
    y.setZero();
    for (int d = 0; d < dim_; ++d) y[c.off + d] = c.n[d] * kc_.Minv()[c.off + d];
    if (n_r_ == 0) return;
    kc_.g_times(y, c_);
    kc_.solve(c_, cmu_);
    kc_.sub_mi_gt_times(cmu_, y);
  }
  // cD_ = N W N^T over the contacts idx[0..k), from the columns cY_.
  void delassus(const int* idx, int k) {
    for (int a = 0; a < k; ++a)
      for (int b = 0; b < k; ++b) cD_(a, b) = normal_dot(cs_.row(idx[a]), cY_.col(b));
  }
  // The closed contacts as bilateral rows on the accelerations a (the free ones on entry), at the
  // loaded q with S factored (rhs()). Out of line: the plain right-hand side stays as it was.
  template <typename A>
  EIGEN_DONT_INLINE void constrain(A&& a) {
    const int k = cs_.num_closed();
    for (int i = 0; i < k; ++i) {
      const ContactRow& c = cs_.row(cs_.closed_index(i));
      cb_[i] = normal_dot(c, a);
      w_normal(c, i);
    }
    delassus(cs_.closed_indices(), k);
    lcp_.solve_equalities(cD_, cb_, k, cx_);
    for (int i = 0; i < k; ++i) {
      cforce_[cs_.closed_index(i)] = cx_[i];
      a += cx_[i] * cY_.col(i);
    }
  }

  // The applied force Q(q, v) (N) at the loaded state: gravity's constant Q0 = M g alone, or with
  // the force elements' Q(q, v). The one place where forces are evaluated.
  EIGEN_ALWAYS_INLINE const VecQ& applied_forces() {
    if (nat_.has_force_elements()) nat_.Q(kc_.q_ref(), kc_.v_ref(), Q_);
    return Q_;
  }

  template <typename Y>
  auto q(Y& y) const { return head_of<kDynamic ? Eigen::Dynamic : NQ>(y, n_q_); }
  template <typename Y>
  auto v(Y& y) const { return tail_of<kDynamic ? Eigen::Dynamic : NQ>(y, n_q_); }

  NaturalCoordinates nat_;
  Constraints kc_;           // kept rows, G, S = G M^-1 G^T and the projections
  int n_q_, n_r_;
  VecQ Q_, MiQ_;             // applied forces (N), M^-1 Q
  VecR r_, gamma_, c_, lambda_, dl_;
  double two_alpha_ = 0.0, beta2_ = 0.0;  // Baumgarte: 2 alpha (1/s), beta^2 (1/s^2)
  VecQ q0_, v0_;             // the model's initial state (Model::initial_q() builds a new vector)

  // Contacts: all storage sized at setup.
  int dim_ = nat_.model().dim;
  ContactSet cs_;
  int nct_;
  Eigen::MatrixXd cY_, cD_;  // W N^T (nq x k), N W N^T
  Eigen::VectorXd cb_, cx_, cforce_;
  VecR cmu_;
  State cdy_;
  ContactLcp lcp_;
};

}  // namespace mbs::projection
