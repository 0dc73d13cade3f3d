// Formulation "ida-ggl": natural coordinates in the stabilized index-2 form of Gear, Gupta and
// Leimkuhler (1985), y = (q, v, lambda, mu) (ggl_dae.hpp), solved by SUNDIALS IDA (variable-order,
// variable-step BDF) with an analytic Jacobian (dense LU, or KLU on large models as ida-index3).
//
// Both constraint levels are equations of the DAE, Phi(q) = 0 and Phi_q v = 0, so both hold to the
// Newton tolerance at every step (ida-index3 enforces only Phi = 0; its Phi_q v drifts at the
// discretization error). The price: nc more unknowns (mu) and rows.
//
// Error test: q and v are in IDA's local error test; lambda and mu are flagged algebraic (id = 0)
// and suppressed (IDASetSuppressAlg). In GGL's form v is a differential variable of an index-2 DAE
// whose velocity constraint is enforced directly: its BDF error estimate is meaningful (it shrinks
// with h as IDA's estimator assumes), unlike ida-index3's v, which is an index-2 variable there
// determined only through the differentiated position constraint. lambda and mu are the index-2
// variables of this form: their BDF error estimates do not behave as h^(k+1), and mu is zero in
// the exact solution anyway. ErrorTest::kPositionsOnly (v out too, as ida-index3) is kept to
// compare (tests/test_ida_ggl.cpp, DISABLED_ToleranceSweep; docs/formulations.md, Method notes).
//
// Error weights (IDAWFtolerances): q gets 1 / (rtol |q| + atol), v 1 / (rtol |v| + atol_v) with
// atol = rtol x the shortest rod (m) as ida-index3 and atol_v = atol / (1 s); lambda and mu, which
// only enter the Newton convergence test, get tolerances scaled by 1/h (the index-2 scaling RADAU5
// applies): m_min atol_v / h (N) and m_min atol / h (N s), their Newton corrections being ~1/h
// times the mass times those of v and q. The first step is chosen from q', q'' (as ida-index3) and
// v' and set with IDASetInitStep; the weights before the first step use it (see ida-index3's file
// header for why: IDA computes them once before the first step).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "common/ida_driver.hpp"
#include "core/formulation.hpp"
#include "ida_ggl/ggl_dae.hpp"

