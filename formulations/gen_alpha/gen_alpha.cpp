// Formulation "gen-alpha": natural coordinates, the index-3 equations of motion
//   M q'' + Phi_q^T lambda = Q(q, q'),   Phi(q) = 0
// integrated by the generalized-alpha method of Chung & Hulbert as Arnold & Bruels (2007) apply it
// to constrained mechanical systems: with a the algorithmic acceleration,
//   q_{n+1} = q_n + h q'_n + h^2 (1/2 - beta) a_n + h^2 beta a_{n+1}
//   q'_{n+1} = q'_n + h (1 - gamma) a_n + h gamma a_{n+1}
//   (1 - alpha_m) a_{n+1} + alpha_m a_n = (1 - alpha_f) q''_{n+1} + alpha_f q''_n
// and the equations of motion and Phi = 0 holding at t_{n+1}. Newton on (q_{n+1}, lambda_{n+1}):
// a correction dq moves q'' by beta' dq and q' by gamma' dq, beta' = (1 - alpha_m) / (h^2 beta
// (1 - alpha_f)), gamma' = gamma / (h beta), so the iteration matrix is
//   [ M beta' + sum_k lambda_k Phi_k,qq - dQ/dq - gamma' dQ/dq'   Phi_q^T ]
//   [ Phi_q                                                        0      ].
// It is scaled (Bottasso, Bauchau & Cardona 2008; Arnold & Bruels, sec. 4): the first row is divided
// by beta' and lambda's correction measured in units of beta', so the matrix is M + O(h^2) beside
// Phi_q and Phi_q^T, its condition number O(1) instead of O(1/h^4).
//
// No projection: the positions satisfy Phi = 0 to the Newton tolerance, the velocities only to the
// method's order (index 3), and the reported q' is the method's own.
// Redundant constraints: the rows chosen once at setup (common/independent_rows.hpp), as in
// projection and ida-index3; at a singular position (rank lost along the motion) the LU's pivoting
// copes, and Newton accepts a stall at its round-off floor once Phi holds (do_fixed_step()).
#include "gen_alpha/gen_alpha.hpp"

#include <Eigen/Dense>
#include <fmt/format.h>

#include <cmath>
#include <string>
#include <vector>

#include "common/fixed_segments.hpp"
#include "common/independent_rows.hpp"
#include "common/kept_constraints.hpp"
#include "common/length_scale.hpp"
#include "common/linear_solver.hpp"
#include "common/modified_newton.hpp"
#include "core/natural_coordinates.hpp"
#include "common/quadratic_rows.hpp"
#include "core/natural_coordinates_rows.hpp"

namespace mbs::gen_alpha {

Coefficients coefficients(double rho_inf) {
  Coefficients c{};
  c.alpha_m = (2.0 * rho_inf - 1.0) / (rho_inf + 1.0);
  c.alpha_f = rho_inf / (rho_inf + 1.0);
  c.gamma = 0.5 - c.alpha_m + c.alpha_f;
  c.beta = 0.25 * (c.gamma + 0.5) * (c.gamma + 0.5);
  return c;
}

namespace {

// Newton stops when |dq|_inf <= kNewtonTol L (L the longest length of the model): since the
// iteration solves Phi_q dq = -Phi, |Phi| is then below |Phi_q| |dq| as well, and convergence is
// quadratic, so the converged q is on the constraints to round-off (alm-index3 uses the same test).
constexpr double kNewtonTol = 1e-10;
// Modified Newton (common/modified_newton.hpp): the step's first matrix is kept while the
// corrections contract by at least 1/2 an iteration, and refactored at the current iterate when
// they do not (slow: stalled).
constexpr NewtonRules kNewton{25, 0.5, true};

// The sparse KKT matrix on the kept rows' Jacobian pattern (common/linear_solver.hpp).
struct Kkt : SparseKkt {
  template <typename Kept>
  Kkt(const NaturalCoordinates& nat, const Kept& kc) : SparseKkt(nat, kc.sparse_G()) {}
};

template <int NQ, int NC>
constexpr int kkt_size() {
  return (NQ == Eigen::Dynamic || NC == Eigen::Dynamic) ? Eigen::Dynamic : NQ + NC;
}
// The iteration matrix's solver: dense LU (the closed-form inverse at the pendulum's 3 x 3: the
// scaled matrix is well conditioned, M + O(h^2) beside Phi_q), or KLU on the KKT pattern.
template <int NQ, int NC>
using DenseKkt = DenseSolver<kkt_size<NQ, NC>(), Factorization::kLu>;
using SparseKktSolver = SparseSolver<Kkt>;

template <int NQ, int NC, typename Solver>
class GenAlphaSimulator final : public FixedStepSimulator {
 public:
  static constexpr int NK = kkt_size<NQ, NC>();
  using Vec = Eigen::Matrix<double, NQ, 1>;
  using CVec = Eigen::Matrix<double, NC, 1>;
  using KVec = Eigen::Matrix<double, NK, 1>;
  using Mat = Eigen::Matrix<double, NQ, NQ>;
  using KMat = Eigen::Matrix<double, NK, NK>;

