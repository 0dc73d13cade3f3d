// Formulation "penalty": natural (fully Cartesian) coordinates q with the penalty formulation of
// Bayo, García de Jalón and Serna (1988),
//
//   M q'' + Phi_q^T lambda = Q,   lambda = alpha (Phi'' + 2 xi omega Phi' + omega^2 Phi),
//   Phi'' = Phi_q q'' + d/dt(Phi_q) q',
//
// so no multipliers are unknowns: lambda is the penalty's estimate of them, and the violation Phi
// follows a damped oscillator driven by lambda / alpha. Integrated by the trapezoidal rule with
// Newton-Raphson on the accelerations at the new time.
#include <fmt/format.h>

#include <Eigen/LU>
#include <algorithm>
#include <cmath>
#include <limits>

#include "common/linear_solver.hpp"
#include "common/modified_newton.hpp"
#include "common/sparse_natural.hpp"
#include "core/formulation.hpp"
#include "core/natural_coordinates.hpp"
#include "common/quadratic_rows.hpp"
#include "penalty/linearizer.hpp"
#include "penalty/penalty.hpp"

namespace mbs::penalty {
namespace {

// Penalty factor per kilogram of the heaviest point (alpha is a mass: it scales m/s^2 into N), or
// per kilogram of the softest constraint mode's mass when that is much larger (a long closed
// chain; common/sparse_natural.hpp, penalty_mass_scale).
// Finite alpha leaves the constraint acceleration Phi'' + 2 xi omega Phi' + omega^2 Phi at
// lambda / alpha, so the violation tracks lambda / (alpha omega^2) with a
// lag that dissipates energy (~2 xi lambda'^2 / (alpha omega^3)): at 1e8 a small share of the
// IFToMM pendulum's energy rule (docs/formulations.md, Method notes). Larger alpha gains little and
// raises the round-off floor of q'' (the tangent's conditioning is ~alpha / m).
constexpr double kAlphaPerMass = 1e8;
// Critically damped stabilization at 10 rad/s, Bayo et al.'s values: violations die out within a
// fraction of a second, slowly enough to stay non-stiff (omega h <= 0.5 over the tuner's range).
constexpr double kXi = 1.0;
constexpr double kOmega = 10.0;  // rad/s
// Newton stops when |dq''|_inf <= kNewtonTol * scale, scale = max(|q''|_inf, |Q_i / M_i|_inf): the
// accelerations themselves, or gravity's when they vanish. From the extrapolated predictor Newton
// converges quadratically, in a few iterations per step, and the result does not depend on the
// tolerance over a wide range (docs/formulations.md, Method notes); the round-off floor, where
// iterations start to be wasted, is near 1e-12 relative at alpha / m = 1e8.
constexpr double kNewtonTol = 1e-10;
constexpr int kMaxNewtonIterations = 20;
// The tangent's solver: dense LU (the pendulums' tangents, at most 4 x 4, by Eigen's closed-form
// inverse: a fraction of a pivoted LU's cost, as in alm-index3; Newton's test guards its accuracy),
// or KLU on Phi_q's pattern. G is not Phi_q, so the tangent is unsymmetric (tangent()).
template <int NQ>
using DenseTangent = DenseSolver<NQ, Factorization::kLu>;
using SparseTangentSolver = SparseSolver<SparseTangent>;

// Sizes: NQ natural coordinates, NC rods; fixed for the smallest planar systems (faster than the
// dynamic-size code: docs/formulations.md, Method notes), Eigen::Dynamic otherwise.
template <int NQ, int NC, typename Solver>
class TrapezoidalSimulator final : public FixedStepSimulator {
  using VecQ = Eigen::Matrix<double, NQ, 1>;
  using VecC = Eigen::Matrix<double, NC, 1>;
  using MatCQ = Eigen::Matrix<double, NC, NQ>;
  using MatQQ = Eigen::Matrix<double, NQ, NQ>;
  using Jacobian = std::conditional_t<Solver::kSparse, SparseJacobian, MatCQ>;