namespace mbs::ida_ggl {

// ---------------------------------------------------------------------------------------------
// The DAE

GglDae::GglDae(const Model& model, bool sparse)
    : NaturalDae(model, sparse),
      mu_all_(Eigen::VectorXd::Zero(nat_.nc())),
      tmp_n_(nat_.nq()) {
  // Sparse mode: Phi_q transposed in the kinematics (x M^-1 mu) and in the dynamics (x lambda), at
  // the position level, and at the velocity level (x v); the second derivatives in the kinematics'
  // and the dynamics' q blocks and, by constraint, in the velocity level's.
  const int n = nq(), vel = 2 * n + nc();
  if (sparse_)
    place_constraint_terms(size(),
                           {{0, vel, true, &slot_kin_mu_}, {n, 2 * n, true, &slot_dyn_lambda_},
                            {2 * n, 0, false, &slot_pos_q_}, {vel, n, false, &slot_vel_v_}},
                           {{0, false, &hslot_kin_}, {n, false, &hslot_dyn_}, {vel, true, &hslot_vel_}});
}

void GglDae::residual(const Eigen::Ref<const Eigen::VectorXd>& y, const Eigen::Ref<const Eigen::VectorXd>& yp,
                      Eigen::Ref<Eigen::VectorXd> F) {
  const int n = nq(), m = nc();
  const auto q = y.head(n), v = y.segment(n, n), lambda = y.segment(2 * n, m), mu = y.tail(m);
  const auto q_dot = yp.head(n), v_dot = yp.segment(n, n);
  auto F_kin = F.head(n), F_dyn = F.segment(n, n), F_vel = F.tail(m);

  if (sparse_) {
    const auto& G = kept_Phi_q_sparse(q);
    tmp_n_.noalias() = G.transpose() * mu;
    F_dyn.noalias() = G.transpose() * lambda;
    F_vel.noalias() = G * v;
  } else {
    kept_Phi_q(q);
    tmp_n_.noalias() = Phi_q_.transpose() * mu;
    F_dyn.noalias() = Phi_q_.transpose() * lambda;
    F_vel.noalias() = Phi_q_ * v;
  }
  // kinematics: q' - v + M^-1 Phi_q^T mu = 0
  F_kin = q_dot - v + inv_m_.cwiseProduct(tmp_n_);
  // dynamics: M v' + Phi_q^T lambda - Q = 0
  add_M_v_dot_minus_Q(q, v, v_dot, F_dyn);
  // position level: Phi(q) = 0 (kept rows); the velocity level Phi_q v = 0 is written above.
  kept_Phi(q, F.segment(2 * n, m));
}

void GglDae::jacobian(double cj, const Eigen::Ref<const Eigen::VectorXd>& y, Eigen::Ref<Eigen::MatrixXd> J) {
  const int n = nq(), m = nc(), vel = 2 * n + m;
  const auto q = y.head(n), v = y.segment(n, n);
  J.setZero();
  scatter(y.segment(2 * n, m), lambda_all_);
  scatter(y.tail(m), mu_all_);

  // Second derivatives: kinematics M^-1 sum mu_k Phi_k,qq, dynamics sum lambda_k Phi_k,qq,
  // velocity level d(Phi_q v)/dq (row k: v^T Phi_k,qq).
  for (const HessEntry& e : hess_) {
    J(e.i, e.j) += inv_m_[e.i] * mu_all_[e.row] * e.coef;
    J(n + e.i, e.j) += lambda_all_[e.row] * e.coef;
    J(vel + kept_index_[e.row], e.j) += v[e.i] * e.coef;
  }

  // kinematics rows: [cj I + ..., -I, 0, M^-1 Phi_q^T]
  J.block(0, 0, n, n).diagonal().array() += cj;
  J.block(0, n, n, n).diagonal().setConstant(-1.0);
  kept_Phi_q(q);
  J.block(0, vel, n, m) = inv_m_.asDiagonal() * Phi_q_.transpose();

  // dynamics rows: [sum lambda_k Phi_k,qq - dQ/dq, cj M - dQ/dv, Phi_q^T, 0]
  add_dynamics_blocks(cj, q, v, J.block(n, 0, n, n), J.block(n, n, n, n));
  J.block(n, 2 * n, n, m) = Phi_q_.transpose();

  // position-level rows: [Phi_q, 0, 0, 0]; velocity-level rows: [d(Phi_q v)/dq, Phi_q, 0, 0]
  J.block(2 * n, 0, m, n) = Phi_q_;
  J.block(vel, n, m, n) = Phi_q_;
}

void GglDae::jacobian_sparse(double cj, const Eigen::Ref<const Eigen::VectorXd>& y, double* values) {
  const int n = nq(), m = nc();
  const auto q = y.head(n), v = y.segment(n, n);
  start_sparse_values(cj, values);
  const auto& G = kept_Phi_q_sparse(q);
  const double* g = G.valuePtr();
  for (int k = 0, p = 0; k < m; ++k)
    for (; p < G.outerIndexPtr()[k + 1]; ++p) {
      const int i = G.innerIndexPtr()[p];
      values[slot_kin_mu_[p]] = inv_m_[i] * g[p];
      values[slot_dyn_lambda_[p]] = g[p];
      values[slot_pos_q_[p]] = g[p];
      values[slot_vel_v_[p]] = g[p];
    }
  scatter(y.segment(2 * n, m), lambda_all_);
  scatter(y.tail(m), mu_all_);
  for (size_t p = 0; p < hess_.size(); ++p) {
    const HessEntry& e = hess_[p];
    values[hslot_kin_[p]] += inv_m_[e.i] * mu_all_[e.row] * e.coef;
    values[hslot_dyn_[p]] += lambda_all_[e.row] * e.coef;
    values[hslot_vel_[p]] += v[e.i] * e.coef;
  }
}

void GglDae::consistent_initial_conditions(Eigen::Ref<Eigen::VectorXd> y, Eigen::Ref<Eigen::VectorXd> yp) {
  consistent_q_v_lambda("ida-ggl", y, yp);  // q' = v0 as mu0 = 0
  y.tail(nc()).setZero();                   // mu0
  // lambda' and mu' are not determined at this level; they only seed IDA's first predictor.
  yp.tail(2 * nc()).setZero();
}

// ---------------------------------------------------------------------------------------------
// The IDA simulator: the common driver (common/ida_driver.hpp) with this formulation's weights
// and first step.

namespace {

class GglSimulator final : public ida::Driver<GglDae> {
 public:
  GglSimulator(const Model& model, double rtol, ErrorTest error_test, bool sparse)
      : Driver(model, sparse, rtol, error_test, {"ida-ggl: ", "y = (q, v, lambda, mu)"}),
        atol_v_(tolerances().atol / 1.0) {}  // m/s: the position tolerance per second

