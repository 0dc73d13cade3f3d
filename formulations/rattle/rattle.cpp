// Formulation "rattle": natural coordinates, the index-3 equations M q'' + Phi_q^T lambda = Q(q),
// Phi(q) = 0, integrated by RATTLE (Andersen 1983; Hairer, Lubich & Wanner, Geometric Numerical
// Integration, VII.1.4) and by its symmetric compositions. One RATTLE step of size h from (q_n, v_n),
// with M constant and diagonal and G = Phi_q:
//   v_half  = v_n + h/2 M^-1 (Q(q_n) - G(q_n)^T lambda)
//   q_{n+1} = q_n + h v_half,                                Phi(q_{n+1}) = 0
//   v_{n+1} = v_half + h/2 M^-1 (Q(q_{n+1}) - G(q_{n+1})^T mu),  G(q_{n+1}) v_{n+1} = 0
// lambda by Newton on Phi(q_t - M^-1 G(q_n)^T L) = 0 in L = h^2/2 lambda (q_t the unconstrained
// drift): its exact Jacobian is -G(q^k) M^-1 G(q_n)^T, so convergence is quadratic (the dynamic-size
// path first keeps the matrix at q_n, newton() says why) and the stop
// (|Phi|_inf <= 1e-14 s, or a correction |dq|_inf <= 1e-8 s, s the model's length scale, as in
// projection's position projection) leaves Phi at round-off. mu is one solve with G M^-1 G^T at
// q_{n+1}. The method is symplectic, symmetric, of order 2, and keeps Phi and G v at round-off.
//
// Compositions (HLW II.4, V.3): the step h is made of RATTLE steps gamma_i h with symmetric
// fractions: Suzuki's 5 stages (1990, order 4) and Kahan & Li's s9odr6a (1997, order 6; the
// coefficients as HLW V.3.2 print them). The order is checked numerically in tests/test_rattle.cpp.
// Consecutive stages share their end point: Q(q) and G(q) of a stage's end serve the next one's
// first half-kick, and its mu is the warm start of the next lambda.
//
// Force elements: the explicit half-kicks need Q to depend on q only; a force element whose
// dQ/dv does not vanish (a damper) makes the model unsupported (with the element named), rather
// than an implicit half-kick that would cost the method its explicit structure.
// Redundant constraints: the rows chosen once at setup (common/independent_rows.hpp), as in
// projection and gen-alpha; the dropped rows are combinations of the kept ones, so they hold too.
// Large models without force elements (common/sparse_natural.hpp's kAuto rule):
// G M^-1 G^T assembled on G's fixed sparse pattern and factored by its sparse LDLT.
// Contacts: unsupported (no contact role declared). Linearization: none (the index-3 equations,
// whose linearization alm-index3 and ida-index3 report).
// The initial state is projected onto Phi = 0 and G v = 0 (mass-orthogonally) at t = 0, which a
// consistent model's state passes unchanged to round-off.
#include "rattle/rattle.hpp"

#include <fmt/format.h>

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <string>
#include <type_traits>
#include <vector>

#include "common/dense_limit.hpp"
#include "common/independent_rows.hpp"
#include "common/length_scale.hpp"
#include "common/linear_solver.hpp"
#include "core/natural_coordinates.hpp"
#include "common/quadratic_rows.hpp"

namespace mbs::rattle {

const std::vector<Composition>& compositions() {
  static const std::vector<Composition> list = [] {
    // Suzuki (1990): gamma_1 = gamma_2 = gamma_4 = gamma_5 = 1 / (4 - 4^(1/3)), gamma_3 = 1 - 4 gamma_1.
    const double s = 1.0 / (4.0 - std::cbrt(4.0));
    // Kahan & Li (1997), s9odr6a, symmetric: gamma_1..gamma_5, then gamma_4..gamma_1.
    const double k[5] = {0.39216144400731413927925056, 0.33259913678935943859974864, -0.70624617255763935980996482,
                         0.08221359629355080023149045, 0.79854399093482996339895035};
    return std::vector<Composition>{
        {"plain", 2, {1.0}},
        {"suzuki4", 4, {s, s, 1.0 - 4.0 * s, s, s}},
        {"kahan-li6", 6, {k[0], k[1], k[2], k[3], k[4], k[3], k[2], k[1], k[0]}},
    };
  }();
  return list;
}

namespace {

constexpr double kPhiTol = 1e-14;  // x scale (m): |Phi|_inf at round-off
constexpr double kStepTol = 1e-8;  // x scale (m): a Newton correction this small leaves ~1e-16 x scale
constexpr int kMaxNewtonIterations = 20;
// Modified Newton (dynamic sizes): corrections falling by less than kSlowRatio an iteration are
// slow, and full Newton takes over then or after kMaxModifiedIterations.
constexpr double kSlowRatio = 0.25;
constexpr int kMaxModifiedIterations = 10;
constexpr double kFloor = 1e-6;     // x kStepTol x scale (1e-14 x scale): a correction at round-off

// S = G M^-1 G^T's solver (common/linear_solver.hpp): dense LLT (the closed-form inverse for one
// row), or the fixed-pattern sparse LDLT on the kept rows' Jacobian.
template <int NR>
using DenseSchur = DenseSolver<NR, Factorization::kLlt>;
using SparseSchurSolver = SparseSolver<SparseSchur>;

template <int NQ, int NR, typename Schur>
class RattleSimulator final : public FixedStepSimulator {
 public:
  using Vec = Eigen::Matrix<double, NQ, 1>;
  using CVec = Eigen::Matrix<double, NR, 1>;
  using Jac = Eigen::Matrix<double, NR, NQ>;
  using JacT = Eigen::Matrix<double, NQ, NR>;
  using MatR = Eigen::Matrix<double, NR, NR>;