 public:
  TrapezoidalSimulator(const Model& model, double h)
      : FixedStepSimulator(model, h),
        nat_(model),
        nq_(nat_.nq()),
        nc_(nat_.nc()),
        M_(nat_.M_diag()),
        Q_(nat_.Q()),
        alpha_(kAlphaPerMass * penalty_mass_scale(nat_, model, nq_ > 0 ? M_.maxCoeff() : 1.0)),
        q0_(model.initial_q()),
        v0_(model.initial_v()),
        q_(nq_), v_(nq_), a_(nq_), a_prev_(nq_),
        q_new_(nq_), v_new_(nq_), a_new_(nq_),
        r_(nq_), da_(nq_), w_(nq_), q_w_(nq_),
        Phi_(nc_), Phi_dot_(nc_), Phi_q_dot_v_(nc_), lambda_(nc_), mu_(nc_), lambda_c_(nc_),
        Phi_q_(make_jacobian<Jacobian>(nat_)), G_(make_jacobian<Jacobian>(nat_)),
        K_(dense(nq_), dense(nq_)), C_(dense(nq_), dense(nq_)), solver_(nq_, nat_, Phi_q_, false, true) {
    accel_floor_ = nq_ > 0 ? (Q_.array() / M_.array()).abs().maxCoeff() : 0.0;
  }

 private:
  void do_initialize_state() override {
    q_ = q0_;
    v_ = v0_;
    // The penalty equation is linear in q'' at fixed q, q': one Newton iteration at h = 0 from
    // q'' = 0 solves (M + alpha Phi_q^T Phi_q) q'' = Q - alpha Phi_q^T (...) exactly.
    a_.setZero();
    a_new_.setZero();
    lambda_c_.setZero();  // tangent(0) scales it by h^2 = 0: garbage there could be NaN, and 0 NaN = NaN
    residual(0.0);
    tangent(0.0);
    ++stats_.rhs_evals;
    ++stats_.jacobian_evals;
    solver_.solve(r_, da_);
    a_ = -da_;
    lambda_c_ = lambda_;
    g_times_sub(alpha_, da_, G_, lambda_c_);  // d(lambda)/dq'' = alpha G
    if (!a_.allFinite()) throw SolverError("penalty: non-finite initial accelerations");
  }

  void do_fixed_step(double h) override {
    // Predictor: q'' extrapolated linearly, error O(h^2) rather than O(h) for q''_n (fewer Newton
    // iterations: docs/formulations.md, Method notes); the first step (time() == 0) has
    // no history.
    if (time() > 0.0)
      a_new_ = 2.0 * a_ - a_prev_;
    else
      a_new_ = a_;
    // Modified Newton on the dense paths (common/modified_newton.hpp): the step's first tangent is
    // kept while the corrections at least halve (as gen-alpha does); the tangent moves with q only
    // through h^2/4 dq'', so the second correction, which mostly confirms convergence, rarely needs
    // a fresh one. The sparse path keeps full Newton: with its tangent refactored less often, KLU
    // met a singular tangent on a long chain (docs/formulations.md, Method notes).
    h_ = h;
    ModifiedNewton::run(*this, kNewton, stats_);
    advance(h);  // q, q' from the converged q''
    if (!q_new_.allFinite() || !v_new_.allFinite() || !a_new_.allFinite()) {
      ++stats_.failures;
      throw SolverError(fmt::format("penalty: non-finite state at t = {:.9g} s", time() + h));
    }
    q_.swap(q_new_);
    v_.swap(v_new_);
    a_prev_.swap(a_);
    a_.swap(a_new_);
  }

  void do_model_state() override {
    q_model_ = q_;
    v_model_ = v_;
  }

  // Newton's hooks (common/modified_newton.hpp), on the accelerations at the new time.
  static constexpr NewtonRules kNewton{kMaxNewtonIterations, 0.5, !Solver::kSparse};
  friend ModifiedNewton;
  void newton_residual() { residual(h_); }
  void newton_tangent() { tangent(h_); }
  double newton_correct() {
    solver_.solve(r_, da_);
    a_new_ -= da_;
    lambda_c_ = lambda_;
    g_times_sub(alpha_, da_, G_, lambda_c_);  // d(lambda)/dq'' = alpha G
    return da_.template lpNorm<Eigen::Infinity>();
  }
  bool newton_converged(const NewtonIterate& x) const {
    return x.dq <= kNewtonTol * std::max(a_new_.template lpNorm<Eigen::Infinity>(), accel_floor_);
  }
  [[noreturn]] void newton_failed(const NewtonIterate& x) const {
    throw SolverError(fmt::format("penalty: Newton-Raphson did not converge at t = {:.9g} s (|dq''| = {:.3g})", time() + h_, x.dq));
  }

