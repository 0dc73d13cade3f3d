// Formulation "alm-index3": natural (fully Cartesian) coordinates, index-3 augmented Lagrangian with
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
// O(h^3) error), and once compressive it makes f_q indefinite for large h. With mu, Newton failed
// on the pendulum at h = 0.02 and 0.05 s; with lambda it converges at every h and takes the same
// number of iterations below h = 1e-2 s.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/formulation.hpp"
#include "core/natural_coordinates.hpp"
#include "alm_index3/linearizer.hpp"

namespace mbs::alm_index3 {
namespace {

// Penalty factor per unit of the largest point mass (1/s^2). With h = 1e-3 it gives
// h^2 alpha / (4 m) = 250, so each iteration cuts the multiplier error by about 250 and Newton
// converges in 2-3 iterations. Much larger values only raise the round-off floor alpha * eps.
constexpr double kAlphaPerMass = 1e9;
// Small steps would weaken the penalty relative to the inertia (h^2 alpha / 4m -> 0) and slow the
// multiplier iteration; below h ~ 6e-4 s alpha is raised so that h^2 alpha / (4 m) stays at least this.
constexpr double kMinPenaltyRatio = 100.0;
// Newton converges when |dq|_inf <= kNewtonTol * L (L the longest rod). The residual is a poor
// test: it carries alpha Phi, whose round-off floor is of order alpha eps L (~1e-7 N at alpha = 1e9,
// and prototypes never met residual tolerances below ~1e-6 m g). The correction dq, solved with a
// tangent that carries the same alpha, has a floor of about eps L whatever alpha is. At 1e-10 m the
// converged q is ~1e-12 m off the constraints (the next correction would be ~1/(h^2 alpha / 4m) of
// the last), and Newton takes 2 iterations a step at h = 1e-3 s (3 at 1e-12, no change in drift).
constexpr double kNewtonTol = 1e-10;
constexpr int kMaxNewtonIterations = 20;
// Initial accelerations: penalty (kg per kg of the largest mass) and tolerance on the acceleration
// constraint Phi_q q'' + d/dt(Phi_q) q' relative to the larger of |Q/M| and |d/dt(Phi_q) q'|.
constexpr double kAccelerationAlphaPerMass = 1e6;
constexpr double kAccelerationTol = 1e-12;
constexpr int kMaxAccelerationIterations = 20;

template <typename V>
double inf_norm(const V& x) {
  return x.size() == 0 ? 0.0 : x.cwiseAbs().maxCoeff();
}

template <int NQ, int NC>
class TrapezoidalSimulator final : public FixedStepSimulator {
 public:
  using Vec = Eigen::Matrix<double, NQ, 1>;
  using CVec = Eigen::Matrix<double, NC, 1>;
  using Jac = Eigen::Matrix<double, NC, NQ>;
  using Mat = Eigen::Matrix<double, NQ, NQ>;

  TrapezoidalSimulator(const Model& model, double h)
      : FixedStepSimulator(model, h), nat_(model), n_q_(nat_.nq()), n_c_(nat_.nc()), M_(nat_.M_diag()), Q_(nat_.Q()),
        q0_(model.initial_q()), v0_(model.initial_v()), q_(n_q_), v_(n_q_), a_(n_q_), q_n_(n_q_), v_n_(n_q_),
        a_n_(n_q_), c_(n_q_), f_(n_q_), dq_(n_q_), w_(n_q_), Phi_(n_c_), lambda_(n_c_), mu_(n_c_), r_(n_c_),
        gamma_(n_c_), Phi_q_(n_c_, n_q_), T_(n_q_, n_q_), ldlt_(n_q_) {
    m_ref_ = n_q_ > 0 ? M_.maxCoeff() : 1.0;
    double length = 0.0;
    for (const Rod& rod : model.rods) length = std::max(length, rod.length);
    for (const RigidBody& body : model.bodies) length = std::max(length, body.length_scale);
    tol_q_ = kNewtonTol * (length > 0.0 ? length : 1.0);
    alpha_acc_ = kAccelerationAlphaPerMass * m_ref_;
  }

 private:
  void do_initialize_state() override {
    q_ = q0_;
    v_ = v0_;
    initial_accelerations();
  }

  // The penalty alpha depends on h (see kMinPenaltyRatio).
  void do_step_size_chosen(double h) override { set_step(h); }

  void do_fixed_step(double /*h*/) override {  // h_ was set by set_step()
    newton();
    project_velocities_and_accelerations();
  }

  void do_model_state() override {
    q_model_ = q_;
    v_model_ = v_;
  }