  RattleSimulator(const Model& model, std::vector<double> gamma, double h, std::vector<int> rows)
      : FixedStepSimulator(model, h), nat_(model), gamma_(std::move(gamma)), rows_(std::move(rows)), n_q_(nat_.nq()),
        n_c_(nat_.nc()), n_r_(static_cast<int>(rows_.size())), redundant_(n_r_ < n_c_),
        forces_(nat_.has_force_elements()), Minv_(nat_.M_diag().cwiseInverse()), Q_(nat_.Q()), MiQ_(n_q_),
        q0_(model.initial_q()), v0_(model.initial_v()), q_(n_q_), v_(n_q_), qt_(n_q_), vh_(n_q_), zero_v_(Vec::Zero(n_q_)),
        Phi_(n_r_), L_(n_r_), dL_(n_r_), mu_(n_r_), rhs_(n_r_), Phi_all_(n_c_), G_(n_r_, n_q_), Gk_(n_r_, n_q_),
        MiGt_(n_q_, n_r_), MiGtk_(n_q_, n_r_), Phi_q_all_(redundant_ ? n_c_ : 0, n_q_), newton_matrix_(n_r_),
        G_sp_(nat_, rows_), schur_(n_r_, G_sp_) {
    double scale = max_model_length(model);
    if (!(scale > 0.0)) scale = 0.0;
    if (q0_.size() > 0) scale = std::max(scale, q0_.cwiseAbs().maxCoeff());
    if (!(scale > 0.0)) scale = 1.0;
    tol_Phi_ = kPhiTol * scale;
    tol_dq_ = kStepTol * scale;
    MiQ_ = Minv_.cwiseProduct(Q_);
  }

 private:
  void do_initialize_state() override {
    // Onto Phi = 0 along M^-1 G(q0)^T (the mass-orthogonal direction), then G v = 0.
    q_ = q0_;
    v_ = v0_;
    if (n_r_ > 0) {
      constraints(q_, G_);
      MiGt_ = Minv_.asDiagonal() * G_.transpose();
      factor_at_start();
      qt_ = q_;
      L_.setZero();
      newton(-1.0);
      q_ = qk_;
      G_ = Gk_;
      MiGt_ = MiGtk_;
    }
    forces_at(q_);
    project_velocity(v_);
    initial_multipliers();
  }

  void do_model_state() override {
    q_model_ = q_;
    v_model_ = v_;
  }

  void do_fixed_step(double h) override {
    for (size_t i = 0; i < gamma_.size(); ++i) stage(gamma_[i] * h, i);
  }

  // One RATTLE step of size hs (negative for some stages of a composition). On entry Q_, MiQ_, G_,
  // MiGt_ are at q_ and mu_ is the multiplier of the last velocity solve.
  void stage(double hs, size_t index) {
    const double c = 0.5 * hs * hs;
    qt_ = q_ + hs * v_ + c * MiQ_;
    if (n_r_ > 0) {
      L_ = c * mu_;  // warm start: the multiplier at q_n
      newton(time() + hs, index);
      dq_.noalias() = MiGt_ * L_;
      vh_ = v_ + (0.5 * hs) * MiQ_ - (1.0 / hs) * dq_;  // v_half, = (q_{n+1} - q_n) / hs without the cancellation
      q_ = qk_;
      G_ = Gk_;
      MiGt_ = MiGtk_;
    } else {
      vh_ = v_ + (0.5 * hs) * MiQ_;
      q_ = qt_;
    }
    forces_at(q_);
    v_ = vh_ + (0.5 * hs) * MiQ_;
    project_velocity(v_);
    mu_ *= 1.0 / (0.5 * hs);  // from the velocity correction's coefficients to the multiplier (N)
  }

