// The simulator of formulation "alm-index3" (alm_index3.cpp): natural (fully Cartesian) coordinates, index-3 augmented Lagrangian with
// mass-orthogonal projections of velocities and accelerations (ALI3-P: Bayo & Ledesma 1996;
// Cuadrado, Cugat & Dopico 2000, 2001), integrated by the trapezoidal rule.
//
// Equations of motion, lambda being the augmented-Lagrangian estimate of the multipliers:
//   M q'' + Phi_q^T (alpha Phi + lambda) = Q,   lambda <- lambda + alpha Phi   (every iteration)
// Trapezoidal rule with q = q_{n+1} as the unknown: q'' = 4/h^2 (q - c), c = q_n + h q'_n + h^2/4 q''_n.
// Newton-Raphson on the dynamics times h^2/4, mu = alpha Phi + lambda:
//   f(q) = M (q - c) + h^2/4 (Phi_q^T mu - Q)
//   f_q  = M + h^2/4 (alpha Phi_q^T Phi_q + sum_k lambda_k d2Phi_k/dq2)
//   f_q dq = -f,  q += dq,  lambda += alpha Phi(q)
// lambda is carried over from step to step as the initial estimate. The trapezoidal q'* and q''* of
// the converged q are then projected mass-orthogonally onto the velocity and acceleration
// constraints (project_velocities_and_accelerations()).
//
// The geometric stiffness takes lambda, not the exact mu: the two agree at convergence (alpha Phi
// -> 0), but at the predictor alpha Phi is a large spurious rod force (1e9 N/m times the predictor's
// O(h^3) error), and once compressive it makes f_q indefinite for large h, where Newton with mu
// fails and with lambda converges (docs/formulations.md, Method notes).
//
// Contacts are the other story, told in impacts.hpp: a model without contacts takes exactly the
// plain step above.
#pragma once

#include <Eigen/Dense>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <vector>

#include "common/contact_lcp.hpp"
#include "common/length_scale.hpp"
#include "common/linear_solver.hpp"
#include "common/augmented_lagrangian.hpp"
#include "common/modified_newton.hpp"
#include "common/sparse_natural.hpp"
#include "core/formulation.hpp"
#include "core/natural_coordinates.hpp"
#include "common/quadratic_rows.hpp"

namespace mbs::alm_index3 {
namespace {  // alm_index3.cpp alone includes this: internal linkage, as in one file

// The penalty, the Newton tolerance and the raise of alpha at singular positions:
// common/augmented_lagrangian.hpp, where each constant is argued.
using augmented_lagrangian::kAlphaPerMass;
using augmented_lagrangian::kNewtonTol;
using augmented_lagrangian::kStallRatio;
// Full Newton (a fresh tangent every iteration: alpha, and with it the tangent, may change within
// the step), at most 30 iterations, in common/modified_newton.hpp's loop.
constexpr NewtonRules kNewton{30, kStallRatio, false};
// Initial accelerations: penalty (kg per kg of the largest mass) and tolerance on the acceleration
// constraint Phi_q q'' + d/dt(Phi_q) q' relative to the larger of |Q/M| and |d/dt(Phi_q) q'|.
constexpr double kAccelerationAlphaPerMass = 1e6;
constexpr double kAccelerationTol = 1e-12;
constexpr int kMaxAccelerationIterations = 20;

// The Newton tangent's solver (common/linear_solver.hpp): tiny fixed sizes take the closed-form
// inverse, cheaper than LDLT (pivoting, permutations) at these sizes (docs/formulations.md, Method
// notes), whose relative error ~cond(T) eps stays far below the Newton tolerance for cond(T) ~ 1 +
// h^2 alpha / 4m (at most ~1e6, at h = 0.05 s); otherwise LDLT, or LU where force elements make the
// tangent unsymmetric (a damper's dQ/dq), or the sparse LDLT on Phi_q's pattern.
template <int NQ>
using DenseTangent = DenseSolver<NQ, Factorization::kLdlt>;
using DenseUnsymmetricTangent = DenseSolver<Eigen::Dynamic, Factorization::kLu>;
using SparseTangentSolver = SparseSolver<SparseTangent>;

template <int NQ, int NC, typename Solver>
class TrapezoidalSimulator final : public FixedStepSimulator {
 public:
  using Vec = Eigen::Matrix<double, NQ, 1>;
  using CVec = Eigen::Matrix<double, NC, 1>;
  using Jac = Eigen::Matrix<double, NC, NQ>;
  using Mat = Eigen::Matrix<double, NQ, NQ>;
  using Jacobian = std::conditional_t<Solver::kSparse, SparseJacobian, Jac>;