  GenAlphaSimulator(const Model& model, double rho_inf, double h, std::vector<int> rows)
      : FixedStepSimulator(model, h), nat_(model), c_(coefficients(rho_inf)),
        kc_(nat_, std::move(rows), stats_, "gen-alpha"), n_q_(nat_.nq()), n_c_(nat_.nc()), n_r_(kc_.kept_rows()),
        redundant_(n_r_ < n_c_), forces_(nat_.has_force_elements()), M_(nat_.M_diag()), Q_(nat_.Q()),
        q0_(model.initial_q()), v0_(model.initial_v()), q_(n_q_), v_(n_q_), a_(n_q_), qdd_(n_q_), q_n_(n_q_), v_n_(n_q_),
        a_n_(n_q_), qdd_n_(n_q_), r_(n_q_), dq_(n_q_), Phi_(n_r_), lambda_(n_r_), mu_all_(n_c_), b_(n_q_ + n_r_),
        x_(n_q_ + n_r_), T_(dense(n_q_), dense(n_q_)), K_(forces_ ? n_q_ : 0, forces_ ? n_q_ : 0), C_(forces_ ? n_q_ : 0, forces_ ? n_q_ : 0),
        solver_(n_q_ + n_r_, nat_, kc_) {
    const double length = max_model_length(model);
    tol_q_ = kNewtonTol * (length > 0.0 ? length : 1.0);
    mu_all_.setZero();
  }

 private:
  void do_step_size_chosen(double h) override {
    h_ = h;
    beta_p_ = (1.0 - c_.alpha_m) / (h * h * c_.beta * (1.0 - c_.alpha_f));
    gamma_p_ = c_.gamma / (h * c_.beta);
  }

  void do_initialize_state() override {
    q_ = q0_;
    v_ = v0_;
    initial_accelerations();
    a_ = qdd_;
  }

  void do_model_state() override {
    q_model_ = q_;
    v_model_ = v_;
  }

  // Consistent q''(0) and lambda(0) (common/kept_constraints.hpp).
  void initial_accelerations() {
    if (forces_) nat_.Q(q_, v_, Q_);
    kc_.load(q_, v_);
    kc_.accelerations(Q_, qdd_, lambda_);
    ++stats_.rhs_evals;
  }

  void do_fixed_step(double /*h*/) override {
    q_n_ = q_;
    v_n_ = v_;
    a_n_ = a_;
    qdd_n_ = qdd_;
    // Predictor: q''_{n+1} = q''_n and lambda_{n+1} = lambda_n, so a_{n+1} = (q''_n - alpha_m a_n) / (1 - alpha_m).
    const double h = h_, b = c_.beta, g = c_.gamma;
    a_ = (qdd_n_ - c_.alpha_m * a_n_) / (1.0 - c_.alpha_m);
    q_ = q_n_ + h * v_n_ + (h * h * (0.5 - b)) * a_n_ + (h * h * b) * a_;
    v_ = v_n_ + (h * (1.0 - g)) * a_n_ + (h * g) * a_;
    to_a_ = 1.0 / (h * h * b);
    ModifiedNewton::run(*this, kNewton, stats_);
  }