  // Newton on Phi(qt_ - MiGt_ L) = 0 in L (start: L_). On return qk_ is the solution and Gk_, MiGtk_
  // are at it. Fixed sizes: full Newton (matrix G(q^k) M^-1 G(q_n)^T, a few flops). Dynamic sizes:
  // the dense product and LU each iteration cost most of a stage (docs/formulations.md, Method
  // notes), so the matrix is kept at G(q_n) M^-1 G(q_n)^T, already factored by the velocity solve
  // that ended the last stage (schur_), and only Phi is evaluated per iteration; the corrections then contract linearly, by
  // ~|G(q_{n+1}) - G(q_n)| / |G| = O(h), so the stop is |Phi| at round-off; where they contract by
  // less than kSlowRatio (or too many iterations), full Newton takes over.
  void newton(double t_end, size_t stage = 0) {
    bool full = kFixed, converged = false, have_G = false;
    double dq_prev = 0.0;
    for (int it = 0;; ++it) {
      qk_ = qt_;
      qk_.noalias() -= MiGt_ * L_;
      if (full) {
        constraints(qk_, Gk_);
      } else {
        constraint_values(qk_);
      }
      have_G = full;
      const double phi = inf_norm(Phi_);
      if (converged || phi <= tol_Phi_) break;
      if (it == kMaxNewtonIterations || !std::isfinite(phi)) {
        ++stats_.failures;
        throw SolverError(fmt::format(
            "rattle: Newton on the position constraints did not converge {} ({} iterations, |Phi| = {:.3g} m > {:.3g} m)",
            t_end < 0.0 ? std::string("projecting the initial state")
                        : fmt::format("in stage {} of the step ending at t = {:.9g} s", stage + 1, t_end),
            it, phi, tol_Phi_));
      }
      if (kFixed || full) {  // d Phi / d L = -G(q^k) M^-1 G(q_n)^T
        newton_matrix_.matrix().noalias() = Gk_ * MiGt_;
        newton_matrix_.factor();
        newton_matrix_.solve(Phi_, dL_);
      } else {
        schur_.solve(Phi_, dL_);
      }
      L_ += dL_;
      ++stats_.newton_iterations;
      dq_.noalias() = MiGt_ * dL_;
      const double dq = inf_norm(dq_);
      if (!std::isfinite(dq)) {
        ++stats_.failures;
        throw SolverError(fmt::format("rattle: Newton's matrix G M^-1 G^T is singular at t = {:.9g} s", time()));
      }
      if (full) {
        converged = dq <= tol_dq_;  // quadratic: the residual left is ~dq^2 / L, round-off
      } else if ((it > 0 && dq > kSlowRatio * dq_prev) || it + 1 >= kMaxModifiedIterations) {
        if (dq <= kFloor * tol_dq_) {
          converged = true;  // at the round-off floor of Phi: nothing left to gain
        } else {
          full = true;
        }
      }
      dq_prev = dq;
    }
    if (!have_G) constraints(qk_, Gk_);
    MiGtk_ = Minv_.asDiagonal() * Gk_.transpose();
  }

  // Phi_ (kept rows) at q only.
  void constraint_values(const Vec& q) {
    if (!redundant_) {
      nat_.Phi(q, Phi_);
    } else {
      nat_.Phi(q, Phi_all_);
      for (int k = 0; k < n_r_; ++k) Phi_[k] = Phi_all_[rows_[k]];
    }
  }

  // v -= M^-1 G^T (G M^-1 G^T)^-1 G v with G = G_ at q_: the velocity constraint G v = 0, and the
  // correction's coefficients in mu_ (the caller scales them to a multiplier).
  void project_velocity(Vec& v) {
    if (n_r_ == 0) return;
    rhs_.noalias() = G_ * v;
    factor_S();
    schur_.solve(rhs_, mu_);
    v.noalias() -= MiGt_ * mu_;
  }