  // Tiny fixed sizes use the closed-form inverse: on the pendulum a step takes ~215 ns instead of
  // ~280 ns with LDLT (pivoting, permutations), and its relative error ~cond(T) eps stays far below
  // the Newton tolerance for cond(T) ~ 1 + h^2 alpha / 4m (at most ~1e6, at h = 0.05 s).
  static constexpr bool kExplicitInverse = NQ != Eigen::Dynamic && NQ <= 4;
  void factor() {
    if constexpr (kExplicitInverse)
      T_inv_ = T_.inverse();
    else
      ldlt_.compute(T_);
  }
  template <typename Rhs, typename Dst>
  void solve(const Rhs& rhs, Dst& dst) const {
    if constexpr (kExplicitInverse)
      dst.noalias() = T_inv_ * rhs;
    else
      dst.noalias() = ldlt_.solve(rhs);
  }

  void set_step(double h) {
    h_ = h;
    h24_ = 0.25 * h * h;
    alpha_ = m_ref_ * std::max(kAlphaPerMass, kMinPenaltyRatio / h24_);
  }

  // Augmented-Lagrangian solution of M q'' + Phi_q^T lambda = Q, Phi_q q'' + d/dt(Phi_q) q' = 0 at
  // t = 0. Only the positive definite M + alpha Phi_q^T Phi_q is factored, so redundant (rank-
  // deficient) constraints are fine: lambda then converges to one of the admissible multipliers.
  void initial_accelerations() {
    nat_.Phi_q(q_, Phi_q_);
    nat_.Phi_q_dot_v(q_, v_, gamma_);
    T_.noalias() = alpha_acc_ * Phi_q_.transpose() * Phi_q_;
    T_.diagonal() += M_;
    factor();
    ++stats_.jacobian_evals;
    const double a_ref = std::max(inf_norm(Q_.cwiseQuotient(M_)), inf_norm(gamma_));
    lambda_.setZero();
    for (int it = 1;; ++it) {
      mu_ = lambda_ + alpha_acc_ * gamma_;
      w_.noalias() = Phi_q_.transpose() * mu_;
      w_ = Q_ - w_;
      solve(w_, a_);
      ++stats_.rhs_evals;
      r_.noalias() = Phi_q_ * a_;
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

  // One step of the trapezoidal rule: Newton-Raphson on q_{n+1} with the multiplier update.
  void newton() {
    q_n_ = q_;
    v_n_ = v_;
    a_n_ = a_;
    c_ = q_n_ + h_ * v_n_ + h24_ * a_n_;
    q_ = q_n_ + h_ * v_n_ + (2.0 * h24_) * a_n_;  // predictor: Taylor to second order
    nat_.Phi(q_, Phi_);
    for (int it = 1;; ++it) {
      nat_.Phi_q(q_, Phi_q_);
      mu_ = alpha_ * Phi_ + lambda_;
      f_.noalias() = Phi_q_.transpose() * mu_;
      f_ = M_.cwiseProduct(q_ - c_) + h24_ * (f_ - Q_);
      T_.noalias() = alpha_ * Phi_q_.transpose() * Phi_q_;
      nat_.add_Phi_qq_times(lambda_, T_);
      T_ *= h24_;
      T_.diagonal() += M_;
      factor();
      solve(f_, dq_);
      q_ -= dq_;
      nat_.Phi(q_, Phi_);
      lambda_ += alpha_ * Phi_;
      ++stats_.rhs_evals;
      ++stats_.jacobian_evals;
      ++stats_.newton_iterations;
      const double t_new = time() + h_;
      if (!dq_.allFinite() || !lambda_.allFinite())
        throw SolverError(fmt::format("alm-index3: non-finite state at t = {:.9g} s", t_new));
      const double dq_norm = inf_norm(dq_);
      if (dq_norm <= tol_q_) return;
      if (it == kMaxNewtonIterations) {
        ++stats_.failures;
        throw SolverError(fmt::format(
            "alm-index3: Newton-Raphson did not converge at t = {:.9g} s ({} iterations, |dq| = {:.3g} m > {:.3g} m)",
            t_new, it, dq_norm, tol_q_));
      }
    }
  }

  // Mass-orthogonal projections (Cuadrado, Cugat & Dopico), with the last Newton tangent f_q as the
  // projection matrix so that no further factorization is needed:
  //   f_q q'  = W q'*
  //   f_q q'' = W q''* - h^2/4 alpha Phi_q^T (d/dt(Phi_q) q'),    W = f_q - h^2/4 alpha Phi_q^T Phi_q
  // i.e. q' = q'* - f_q^-1 h^2/4 alpha Phi_q^T Phi_q q'*, and likewise for q''. W = M + h^2/4 sum_k
  // lambda_k d2Phi_k/dq2 is the mass matrix plus the tangent's geometric stiffness. The published
  // form has M on the right, as its tangent leaves d2Phi/dq2 out; with the geometric stiffness on the
  // left only, the projection scales the free velocity by 1 - O(h^2 lambda / 4 m L) every step and
  // drains kinetic energy (0.46 J in 10 s on the pendulum at h = 1e-3 s). With W on both sides the
  // result equals refactoring M + h^2/4 alpha Phi_q^T Phi_q at the converged q (checked: same drift,
  // violations and error to 4 digits).
  void project_velocities_and_accelerations() {
    const double s = 2.0 / h_;
    v_ = s * (q_ - q_n_) - v_n_;                        // q'*
    a_ = (s * s) * (q_ - q_n_) - (2.0 * s) * v_n_ - a_n_;  // q''*
    nat_.Phi_q(q_, Phi_q_);  // at the converged q: the projected q' must satisfy its constraints
    const double k = h24_ * alpha_;
    r_.noalias() = Phi_q_ * v_;
    r_ *= k;
    w_.noalias() = Phi_q_.transpose() * r_;
    solve(w_, dq_);
    v_ -= dq_;
    nat_.Phi_q_dot_v(q_, v_, r_);
    r_.noalias() += Phi_q_ * a_;
    r_ *= k;
    w_.noalias() = Phi_q_.transpose() * r_;
    solve(w_, dq_);
    a_ -= dq_;
    if (!v_.allFinite() || !a_.allFinite())
      throw SolverError(fmt::format("alm-index3: non-finite state at t = {:.9g} s", time() + h_));
  }

  NaturalCoordinates nat_;
  int n_q_, n_c_;
  Vec M_, Q_, q0_, v0_;
  Vec q_, v_, a_;         // state at time()
  Vec q_n_, v_n_, a_n_;   // state at the start of the step
  Vec c_, f_, dq_, w_;    // c = q_n + h q'_n + h^2/4 q''_n; residual; correction; scratch
  CVec Phi_, lambda_, mu_, r_, gamma_;
  Jac Phi_q_;
  Mat T_;                 // Newton tangent f_q (also the projection matrix)
  Mat T_inv_;             // f_q^-1 (tiny fixed sizes)
  Eigen::LDLT<Mat> ldlt_;  // f_q = L D L^T (otherwise)
  double h_ = 0.0, h24_ = 0.0;  // step size (set_step()) and h^2/4
  double m_ref_ = 1.0, alpha_ = 0.0, alpha_acc_ = 0.0, tol_q_ = 0.0;
};

// Fixed sizes for the smallest planar systems (pendulum, double pendulum), dynamic otherwise.
std::unique_ptr<Simulator> make_sized(const Model& model, double h) {
  if (model.nq() == 2 && model.nc() == 1) return std::make_unique<TrapezoidalSimulator<2, 1>>(model, h);
  if (model.nq() == 4 && model.nc() == 2) return std::make_unique<TrapezoidalSimulator<4, 2>>(model, h);
  return std::make_unique<TrapezoidalSimulator<Eigen::Dynamic, Eigen::Dynamic>>(model, h);
}

class AlmIndex3 final : public Formulation {
 public:
  std::string name() const override { return "alm-index3"; }
  std::string description() const override {
    return "natural coordinates; index-3 augmented Lagrangian with mass-orthogonal projections (ALI3-P)";
  }
  std::vector<IntegratorInfo> integrators() const override {
    return {{"trapezoidal", SettingKind::kFixedStep, 0.05, 1e-5,
             "trapezoidal rule, Newton-Raphson, mass-orthogonal projections"}};
  }
  std::string unsupported_reason(const Model& model) const override {
    return model.nq() == 0 ? "the model has no bodies" : "";
  }
  std::unique_ptr<Simulator> create(const Model& model, const std::string& integrator, double setting) const override {
    if (integrator != "trapezoidal")
      throw SolverError(fmt::format("alm-index3: unknown integrator '{}' (known: trapezoidal)", integrator));
    if (!(setting > 0.0) || !std::isfinite(setting))
      throw SolverError(fmt::format("alm-index3: step size must be positive and finite, got {}", setting));
    if (const std::string why = unsupported_reason(model); !why.empty()) throw SolverError("alm-index3: " + why);
    return make_sized(model, setting);
  }
  std::string linearization_unsupported_reason(const Model& model) const override {
    return linearizer_unsupported_reason(model);
  }
  std::unique_ptr<Linearizer> create_linearizer(const Model& model) const override {
    return make_linearizer(model, kAlphaPerMass);
  }
};

}  // namespace

MBS_REGISTER_FORMULATION(AlmIndex3);

}  // namespace mbs::alm_index3