  // Trapezoidal rule: q, q' at the new time from the unknown accelerations a_new_.
  void advance(double h) {
    q_new_ = q_ + h * v_ + (0.25 * h * h) * (a_ + a_new_);
    v_new_ = v_ + (0.5 * h) * (a_ + a_new_);
  }

  // r = M q'' + Phi_q^T lambda - Q at the new time (q_new_, v_new_, a_new_).
  void residual(double h) {
    advance(h);
    cf_.Phi(q_new_, Phi_);
    cf_.Phi_q_dot_v(q_new_, v_new_, Phi_q_dot_v_);
    evaluate_jacobian(cf_, q_new_, Phi_q_);
    const auto& J = matrix_of(Phi_q_);
    Phi_dot_.noalias() = J * v_new_;
    lambda_ = Phi_q_dot_v_ + (2.0 * kXi * kOmega) * Phi_dot_ + (kOmega * kOmega) * Phi_;
    lambda_.noalias() += J * a_new_;
    lambda_ *= alpha_;
    if (nat_.has_force_elements()) nat_.Q(q_new_, v_new_, Q_);
    r_ = M_.cwiseProduct(a_new_) - Q_;
    r_.noalias() += J.transpose() * lambda_;
  }

  // y -= s G x (G of the last tangent), dense or sparse.
  static void g_times_sub(double s, const VecQ& x, const MatCQ& G, VecC& y) { y.noalias() -= s * G * x; }
  static void g_times_sub(double s, const VecQ& x, const SparseJacobian& G, VecC& y) {
    y.noalias() -= s * (G.matrix() * x);
  }

  // Tangent dr/dq'' = M + alpha Phi_q^T G + h^2/4 sum_k lambda_k Phi_k,qq, factorized.
  // With dq/dq'' = h^2/4 and dq'/dq'' = h/2 (trapezoidal chain factors), row k of
  // G = d(lambda / alpha)/dq'' is
  //   c Phi_k,q + (Phi_k,qq w)^T,   c = 1 + h xi omega + h^2 omega^2 / 4,
  //   w = h q' + h^2/4 (q'' + 2 xi omega q'),
  // from d(Phi_q q'')/dq, d(d/dt(Phi_q) q')/dq' = 2 (Phi_qq q')^T, d(Phi_q q')/dq and the direct terms.
  // Natural-coordinate constraints are quadratic in q, so Phi_q is affine and
  // Phi_q(q + w) = Phi_q(q) + [(Phi_k,qq w)^T], giving G = Phi_q(q + w) + (c - 1) Phi_q(q) without
  // forming the Hessians. G is not Phi_q, so the tangent is unsymmetric: LU, not LDLT.
  // The geometric stiffness (last term) takes lambda at the latest corrected q'' (lambda_c_), not at
  // the iterate: at the predictor lambda holds alpha times its constraint-acceleration error (far
  // above the true force), and a stiffness built on it derails the correction (a long chain then
  // fails to converge; dropping the term converges, in more iterations; Method notes).
  // From the second iteration on lambda_c_ equals lambda to first order, so Newton stays quadratic.
  void tangent(double h) {
    const double c = 1.0 + h * kXi * kOmega + 0.25 * h * h * kOmega * kOmega;
    w_ = h * v_new_ + (0.25 * h * h) * (a_new_ + (2.0 * kXi * kOmega) * v_new_);
    q_w_ = q_new_ + w_;
    assemble_tangent(h, c, solver_.matrix());
    if (!solver_.factor())
      throw SolverError(fmt::format("penalty: the sparse LU of the tangent failed at t = {:.9g} s", time() + h));
  }
  // On Phi_q's pattern (no force elements on this path; Phi_q_ and G_ share one pattern),
  void assemble_tangent(double h, double c, SparseTangent& T) {
    G_.evaluate(q_w_);
    const int nnz = G_.nonzeros();
    double* g = G_.matrix().valuePtr();
    const double* p = Phi_q_.matrix().valuePtr();
    for (int i = 0; i < nnz; ++i) g[i] += (c - 1.0) * p[i];
    T.set_zero();
    T.add_gram(alpha_, Phi_q_, G_);
    T.add_geometric_stiffness(lambda_c_, 0.25 * h * h);
    T.add_diagonal(M_);
  }
  // or dense.
  void assemble_tangent(double h, double c, MatQQ& T) {
    cf_.Phi_q(q_w_, G_);
    G_ += (c - 1.0) * Phi_q_;
    T.noalias() = alpha_ * Phi_q_.transpose() * G_;
    T.diagonal() += M_;
    mu_ = (0.25 * h * h) * lambda_c_;
    cf_.add_Phi_qq_times(mu_, T);
    if (nat_.has_force_elements()) {  // -dQ/dq'' = -(h^2/4 dQ/dq + h/2 dQ/dq')
      K_.setZero();
      C_.setZero();
      nat_.add_Q_jacobians(q_new_, v_new_, K_, C_);
      T.noalias() -= (0.25 * h * h) * K_;
      T.noalias() -= (0.5 * h) * C_;
    }
  }