  // S = G_ M^-1 G_^T at q_ factored (project_velocity(), and the dynamic path's modified Newton
  // uses it): dense, or on the sparse path on G's fixed pattern (common/sparse_natural.hpp).
  void factor_S() {
    assemble_S(schur_.matrix());
    if (!schur_.factor()) throw SolverError(fmt::format("rattle: G M^-1 G^T is not positive definite at t = {:.9g} s", time()));
  }
  void assemble_S(MatR& S) { S.noalias() = G_ * MiGt_; }
  void assemble_S(SparseSchur& S) {
    G_sp_.evaluate(q_);
    S.assemble(G_sp_, Minv_);  // no regularization
  }
  void factor_at_start() {
    if constexpr (!kFixed) factor_S();
  }

  // Consistent multipliers at t = 0, the first stage's warm start:
  // (G M^-1 G^T) lambda = G M^-1 Q + d/dt(G) v.
  void initial_multipliers() {
    if (n_r_ == 0) return;
    if (!redundant_) {
      nat_.Phi_q_dot_v(q_, v_, rhs_);
    } else {
      nat_.Phi_q_dot_v(q_, v_, Phi_all_);
      for (int k = 0; k < n_r_; ++k) rhs_[k] = Phi_all_[rows_[k]];
    }
    rhs_.noalias() += G_ * MiQ_;
    schur_.solve(rhs_, mu_);  // S at q_ factored by project_velocity() just before
    if (!mu_.allFinite()) throw SolverError("rattle: non-finite initial multipliers");
  }

  // Phi_ (kept rows) at q and G = Phi_q there.
  void constraints(const Vec& q, Jac& G) {
    ++stats_.jacobian_evals;
    if constexpr (kFixed) {
      quad_.evaluate(q, Phi_, G);
      return;
    }
    if (!redundant_) {
      nat_.Phi(q, Phi_);
      nat_.Phi_q(q, G);
    } else {
      nat_.Phi(q, Phi_all_);
      nat_.Phi_q(q, Phi_q_all_);
      for (int k = 0; k < n_r_; ++k) {
        Phi_[k] = Phi_all_[rows_[k]];
        G.row(k) = Phi_q_all_.row(rows_[k]);
      }
    }
  }

  // Q(q) (no velocity dependence: see the file comment) and M^-1 Q.
  void forces_at(const Vec& q) {
    if (!forces_) return;
    nat_.Q(q, zero_v_, Q_);
    MiQ_ = Minv_.cwiseProduct(Q_);
    ++stats_.rhs_evals;
  }

  static constexpr bool kFixed = NQ != Eigen::Dynamic && NR != Eigen::Dynamic;
  struct NoQuadratics {
    explicit NoQuadratics(const NaturalCoordinates&) {}
  };
  struct NoPattern {
    NoPattern(const NaturalCoordinates&, const std::vector<int>&) {}
  };

  NaturalCoordinates nat_;
  // The fixed-size path's rows as quadratics (common/quadratic_rows.hpp; make_simulator checked them).
  std::conditional_t<kFixed, QuadraticRows<NQ, NR>, NoQuadratics> quad_{nat_};
  std::vector<double> gamma_;
  std::vector<int> rows_;  // kept (independent) constraint rows
  int n_q_, n_c_, n_r_;
  bool redundant_;
  bool forces_;
  Vec Minv_, Q_, MiQ_, q0_, v0_;
  Vec q_, v_;          // state at time()
  Vec qt_, vh_, qk_ = Vec(n_q_), dq_ = Vec(n_q_), zero_v_;
  CVec Phi_, L_, dL_, mu_, rhs_;
  Eigen::VectorXd Phi_all_;
  Jac G_, Gk_;         // G at q_, and at Newton's iterate
  JacT MiGt_, MiGtk_;  // M^-1 G^T of each
  Eigen::MatrixXd Phi_q_all_;
  // Full Newton's matrix G(q^k) M^-1 G(q_n)^T: LU (the closed-form inverse for one row).
  DenseSolver<NR, Factorization::kLu> newton_matrix_;
  // Sparse path (large models without force elements): S = G M^-1 G^T on G's fixed pattern. G_,
  // Gk_ stay dense (evaluating them costs little beside the dense product and LLT this replaces).
  std::conditional_t<Schur::kSparse, SparseJacobian, NoPattern> G_sp_;
  Schur schur_;  // S = G_ M^-1 G_^T at q_ and its factorization
  double tol_Phi_ = 0.0, tol_dq_ = 0.0;
};

class Rattle final : public Formulation {
 public:
  std::string name() const override { return "rattle"; }
  std::string description() const override {
    return "natural coordinates; RATTLE (symplectic, Phi and Phi_q v at round-off) and its symmetric compositions";
  }
  std::vector<IntegratorInfo> integrators() const override {
    return {{"plain", SettingKind::kFixedStep, 0.05, 1e-5, "RATTLE, order 2 (one stage)", ""},
            {"suzuki4", SettingKind::kFixedStep, 0.2, 1e-5, "Suzuki's 5-stage symmetric composition of RATTLE, order 4", ""},
            {"kahan-li6", SettingKind::kFixedStep, 0.5, 1e-5,
             "Kahan & Li's 9-stage symmetric composition of RATTLE (s9odr6a), order 6", ""}};
  }
  Accepts accepts() const override { return {{ElementRole::kJoint, ElementRole::kForce}, {}}; }
  std::unique_ptr<Simulator> create(const Model& model, const std::string& integrator, double setting) const override {
    for (const Composition& c : compositions()) {
      if (integrator != c.name) continue;
      if (const std::string why = unsupported_reason(model); !why.empty()) throw SolverError("rattle: " + why);
      return make_simulator(model, c.gamma, setting, LinearAlgebra::kAuto);
    }
    throw SolverError(fmt::format("rattle: unknown integrator '{}' (known: plain, suzuki4, kahan-li6)", integrator));
  }
  std::string linearization_unsupported_reason(const Model& /*model*/) const override {
    return "rattle integrates the index-3 equations whose linearization alm-index3 and ida-index3 report; it adds none";
  }