 private:
  // ida-index3's rule on q' and q'', and |h v'| <= 0.5 in v's weighted RMS norm when v is in the
  // error test.
  double do_first_step(double t_end) const override {
    double h = first_step_from_q(t_end);
    if (!velocities_in_error_test()) return h;
    const int nq = dae().nq();
    const double rtol = tolerances().rtol;
    double sva = 0.0;
    for (int i = 0; i < nq; ++i) {
      const double wv = 1.0 / (rtol * std::abs(y0()[nq + i]) + atol_v_);
      sva += (wv * yp0()[nq + i]) * (wv * yp0()[nq + i]);
    }
    const double va_norm = std::sqrt(sva / nq);
    if (va_norm * h > 0.5) h = 0.5 / va_norm;
    return h;
  }

  // 1 / tolerance (top of file): q and v plain; lambda and mu scaled by h.
  void do_error_weights(double h, const double* y, double* w) const override {
    const int nq = dae().nq(), nc = dae().nc();
    const ida::Tolerances& tol = tolerances();
    const double rtol = tol.rtol, atol = tol.atol, atol_v = atol_v_, m_min = tol.m_min;
    for (int i = 0; i < nq; ++i) w[i] = tol.q_weight(y[i]);
    for (int i = nq; i < 2 * nq; ++i) w[i] = 1.0 / (rtol * std::abs(y[i]) + atol_v);
    for (int i = 2 * nq; i < 2 * nq + nc; ++i) w[i] = h / (rtol * h * std::abs(y[i]) + m_min * atol_v);
    for (int i = 2 * nq + nc; i < 2 * nq + 2 * nc; ++i) w[i] = h / (rtol * h * std::abs(y[i]) + m_min * atol);
  }

  double atol_v_;
};

class IdaGgl final : public ida::BdfFormulation {
 public:
  IdaGgl()
      : BdfFormulation([](const Model& model, double rtol) { return make_simulator(model, rtol); },
                       "SUNDIALS IDA, variable-order BDF, GGL index 2, lambda and mu out of the error test") {}
  std::string name() const override { return "ida-ggl"; }
  std::string description() const override {
    return "natural coordinates, GGL stabilized index-2 DAE in (q, v, lambda, mu), SUNDIALS IDA with analytic Jacobian";
  }
  // No linearizer of its own: linearized about an equilibrium (v = 0, mu = 0), the GGL pencil in
  // (dq, dv, dlambda, dmu) has exactly the finite eigenvalues of ida-index3's index-3 pencil (for
  // finite s, G dq = 0 and G dv = 0 with s dq = dv - M^-1 G^T dmu give S dmu = 0, so dmu = 0), plus
  // infinite ones only.
  std::string linearization_unsupported_reason(const Model& /*model*/) const override {
    return "none for ida-ggl: its linearized pencil has the finite eigenvalues of ida-index3's (mu = 0 on every "
           "finite mode), so that row holds for it";
  }
};

}  // namespace

std::unique_ptr<Simulator> make_simulator(const Model& model, double rtol, ErrorTest error_test, LinearAlgebra la) {
  return ida::make_checked<GglSimulator>("ida-ggl", model, rtol, error_test, la);
}

namespace {
const GglSimulator& as_ggl(const Simulator& simulator) {
  const auto* s = dynamic_cast<const GglSimulator*>(&simulator);
  if (s == nullptr) throw SolverError("ida-ggl: not an ida-ggl simulator");
  return *s;
}
}  // namespace

Eigen::VectorXd dae_state(const Simulator& simulator) { return as_ggl(simulator).state(); }
const GglDae& dae_of(const Simulator& simulator) { return as_ggl(simulator).dae(); }

MBS_REGISTER_FORMULATION(IdaGgl);

}  // namespace mbs::ida_ggl