  // Newton's hooks (common/modified_newton.hpp).
  friend ModifiedNewton;
  void newton_residual() {
    constraints(q_);
    if (forces_) nat_.Q(q_, v_, Q_);
    jt_times(lambda_, r_);
    r_ += M_.cwiseProduct(qdd_) - Q_;
  }
  void newton_tangent() {
    assemble(1.0 / beta_p_, solver_.matrix());
    if (!solver_.factor())
      throw SolverError(fmt::format("gen-alpha: the sparse LU of the iteration matrix failed at t = {:.9g} s", time()));
  }
  double newton_correct() {
    qpart(b_) = -r_ / beta_p_;
    cpart(b_) = -Phi_;
    solver_.solve(b_, x_);
    dq_ = qpart(x_);
    q_ += dq_;
    v_ += gamma_p_ * dq_;
    qdd_ += beta_p_ * dq_;
    a_ += to_a_ * dq_;
    lambda_ += beta_p_ * cpart(x_);
    return inf_norm(dq_);
  }
  bool newton_converged(const NewtonIterate& x) const {
    if (!dq_.allFinite() || !lambda_.allFinite())
      throw SolverError(fmt::format("gen-alpha: non-finite state at t = {:.9g} s", time() + h_));
    // Near a singular position the iteration matrix is nearly singular and the corrections stop
    // falling at a round-off floor above the tolerance; once Phi holds there, the step is done.
    return x.dq <= tol_q_ || (x.slow && x.fresh && inf_norm(Phi_) <= tol_q_);
  }
  [[noreturn]] void newton_failed(const NewtonIterate& x) const {
    throw SolverError(fmt::format("gen-alpha: Newton did not converge at t = {:.9g} s ({} iterations, |dq| = {:.3g} m > {:.3g} m)",
                                  time() + h_, x.it, x.dq, tol_q_));
  }

  // Phi and Phi_q of the kept rows at q.
  void constraints(const Vec& q) {
    kc_.load(q);
    kc_.constraints(Phi_);
    kc_.evaluate_G();
  }
  void jt_times(const CVec& x, Vec& y) const { kc_.gt_times(x, y); }  // y = Phi_q^T x

  // The scaled iteration matrix [M + s (sum lambda_k Phi_k,qq - dQ/dq - gamma' dQ/dq'), Phi_q^T; Phi_q, 0],
  // s = 1 / beta': on the KKT pattern (no force elements on this path: common/sparse_natural.hpp),
  void assemble(double s, Kkt& kkt) { kkt.assemble(M_, s, lambda_, kc_.sparse_G()); }
  // or dense.
  template <typename KMatrix>
  void assemble(double s, KMatrix& A) {
    T_.setZero();
    if (!redundant_) {
      cf_.add_Phi_qq_times(lambda_, T_);
    } else {
      kc_.scatter(lambda_, mu_all_);
      rows::add_Phi_qq_times(nat_, mu_all_, T_);
    }
    if (forces_) {
      K_.setZero();
      C_.setZero();
      nat_.add_Q_jacobians(q_, v_, K_, C_);
      T_ -= K_ + gamma_p_ * C_;
    }
    T_ *= s;
    T_.diagonal() += M_;
    if constexpr (kFixed) {  // every row kept at fixed sizes: n_r_ == NC
      A.template topLeftCorner<NQ, NQ>() = T_;
      A.template topRightCorner<NQ, NC>() = kc_.dense_G().transpose();
      A.template bottomLeftCorner<NC, NQ>() = kc_.dense_G();
      A.template bottomRightCorner<NC, NC>().setZero();
    } else {
      A.topLeftCorner(n_q_, n_q_) = T_;
      A.topRightCorner(n_q_, n_r_) = kc_.dense_G().transpose();
      A.bottomLeftCorner(n_r_, n_q_) = kc_.dense_G();
      A.bottomRightCorner(n_r_, n_r_).setZero();
    }
  }

  // The q and lambda parts of an iteration vector: fixed-size segments at fixed sizes, where every
  // row is kept (n_r_ == NC).
  static constexpr bool kFixed = NK != Eigen::Dynamic;
  template <typename V>
  auto qpart(V& x) const { return head_of<NQ>(x, n_q_); }
  template <typename V>
  auto cpart(V& x) const { return tail_of<NC>(x, n_r_); }

  // Dense matrices are sized 0 on the sparse path; fixed sizes are always dense.
  static int dense(int n) { return Solver::kSparse ? 0 : n; }