  static int dense(int n) { return Solver::kSparse ? 0 : n; }  // dense matrices are empty on the sparse path

  NaturalCoordinates nat_;
  ConstraintFunctions<NQ, NC> cf_{nat_};  // Phi, Phi_q, ...: explicit quadratics at fixed sizes
  int nq_, nc_;
  VecQ M_, Q_;          // diagonal of M (kg), applied forces Q (N)
  double alpha_;        // kg
  double accel_floor_;  // m/s^2, gravity's accelerations: Newton's scale when q'' vanishes
  VecQ q0_, v0_;
  VecQ q_, v_, a_, a_prev_;     // state at t_n (a = q''), and q'' at t_{n-1}
  VecQ q_new_, v_new_, a_new_;  // Newton iterate at t_n + h
  VecQ r_, da_, w_, q_w_;
  VecC Phi_, Phi_dot_, Phi_q_dot_v_, lambda_, mu_;
  VecC lambda_c_;  // lambda at the latest corrected q'' (first order), for the geometric stiffness
  Jacobian Phi_q_, G_;
  MatQQ K_, C_;  // dQ/dq, dQ/dq' (force elements only)
  Solver solver_;  // the tangent dr/dq'' and its factorization
  double h_ = 0.0;  // the step in progress
};

class Penalty final : public Formulation {
 public:
  std::string name() const override { return "penalty"; }
  std::string description() const override {
    return "natural coordinates, penalty formulation (Bayo, Garcia de Jalon, Serna 1988)";
  }
  std::vector<IntegratorInfo> integrators() const override {
    return {{"trapezoidal", SettingKind::kFixedStep, 0.05, 1e-5, "trapezoidal rule, Newton-Raphson on accelerations", ""}};
  }
  Accepts accepts() const override { return {{ElementRole::kJoint, ElementRole::kForce}, {}}; }
  std::unique_ptr<Simulator> create(const Model& model, const std::string& integrator, double setting) const override {
    if (integrator != "trapezoidal") throw SolverError("penalty: unknown integrator '" + integrator + "'");
    return make_simulator(model, setting);
  }
  std::string linearization_unsupported_reason(const Model& model) const override {
    return linearizer_unsupported_reason(model);
  }
  std::unique_ptr<Linearizer> create_linearizer(const Model& model) const override {
    return make_linearizer(model, kAlphaPerMass, kXi, kOmega);
  }
};

}  // namespace

std::unique_ptr<Simulator> make_simulator(const Model& model, double h, LinearAlgebra la) {
  if (!(h > 0.0) || !std::isfinite(h)) throw SolverError("penalty: step size must be positive and finite");
  constexpr int X = Eigen::Dynamic;
  if (sparse_path(la, model, kSparseLuMinCoordinates))
    return std::make_unique<TrapezoidalSimulator<X, X, SparseTangentSolver>>(model, h);
  if (model.nq() == 2 && model.nc() == 1) return std::make_unique<TrapezoidalSimulator<2, 1, DenseTangent<2>>>(model, h);
  if (model.nq() == 4 && model.nc() == 2) return std::make_unique<TrapezoidalSimulator<4, 2, DenseTangent<4>>>(model, h);
  return std::make_unique<TrapezoidalSimulator<X, X, DenseTangent<X>>>(model, h);
}

MBS_REGISTER_FORMULATION(Penalty);

}  // namespace mbs::penalty