  TrapezoidalSimulator(const Model& model, double h)
      : FixedStepSimulator(model, h), nat_(model), n_q_(nat_.nq()), n_c_(nat_.nc()), M_(nat_.M_diag()), Q_(nat_.Q()),
        q0_(model.initial_q()), v0_(model.initial_v()), q_(n_q_), v_(n_q_), a_(n_q_), q_n_(n_q_), v_n_(n_q_),
        a_n_(n_q_), c_(n_q_), f_(n_q_), dq_(n_q_), w_(n_q_), Phi_(n_c_), lambda_(n_c_), mu_(n_c_), r_(n_c_),
        gamma_(n_c_), lambda_n_(n_c_), Phi_q_(make_jacobian<Jacobian>(nat_)), solver_(n_q_, nat_, Phi_q_, true, true),
        forces_(nat_.has_force_elements()), K_(dense(n_q_), dense(n_q_)), C_(dense(n_q_), dense(n_q_)), dim_(model.dim),
        nct_(static_cast<int>(contacts(model).size())), closed_(nct_, 0), in_set_(nct_, 0), active_(nct_, 0),
        set_(nct_, 0), lcp_eq_(nct_, 0), pi_(nct_), pi_s_(nct_), vn_(nct_), lcp_b_(nct_), lcp_x_(nct_),
        lcp_D_(nct_, nct_), Y_(n_q_, nct_), q_s_(n_q_), v_s_(n_q_), a_s_(n_q_),
        lambda_s_(n_c_), sigma_(n_c_), lcp_(nct_) {
    m_ref_ = n_q_ > 0 ? M_.maxCoeff() : 1.0;
    init_contacts(model);
    const double length = max_model_length(model);
    tol_q_ = kNewtonTol * (length > 0.0 ? length : 1.0);
    m_alpha_ = penalty_mass_scale(nat_, model, m_ref_);
    alpha_acc_ = kAccelerationAlphaPerMass * m_alpha_;
  }

 private:
  void do_initialize_state() override {
    q_ = q0_;
    v_ = v0_;
    if (nct_ != 0) {  // every contact open
      std::fill(closed_.begin(), closed_.end(), 0);
      pi_.setZero();
      n_active_ = 0;
    }
    initial_accelerations();
  }

  // The penalty alpha depends on h (augmented_lagrangian::kMinPenaltyRatio).
  void do_step_size_chosen(double h) override {
    set_step(h);
    h_nom_ = h;
    set_contact_threshold(h);
  }

  void do_fixed_step(double /*h*/) override {  // h_ was set by set_step()
    if constexpr (!Solver::kSparse) {  // contacts: the dense path only (common/sparse_natural.hpp)
      if (nct_ != 0) {
        contact_step();
        return;
      }
    }
    newton();
    project_velocities_and_accelerations();
  }

  void do_model_state() override {
    q_model_ = q_;
    v_model_ = v_;
  }

  void factor() {
    if (!solver_.factor())
      throw SolverError(fmt::format("alm-index3: the sparse LDLT of the tangent failed at t = {:.9g} s", time()));
  }
  template <typename Rhs, typename Dst>
  void solve(const Rhs& rhs, Dst& dst) const {
    solver_.solve(rhs, dst);
  }

  // Phi_q at q, and products with it: the dense matrix or the sparse one.
  void jacobian(const Vec& q) { evaluate_jacobian(cf_, q, Phi_q_); }
  void jt_times(const CVec& x, Vec& y) const { y.noalias() = matrix_of(Phi_q_).transpose() * x; }  // y = Phi_q^T x
  void j_times(const Vec& x, CVec& y) const { y.noalias() = matrix_of(Phi_q_) * x; }              // y = Phi_q x
  void j_times_add(const Vec& x, CVec& y) const { y.noalias() += matrix_of(Phi_q_) * x; }         // y += Phi_q x

  void set_step(double h) {
    h_ = h;
    h24_ = 0.25 * h * h;
    alpha_ = alpha_step_ = augmented_lagrangian::step_penalty(m_alpha_, h24_);
  }