  NaturalCoordinates nat_;
  ConstraintFunctions<NQ, NC> cf_{nat_};  // Phi, Phi_q, ...: explicit quadratics at fixed sizes
  Coefficients c_;
  KeptConstraints<NQ, NC, Solver::kSparse> kc_;  // kept (independent) constraint rows, Phi_q of them, consistent start
  int n_q_, n_c_, n_r_;
  bool redundant_;         // rows are dropped: the geometric stiffness takes every row's multiplier
  bool forces_;
  Vec M_, Q_, q0_, v0_;
  Vec q_, v_, a_, qdd_;            // state at time(): a the algorithmic acceleration, qdd the true one
  Vec q_n_, v_n_, a_n_, qdd_n_;    // at the step's start
  Vec r_, dq_;
  CVec Phi_, lambda_;              // kept rows
  Eigen::VectorXd mu_all_;         // every row's multiplier (redundant models)
  KVec b_, x_;                     // right-hand side and solution of the iteration
  Mat T_;                          // the matrix's q block (dense path)
  Eigen::MatrixXd K_, C_;          // dQ/dq, dQ/dq' (force elements)
  Solver solver_;                  // the iteration matrix and its factorization
  double h_ = 0.0, beta_p_ = 0.0, gamma_p_ = 0.0, tol_q_ = 0.0;
  double to_a_ = 0.0;              // 1 / (h^2 beta): a's change per unit of q's
};

// The two cases: the documented choice rho_inf = 0.9 (Exudyn's default; Arnold & Bruels's examples
// use 0.9 too), slight high-frequency dissipation that damps the index-3 multipliers' start-up
// oscillations; and rho_inf = 1, no dissipation (the trapezoidal rule's energy behaviour).
struct Variant {
  const char* name;
  double rho_inf;
};
constexpr Variant kVariants[] = {{"rho-0.9", 0.9}, {"rho-1", 1.0}};

class GenAlpha final : public Formulation {
 public:
  std::string name() const override { return "gen-alpha"; }
  std::string description() const override {
    return "natural coordinates; index-3 generalized-alpha (Arnold & Bruels 2007), Newton on (q, lambda)";
  }
  std::vector<IntegratorInfo> integrators() const override {
    return {{kVariants[0].name, SettingKind::kFixedStep, 0.05, 1e-5, "generalized-alpha, rho_inf = 0.9, scaled Newton on (q, lambda)", ""},
            {kVariants[1].name, SettingKind::kFixedStep, 0.05, 1e-5, "generalized-alpha, rho_inf = 1 (no numerical dissipation): a control",
             "without numerical dissipation the index-3 method is unstable: the velocity-level constraint violation "
             "and the multipliers grow from step to step (Negrut et al. 2007 on HHT at index 3; docs/formulations.md)"}};
  }
  Accepts accepts() const override { return {{ElementRole::kJoint, ElementRole::kForce}, {}}; }
  std::unique_ptr<Simulator> create(const Model& model, const std::string& integrator, double setting) const override {
    for (const Variant& v : kVariants) {
      if (integrator != v.name) continue;
      if (const std::string why = unsupported_reason(model); !why.empty()) throw SolverError("gen-alpha: " + why);
      return make_simulator(model, v.rho_inf, setting);
    }
    throw SolverError(fmt::format("gen-alpha: unknown integrator '{}' (known: rho-0.9, rho-1)", integrator));
  }
  std::string linearization_unsupported_reason(const Model& /*model*/) const override {
    return "gen-alpha integrates the index-3 equations whose linearization alm-index3 and ida-index3 report; it adds none";
  }

 private:
  std::string structure_unsupported_reason(const Model& model) const override {
    return model.nc() == 0 ? "no constraints: nothing for an index-3 method to do" : "";
  }
};

}  // namespace

std::unique_ptr<Simulator> make_simulator(const Model& model, double rho_inf, double h, LinearAlgebra la) {
  if (!(h > 0.0) || !std::isfinite(h))
    throw SolverError(fmt::format("gen-alpha: step size must be positive and finite, got {}", h));
  if (!(rho_inf >= 0.0 && rho_inf <= 1.0))
    throw SolverError(fmt::format("gen-alpha: rho_inf must lie in [0, 1], got {}", rho_inf));
  const bool sparse = sparse_path(la, model);
  std::vector<int> rows = independent_rows(NaturalCoordinates(model), model);
  const bool all = static_cast<int>(rows.size()) == model.nc();
  constexpr int X = Eigen::Dynamic;
  if (sparse) return std::make_unique<GenAlphaSimulator<X, X, SparseKktSolver>>(model, rho_inf, h, std::move(rows));
  if (all && model.nq() == 2 && model.nc() == 1)
    return std::make_unique<GenAlphaSimulator<2, 1, DenseKkt<2, 1>>>(model, rho_inf, h, std::move(rows));
  if (all && model.nq() == 4 && model.nc() == 2)
    return std::make_unique<GenAlphaSimulator<4, 2, DenseKkt<4, 2>>>(model, rho_inf, h, std::move(rows));
  return std::make_unique<GenAlphaSimulator<X, X, DenseKkt<X, X>>>(model, rho_inf, h, std::move(rows));
}

MBS_REGISTER_FORMULATION(GenAlpha);

}  // namespace mbs::gen_alpha