 private:
  // A force depending on v would make the half-kicks implicit: such models are refused by name.
  // dQ/dv is probed at the initial position with two velocities (a damper's is non-zero at any).
  // G and its update (nr x nq), M^-1 G^T and its update (nq x nr) are dense: refused above the
  // dense limit (nr <= nc).
  std::string structure_unsupported_reason(const Model& model) const override {
    const double nq = model.nq(), nc = model.nc();
    if (std::string why = dense_limit_reason("G and M^-1 G^T", 8.0 * 4.0 * nc * nq, 0.0); !why.empty()) return why;
    if (!model.has_role(ElementRole::kForce)) return "";
    const int n = model.nq();
    const Eigen::VectorXd q0 = model.initial_q();
    Eigen::MatrixXd K(n, n), C(n, n);
    for (const auto& e : model.elements) {
      if (e->role() != ElementRole::kForce) continue;
      for (const Eigen::VectorXd& v : {Eigen::VectorXd(model.initial_v()), Eigen::VectorXd(Eigen::VectorXd::LinSpaced(n, 1.0, 2.0))}) {
        K.setZero();
        C.setZero();
        e->add_force_jacobians(model, q0, v, K, C);
        if (C.cwiseAbs().maxCoeff() > 0.0)
          return fmt::format("{} '{}': its force depends on the velocities, and RATTLE's half-kicks are explicit in Q(q)",
                             e->kind(), e->name);
      }
    }
    return "";
  }
};

// The fixed-size path's quadratics reproduce the model's rows at q0 and at a second, unrelated point.
template <int NQ, int NR>
bool quadratics_match(const Model& model) {
  const NaturalCoordinates nat(model);
  const QuadraticRows<NQ, NR> quad(nat);
  const Eigen::Matrix<double, NQ, 1> q0 = model.initial_q();
  return quad.matches(nat, q0) && quad.matches(nat, q0 + Eigen::Matrix<double, NQ, 1>::LinSpaced(0.3, 0.7));
}

}  // namespace

std::unique_ptr<Simulator> make_simulator(const Model& model, const std::vector<double>& gamma, double h, LinearAlgebra la) {
  if (!(h > 0.0) || !std::isfinite(h))
    throw SolverError(fmt::format("rattle: step size must be positive and finite, got {}", h));
  if (gamma.empty()) throw SolverError("rattle: a composition needs at least one stage");
  const bool sparse = sparse_path(la, model);
  std::vector<int> rows = independent_rows(NaturalCoordinates(model), model);
  const bool all = static_cast<int>(rows.size()) == model.nc();
  constexpr int X = Eigen::Dynamic;
  if (sparse && !rows.empty()) return std::make_unique<RattleSimulator<X, X, SparseSchurSolver>>(model, gamma, h, std::move(rows));
  if (!sparse && all && model.nq() == 2 && model.nc() == 1 && quadratics_match<2, 1>(model))
    return std::make_unique<RattleSimulator<2, 1, DenseSchur<1>>>(model, gamma, h, std::move(rows));
  return std::make_unique<RattleSimulator<X, X, DenseSchur<X>>>(model, gamma, h, std::move(rows));
}

MBS_REGISTER_FORMULATION(Rattle);

}  // namespace mbs::rattle