  // Augmented-Lagrangian solution of M q'' + Phi_q^T lambda = Q, Phi_q q'' + d/dt(Phi_q) q' = 0 at
  // t = 0. Only the positive definite M + alpha Phi_q^T Phi_q is factored, so redundant (rank-
  // deficient) constraints are fine: lambda then converges to one of the admissible multipliers.
  void initial_accelerations() {
    if (forces_) nat_.Q(q_, v_, Q_);
    jacobian(q_);
    cf_.Phi_q_dot_v(q_, v_, gamma_);
    augmented_mass(alpha_acc_, solver_.matrix());
    factor();
    ++stats_.jacobian_evals;
    const double a_ref = std::max(inf_norm(Q_.cwiseQuotient(M_)), inf_norm(gamma_));
    lambda_.setZero();
    for (int it = 1;; ++it) {
      mu_ = lambda_ + alpha_acc_ * gamma_;
      jt_times(mu_, w_);
      w_ = Q_ - w_;
      solve(w_, a_);
      ++stats_.rhs_evals;
      j_times(a_, r_);
      r_ += gamma_;  // acceleration-level constraint violation
      lambda_ += alpha_acc_ * r_;
      if (!a_.allFinite()) throw SolverError("alm-index3: non-finite initial accelerations");
      const double violation = inf_norm(r_);
      if (violation <= kAccelerationTol * a_ref) break;
      if (it == kMaxAccelerationIterations) {
        ++stats_.failures;
        throw SolverError(fmt::format(
            "alm-index3: initial accelerations did not converge ({} iterations, |Phi_q q'' + dPhi_q/dt q'| = {:.3g} m/s^2)",
            it, violation));
      }
    }
  }

  // M + alpha Phi_q^T Phi_q (Phi_q_ evaluated), dense or on the sparse pattern.
  void augmented_mass(double alpha, Mat& T) {
    T.noalias() = alpha * Phi_q_.transpose() * Phi_q_;
    T.diagonal() += M_;
  }
  void augmented_mass(double alpha, SparseTangent& T) {
    T.set_zero();
    T.add_gram(alpha, Phi_q_, Phi_q_);
    T.add_diagonal(M_);
  }

  // The step's iteration as common/modified_newton.hpp's loop sees it; kContacts stays a
  // template argument, so the plain path keeps no contact branch.
  template <bool kContacts>
  struct NewtonHooks {
    TrapezoidalSimulator& s;
    [[gnu::always_inline]] void newton_residual() { s.template residual<kContacts>(); }
    [[gnu::always_inline]] void newton_tangent() {
      s.template tangent<kContacts>();
      s.factor();
    }
    [[gnu::always_inline]] double newton_correct() { return s.template correct<kContacts>(); }
    [[gnu::always_inline]] bool newton_converged(const NewtonIterate& x) { return s.converged(x); }
    [[noreturn]] void newton_failed(const NewtonIterate& x) const { s.failed(x); }
  };

  // One step of the trapezoidal rule: Newton-Raphson on q_{n+1} with the multiplier update.
  // kContacts: with the active contact rows (compiled out of the plain path).
  template <bool kContacts = false>
  void newton() {
    alpha_ = alpha_step_;
    lambda_n_ = lambda_;
    q_n_ = q_;
    v_n_ = v_;
    a_n_ = a_;
    c_ = q_n_ + h_ * v_n_ + h24_ * a_n_;
    q_ = q_n_ + h_ * v_n_ + (2.0 * h24_) * a_n_;  // predictor: Taylor to second order
    cf_.Phi(q_, Phi_);
    NewtonHooks<kContacts> hooks{*this};
    ModifiedNewton::run(hooks, kNewton, stats_);
    // A raised alpha (singular position) would carry into the projections, whose matrix is the
    // last tangent: there it would enforce the acceleration-level constraints in the vanishing
    // directions, where d/dt(Phi_q) q' is known only to its error divided by the vanishing
    // singular value (on the N-four-bar a step close to the singular position then produced a
    // spurious acceleration and lost energy: docs/formulations.md, Method notes). So the
    // tangent is refactored with the step's alpha at the converged q. The multipliers go back
    // to the step's start: the raised alpha builds up components in the vanishing directions
    // (their true values grow like 1 / the distance to the singular position there) that,
    // carried into the next steps, acted as spurious forces once those directions stiffened
    // again (Newton then failed at a later crossing; see the Method notes in
    // docs/formulations.md).
    if (alpha_ != alpha_step_) {
      lambda_ = lambda_n_;
      alpha_ = alpha_step_;
      jacobian(q_);
      tangent<kContacts>();
      factor();
      ++stats_.jacobian_evals;
    }
  }

  // f = M (q - c) + h^2/4 (Phi_q^T mu - Q) at q_, Phi_q_ evaluated there.
  template <bool kContacts>
  void residual() {
    jacobian(q_);
    mu_ = alpha_ * Phi_ + lambda_;
    jt_times(mu_, f_);
    if constexpr (kContacts) {
      for (int a = 0; a < n_active_; ++a) {  // active contacts: rows gap = 0, multiplier pi
        const int j = active_[a];
        add_normal(j, alpha_ * gap(j, q_) + pi_[j], f_);
      }
    }
    if (forces_) {  // Q at (q, q'(q)) with the trapezoidal q' = 2 (q - q_n) / h - q'_n
      v_ = (2.0 / h_) * (q_ - q_n_) - v_n_;
      nat_.Q(q_, v_, Q_);
    }
    f_ = M_.cwiseProduct(q_ - c_) + h24_ * (f_ - Q_);
  }
  // q -= f_q^-1 f and the multiplier update; |dq|_inf.
  template <bool kContacts>
  double correct() {
    solve(f_, dq_);
    q_ -= dq_;
    cf_.Phi(q_, Phi_);
    lambda_ += alpha_ * Phi_;
    if constexpr (kContacts)
      for (int a = 0; a < n_active_; ++a) pi_[active_[a]] += alpha_ * gap(active_[a], q_);
    return inf_norm(dq_);
  }

  // The Newton tangent f_q at q_ (Phi_q_ evaluated there, lambda_, alpha_; force elements at v_).
  template <bool kContacts>
  void tangent() {
    assemble_tangent<kContacts>(solver_.matrix());
  }
  template <bool kContacts>
  void assemble_tangent(SparseTangent& T) {  // no force elements or contacts on this path
    T.set_zero();
    T.add_gram(h24_ * alpha_, Phi_q_, Phi_q_);
    T.add_geometric_stiffness(lambda_, h24_);
    T.add_diagonal(M_);
  }
  template <bool kContacts>
  void assemble_tangent(Mat& T) {
    T.noalias() = alpha_ * Phi_q_.transpose() * Phi_q_;
    cf_.add_Phi_qq_times(lambda_, T);
    if (forces_) {  // -h^2/4 dQ/dq = -h^2/4 (Q_q + 2/h Q_v): stiffness and damping of the force elements
      K_.setZero();
      C_.setZero();
      nat_.add_Q_jacobians(q_, v_, K_, C_);
      T -= K_ + (2.0 / h_) * C_;
    }
    if constexpr (kContacts) add_contact_stiffness(alpha_, T);
    T *= h24_;
    T.diagonal() += M_;
  }

  // The stopping test of Newton iteration x.it (dq_, lambda_ just updated).
  bool converged(const NewtonIterate& x) {
    const double t_new = time() + h_;
    if (!dq_.allFinite() || !lambda_.allFinite())
      throw SolverError(fmt::format("alm-index3: non-finite state at t = {:.9g} s", t_new));
    return augmented_lagrangian::converged_or_raise(x, tol_q_, inf_norm(Phi_), tol_q_, alpha_step_, alpha_);
  }
  [[noreturn]] void failed(const NewtonIterate& x) const {
    throw SolverError(fmt::format(
        "alm-index3: Newton-Raphson did not converge at t = {:.9g} s ({} iterations, |dq| = {:.3g} m > {:.3g} m)",
        time() + h_, x.it, x.dq, tol_q_));
  }

  // Mass-orthogonal projections (Cuadrado, Cugat & Dopico), with the last Newton tangent f_q as the
  // projection matrix so that no further factorization is needed:
  //   f_q q'  = W q'*
  //   f_q q'' = W q''* - h^2/4 alpha Phi_q^T (d/dt(Phi_q) q'),    W = f_q - h^2/4 alpha Phi_q^T Phi_q
  // i.e. q' = q'* - f_q^-1 h^2/4 alpha Phi_q^T Phi_q q'*, and likewise for q''. W = M + h^2/4 sum_k
  // lambda_k d2Phi_k/dq2 is the mass matrix plus the tangent's geometric stiffness. The published
  // form has M on the right, as its tangent leaves d2Phi/dq2 out; with the geometric stiffness on the
  // left only, the projection scales the free velocity by 1 - O(h^2 lambda / 4 m L) every step and
  // drains kinetic energy. With W on both sides the result equals refactoring
  // M + h^2/4 alpha Phi_q^T Phi_q at the converged q (both compared in docs/formulations.md, Method
  // notes).
  template <bool kContacts = false>
  void project_velocities_and_accelerations() {
    const double s = 2.0 / h_;
    v_ = s * (q_ - q_n_) - v_n_;                        // q'*
    a_ = (s * s) * (q_ - q_n_) - (2.0 * s) * v_n_ - a_n_;  // q''*
    jacobian(q_);  // at the converged q: the projected q' must satisfy its constraints
    const double k = h24_ * alpha_;
    j_times(v_, r_);
    r_ *= k;
    jt_times(r_, w_);
    if constexpr (kContacts)
      for (int a = 0; a < n_active_; ++a) add_normal(active_[a], k * normal(active_[a], v_), w_);
    solve(w_, dq_);
    v_ -= dq_;
    cf_.Phi_q_dot_v(q_, v_, r_);
    j_times_add(a_, r_);
    r_ *= k;
    jt_times(r_, w_);
    if constexpr (kContacts)
      for (int a = 0; a < n_active_; ++a) add_normal(active_[a], k * normal(active_[a], a_), w_);
    solve(w_, dq_);
    a_ -= dq_;
    if (!v_.allFinite() || !a_.allFinite())
      throw SolverError(fmt::format("alm-index3: non-finite state at t = {:.9g} s", time() + h_));
  }

  // ---- Contacts (impacts.hpp) ----
  void init_contacts(const Model& model);
  void set_contact_threshold(double h);
  double gap(int j, const Vec& q) const;
  double normal(int j, const Vec& v) const;
  void add_normal(int j, double s, Vec& x) const;
  void add_contact_stiffness(double alpha, Mat& T);
  void set_active(const std::vector<char>& flags);
  void contact_step();
  void accelerations();
  static double impact_fraction(double g0, double dg0, double g1);
  void constrained_solve(const Vec& f, Vec& x);
  void impact_velocities();
  void contact_accelerations();

  // Dense matrices are sized 0 on the sparse path.
  static int dense(int n) { return Solver::kSparse ? 0 : n; }

  NaturalCoordinates nat_;
  ConstraintFunctions<NQ, NC> cf_{nat_};  // Phi, Phi_q, ...: explicit quadratics at fixed sizes
  int n_q_, n_c_;
  Vec M_, Q_, q0_, v0_;
  Vec q_, v_, a_;         // state at time()
  Vec q_n_, v_n_, a_n_;   // state at the start of the step
  Vec c_, f_, dq_, w_;    // c = q_n + h q'_n + h^2/4 q''_n; residual; correction; scratch
  CVec Phi_, lambda_, mu_, r_, gamma_;
  CVec lambda_n_;         // multipliers at the start of the step
  Jacobian Phi_q_;
  Solver solver_;         // Newton tangent f_q (also the projection matrix) and its factorization
  bool forces_ = false;   // force elements: Q(q, q') and its Jacobians K_ = dQ/dq, C_ = dQ/dq'
  Mat K_, C_;
  double h_ = 0.0, h24_ = 0.0;  // step size (set_step()) and h^2/4
  double m_ref_ = 1.0, alpha_ = 0.0, alpha_acc_ = 0.0, tol_q_ = 0.0;
  double m_alpha_ = 1.0;     // kg: the penalties' mass scale (common/sparse_natural.hpp, penalty_mass_scale)
  double alpha_step_ = 0.0;  // alpha for the step size (set_step()); alpha_ is raised from it when Newton stalls

  // Contacts (all storage sized at setup).
  using Contact = ContactRow;
  int dim_;
  int nct_;                         // number of contacts (0: the plain path)
  std::vector<Contact> contacts_;
  std::vector<char> closed_;        // persistent contacts: bilateral rows until they would pull
  std::vector<char> in_set_;        // scratch: contacts at the plane in the current step
  std::vector<int> active_;         // contact rows in the Newton iteration and projections
  int n_active_ = 0;
  std::vector<int> set_;            // contacts of the impact problem
  std::vector<char> lcp_eq_;
  Eigen::VectorXd pi_, pi_s_;       // contact multipliers (N; < 0 pushes), and at the step start
  Eigen::VectorXd vn_, lcp_b_, lcp_x_;
  Eigen::MatrixXd lcp_D_, Y_;       // Delassus matrix; constrained responses to unit normal impulses
  Vec q_s_, v_s_, a_s_;             // (sub)step start
  CVec lambda_s_, sigma_;
  ContactLcp lcp_;
  double g_norm_ = 0.0, pi_tol_ = 0.0, kappa_ = 0.0, v_thr_ = 0.0;
  double h_nom_ = 0.0;              // the run's step (set_step() also takes sub-steps)
};

}  // namespace
}  // namespace mbs::alm_index3
