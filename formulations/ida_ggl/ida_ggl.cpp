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
#include <ida/ida.h>
#include <nvector/nvector_serial.h>
#include <sunlinsol/sunlinsol_dense.h>
#include <sunlinsol/sunlinsol_klu.h>
#include <sunmatrix/sunmatrix_dense.h>
#include <sunmatrix/sunmatrix_sparse.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <type_traits>

#include "common/ida_support.hpp"
#include "common/independent_rows.hpp"
#include "common/kept_constraints.hpp"
#include "common/length_scale.hpp"
#include "core/formulation.hpp"
#include "ida_ggl/ggl_dae.hpp"

namespace mbs::ida_ggl {

// ---------------------------------------------------------------------------------------------
// The DAE

GglDae::GglDae(const Model& model, bool sparse)
    : nat_(model),
      sparse_(sparse),
      Q_(nat_.Q()),
      dQ_dq_(nat_.has_force_elements() ? nat_.nq() : 0, nat_.has_force_elements() ? nat_.nq() : 0),
      dQ_dv_(dQ_dq_.rows(), dQ_dq_.cols()),
      rows_(independent_rows(nat_, model)),
      kept_index_(nat_.nc(), -1),
      inv_m_(nat_.M_diag().cwiseInverse()),
      Phi_q_all_(nat_.nc(), nat_.nq()),
      Phi_all_(nat_.nc()),
      lambda_all_(Eigen::VectorXd::Zero(nat_.nc())),
      mu_all_(Eigen::VectorXd::Zero(nat_.nc())),
      Phi_q_(nc(), nat_.nq()),
      tmp_n_(nat_.nq()) {
  for (int k = 0; k < nc(); ++k) kept_index_[rows_[k]] = k;
  build_hessian_entries();
  if (sparse_) build_sparse_pattern();
}

// The constant second derivatives of the kept rows, Phi = s (d1 . d2 - c) (as
// NaturalCoordinates::add_Phi_qq_times and ida-index3's sparse pattern).
void GglDae::build_hessian_entries() {
  const int dim = nat_.dim();
  for (const int r : rows_) {
    const ConstraintRow& row = nat_.rows()[r];
    const Combo& d2 = row.same ? row.d1 : row.d2;
    for (int a = 0; a < row.d1.n; ++a)
      for (int b = 0; b < d2.n; ++b) {
        const double x = row.s * row.d1.w[a] * d2.w[b];
        for (int c = 0; c < dim; ++c) {
          hess_.push_back({row.d1.off[a] + c, d2.off[b] + c, r, x});
          hess_.push_back({d2.off[b] + c, row.d1.off[a] + c, r, x});
        }
      }
  }
}

void GglDae::build_sparse_pattern() {
  const int n = nq(), m = nc(), N = size();
  Phi_q_sp_ = std::make_unique<SparseJacobian>(nat_, rows_);
  const auto& J = Phi_q_sp_->matrix();
  const int vel = 2 * n + m;  // first velocity-level row; also the first mu column
  std::vector<Eigen::Triplet<double, int>> t;
  for (int i = 0; i < n; ++i) {
    t.emplace_back(i, i, 1.0);
    t.emplace_back(i, n + i, 1.0);
    t.emplace_back(n + i, n + i, 1.0);
  }
  for (int k = 0; k < m; ++k)
    for (int p = J.outerIndexPtr()[k]; p < J.outerIndexPtr()[k + 1]; ++p) {
      const int i = J.innerIndexPtr()[p];
      t.emplace_back(i, vel + k, 1.0);
      t.emplace_back(n + i, 2 * n + k, 1.0);
      t.emplace_back(2 * n + k, i, 1.0);
      t.emplace_back(vel + k, n + i, 1.0);
    }
  for (const HessEntry& e : hess_) {
    t.emplace_back(e.i, e.j, 1.0);
    t.emplace_back(n + e.i, e.j, 1.0);
    t.emplace_back(vel + kept_index_[e.row], e.j, 1.0);
  }
  Eigen::SparseMatrix<double, Eigen::ColMajor, int> A(N, N);
  A.setFromTriplets(t.begin(), t.end());
  A.makeCompressed();
  col_ptr_.assign(A.outerIndexPtr(), A.outerIndexPtr() + N + 1);
  row_ind_.assign(A.innerIndexPtr(), A.innerIndexPtr() + A.nonZeros());
  auto slot = [&](int i, int j) {
    const int* inner = A.innerIndexPtr();
    const int* p = std::lower_bound(inner + A.outerIndexPtr()[j], inner + A.outerIndexPtr()[j + 1], i);
    return static_cast<int>(p - inner);
  };
  for (int i = 0; i < n; ++i) {
    slot_qq_.push_back(slot(i, i));
    slot_qv_.push_back(slot(i, n + i));
    slot_vv_.push_back(slot(n + i, n + i));
  }
  for (int k = 0; k < m; ++k)
    for (int p = J.outerIndexPtr()[k]; p < J.outerIndexPtr()[k + 1]; ++p) {
      const int i = J.innerIndexPtr()[p];
      slot_kin_mu_.push_back(slot(i, vel + k));
      slot_dyn_lambda_.push_back(slot(n + i, 2 * n + k));
      slot_pos_q_.push_back(slot(2 * n + k, i));
      slot_vel_v_.push_back(slot(vel + k, n + i));
    }
  for (const HessEntry& e : hess_) {
    hslot_kin_.push_back(slot(e.i, e.j));
    hslot_dyn_.push_back(slot(n + e.i, e.j));
    hslot_vel_.push_back(slot(vel + kept_index_[e.row], e.j));
  }
}

void GglDae::kept_Phi_q(const Eigen::Ref<const Eigen::VectorXd>& q) {
  nat_.Phi_q(q, Phi_q_all_);
  for (int k = 0; k < nc(); ++k) Phi_q_.row(k) = Phi_q_all_.row(rows_[k]);
}

void GglDae::residual(const Eigen::Ref<const Eigen::VectorXd>& y, const Eigen::Ref<const Eigen::VectorXd>& yp,
                      Eigen::Ref<Eigen::VectorXd> F) {
  const int n = nq(), m = nc();
  const auto q = y.head(n), v = y.segment(n, n), lambda = y.segment(2 * n, m), mu = y.tail(m);
  const auto q_dot = yp.head(n), v_dot = yp.segment(n, n);
  auto F_kin = F.head(n), F_dyn = F.segment(n, n), F_vel = F.tail(m);

  if (sparse_) {
    Phi_q_sp_->evaluate(q);
    const auto& G = Phi_q_sp_->matrix();
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
  F_dyn += nat_.M_diag().cwiseProduct(v_dot);
  if (nat_.has_force_elements()) {
    nat_.Q(q, v, Q_);
    F_dyn -= Q_;
  } else {
    F_dyn -= nat_.Q();
  }
  // position level: Phi(q) = 0 (kept rows); the velocity level Phi_q v = 0 is written above.
  nat_.Phi(q, Phi_all_);
  for (int k = 0; k < m; ++k) F[2 * n + k] = Phi_all_[rows_[k]];
}

void GglDae::jacobian(double cj, const Eigen::Ref<const Eigen::VectorXd>& y, Eigen::Ref<Eigen::MatrixXd> J) {
  const int n = nq(), m = nc(), vel = 2 * n + m;
  const auto q = y.head(n), v = y.segment(n, n), lambda = y.segment(2 * n, m), mu = y.tail(m);
  J.setZero();
  for (int k = 0; k < m; ++k) {  // dropped rows stay 0
    lambda_all_[rows_[k]] = lambda[k];
    mu_all_[rows_[k]] = mu[k];
  }

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
  if (nat_.has_force_elements()) {
    dQ_dq_.setZero();
    dQ_dv_.setZero();
    nat_.add_Q_jacobians(q, v, dQ_dq_, dQ_dv_);
    J.block(n, 0, n, n) -= dQ_dq_;
    J.block(n, n, n, n) = -dQ_dv_;
  }
  J.block(n, n, n, n).diagonal() += cj * nat_.M_diag();
  J.block(n, 2 * n, n, m) = Phi_q_.transpose();

  // position-level rows: [Phi_q, 0, 0, 0]; velocity-level rows: [d(Phi_q v)/dq, Phi_q, 0, 0]
  J.block(2 * n, 0, m, n) = Phi_q_;
  J.block(vel, n, m, n) = Phi_q_;
}

void GglDae::jacobian_sparse(double cj, const Eigen::Ref<const Eigen::VectorXd>& y, double* values) {
  const int n = nq(), m = nc();
  const auto q = y.head(n), v = y.segment(n, n), lambda = y.segment(2 * n, m), mu = y.tail(m);
  std::fill(values, values + row_ind_.size(), 0.0);
  for (int i = 0; i < n; ++i) {
    values[slot_qq_[i]] = cj;
    values[slot_qv_[i]] = -1.0;
    values[slot_vv_[i]] = cj * nat_.M_diag()[i];
  }
  Phi_q_sp_->evaluate(q);
  const auto& G = Phi_q_sp_->matrix();
  const double* g = G.valuePtr();
  for (int k = 0, p = 0; k < m; ++k)
    for (; p < G.outerIndexPtr()[k + 1]; ++p) {
      const int i = G.innerIndexPtr()[p];
      values[slot_kin_mu_[p]] = inv_m_[i] * g[p];
      values[slot_dyn_lambda_[p]] = g[p];
      values[slot_pos_q_[p]] = g[p];
      values[slot_vel_v_[p]] = g[p];
    }
  for (int k = 0; k < m; ++k) {
    lambda_all_[rows_[k]] = lambda[k];
    mu_all_[rows_[k]] = mu[k];
  }
  for (size_t p = 0; p < hess_.size(); ++p) {
    const HessEntry& e = hess_[p];
    values[hslot_kin_[p]] += inv_m_[e.i] * mu_all_[e.row] * e.coef;
    values[hslot_dyn_[p]] += lambda_all_[e.row] * e.coef;
    values[hslot_vel_[p]] += v[e.i] * e.coef;
  }
}

void GglDae::consistent_initial_conditions(Eigen::Ref<Eigen::VectorXd> y, Eigen::Ref<Eigen::VectorXd> yp) {
  const int n = nq(), m = nc();
  auto q = y.head(n), v = y.segment(n, n), lambda = y.segment(2 * n, m), mu = y.tail(m);
  q = nat_.model().initial_q();
  v = nat_.model().initial_v();
  mu.setZero();
  // Setup only: the shared toolkit's projection of v onto Phi_q v = 0 and its index-1 accelerations
  // and multipliers (common/kept_constraints.hpp), on the same kept rows.
  RunStats setup_stats;
  KeptConstraints<Eigen::Dynamic, Eigen::Dynamic> kc(nat_, rows_, setup_stats, sparse_, "ida-ggl");
  kc.load(q, v);
  kc.project_velocities(v);
  kc.load(q, v);
  nat_.Q(q, v, Q_);
  Eigen::VectorXd a(n), lambda_kept(m);
  kc.accelerations(Q_, a, lambda_kept);
  lambda = lambda_kept;
  yp.head(n) = v;  // mu = 0
  yp.segment(n, n) = a;
  // lambda' and mu' are not determined at this level; they only seed IDA's first predictor.
  yp.tail(2 * m).setZero();
}

// ---------------------------------------------------------------------------------------------
// The IDA simulator (the SUNDIALS ownership and flag handling as in ida-index3's)

namespace {

using ida::ContextPtr;  // the SUNDIALS owners and flag names shared (common/ida_support.hpp)
using ida::flag_name;
using ida::IdaPtr;
using ida::MatrixPtr;
using ida::SolverPtr;
using ida::VectorPtr;

class GglSimulator final : public Simulator {
 public:
  GglSimulator(const Model& model, double rtol, ErrorTest error_test, bool sparse)
      : Simulator(model), dae_(model, sparse), n_(dae_.size()), rtol_(rtol) {
    const double length = min_model_length(model);
    atol_ = rtol_ * (std::isfinite(length) ? length : 1.0);
    atol_v_ = atol_ / 1.0;  // m/s: the position tolerance per second
    // The mass in the multipliers' weights (kg): the lightest point mass or body (see ida-index3).
    m_min_ = std::numeric_limits<double>::infinity();
    for (const PointMass& p : model.points) m_min_ = std::min(m_min_, p.mass);
    for (const RigidBody& b : model.bodies) m_min_ = std::min(m_min_, b.mass);
    if (!std::isfinite(m_min_)) m_min_ = 1.0;

    SUNContext ctx = nullptr;
    if (const int flag = SUNContext_Create(nullptr, &ctx); flag != 0)
      throw SolverError(fmt::format("ida-ggl: SUNContext_Create failed with flag {}", flag));
    ctx_.reset(ctx);
    yy_.reset(new_vector());
    yp_.reset(new_vector());
    id_.reset(new_vector());

    mem_.reset(IDACreate(ctx_.get()));
    if (!mem_) throw SolverError("ida-ggl: IDACreate failed");
    check(IDASetErrHandlerFn(mem_.get(), &GglSimulator::error_handler, this), "IDASetErrHandlerFn");
    N_VConst(0.0, yy_.get());
    N_VConst(0.0, yp_.get());
    check(IDAInit(mem_.get(), &GglSimulator::residual_fn, 0.0, yy_.get(), yp_.get()), "IDAInit");
    check(IDASetUserData(mem_.get(), this), "IDASetUserData");

    if (dae_.sparse()) {
      A_.reset(SUNSparseMatrix(n_, n_, static_cast<sunindextype>(dae_.row_indices().size()), CSC_MAT, ctx_.get()));
      if (!A_) throw SolverError("ida-ggl: SUNSparseMatrix failed");
      LS_.reset(SUNLinSol_KLU(yy_.get(), A_.get(), ctx_.get()));
      if (!LS_) throw SolverError("ida-ggl: SUNLinSol_KLU failed");
      klu_ = std::make_unique<ida::KluFirstPivots>(LS_.get());
    } else {
      A_.reset(SUNDenseMatrix(n_, n_, ctx_.get()));
      if (!A_) throw SolverError("ida-ggl: SUNDenseMatrix failed");
      LS_.reset(SUNLinSol_Dense(yy_.get(), A_.get(), ctx_.get()));
      if (!LS_) throw SolverError("ida-ggl: SUNLinSol_Dense failed");
    }
    check_ls(IDASetLinearSolver(mem_.get(), LS_.get(), A_.get()), "IDASetLinearSolver");
    check_ls(IDASetJacFn(mem_.get(), &GglSimulator::jacobian_fn), "IDASetJacFn");

    // id = 1: differential, in the error test; id = 0: algebraic, suppressed (see top of file).
    const int nq = dae_.nq();
    Eigen::Map<Eigen::VectorXd> id(N_VGetArrayPointer(id_.get()), n_);
    id.setZero();
    id.head(nq).setOnes();
    if (error_test == ErrorTest::kPositionsAndVelocities) id.segment(nq, nq).setOnes();
    check(IDASetId(mem_.get(), id_.get()), "IDASetId");
    check(IDASetSuppressAlg(mem_.get(), SUNTRUE), "IDASetSuppressAlg");
    check(IDASetMaxNumSteps(mem_.get(), 1000000), "IDASetMaxNumSteps");
    check(IDAWFtolerances(mem_.get(), &GglSimulator::weights_fn), "IDAWFtolerances");
    y0_.resize(n_);
    yp0_.resize(n_);
    dae_.consistent_initial_conditions(y0_, yp0_);
  }

 private:
  void do_initialize(double t_end) override {
    y() = y0_;
    yp() = yp0_;
    t_ = 0.0;
    message_[0] = '\0';
    check(IDAReInit(mem_.get(), 0.0, yy_.get(), yp_.get()), "IDAReInit");
    if (klu_) klu_->begin_run();
    h0_ = initial_step(t_end);
    check(IDASetInitStep(mem_.get(), h0_), "IDASetInitStep");
    check(IDASetStopTime(mem_.get(), t_end), "IDASetStopTime");  // every run: IDA disables it once reached
  }

  // The first step (s): 0.001 t_end as IDA's default, shortened so that |h q'| <= 0.5 and
  // h^2 |q''| <= 1 in q's weighted RMS norm, and |h v'| <= 0.5 in v's.
  double initial_step(double t_end) const {
    const int nq = dae_.nq();
    double sv = 0.0, sa = 0.0, sva = 0.0;
    for (int i = 0; i < nq; ++i) {
      const double w = 1.0 / (rtol_ * std::abs(y0_[i]) + atol_);
      const double wv = 1.0 / (rtol_ * std::abs(y0_[nq + i]) + atol_v_);
      sv += (w * yp0_[i]) * (w * yp0_[i]);
      sa += (w * yp0_[nq + i]) * (w * yp0_[nq + i]);
      sva += (wv * yp0_[nq + i]) * (wv * yp0_[nq + i]);
    }
    const double v_norm = std::sqrt(sv / nq), a_norm = std::sqrt(sa / nq), va_norm = std::sqrt(sva / nq);
    double h = 1e-3 * t_end;
    if (v_norm * h > 0.5) h = 0.5 / v_norm;
    if (a_norm * h * h > 1.0) h = 1.0 / std::sqrt(a_norm);
    if (error_test_velocities() && va_norm * h > 0.5) h = 0.5 / va_norm;
    return h;
  }
  bool error_test_velocities() const { return N_VGetArrayPointer(id_.get())[dae_.nq()] == 1.0; }

  void do_step(double t_end) override {
    double t_ret = t_;
    const int flag = IDASolve(mem_.get(), t_end, &t_ret, yy_.get(), yp_.get(), IDA_ONE_STEP);
    if (flag < 0) {
      do_finish_run();  // the counters up to the failure, for the failed row
      check(flag, "IDASolve");
    }
    t_ = t_ret;
  }

  void do_finish_run() override {
    long n_res = 0, n_jac = 0, n_newton = 0, n_err_fails = 0, n_conv_fails = 0;
    check(IDAGetNumResEvals(mem_.get(), &n_res), "IDAGetNumResEvals");
    check_ls(IDAGetNumJacEvals(mem_.get(), &n_jac), "IDAGetNumJacEvals");
    check(IDAGetNumNonlinSolvIters(mem_.get(), &n_newton), "IDAGetNumNonlinSolvIters");
    check(IDAGetNumErrTestFails(mem_.get(), &n_err_fails), "IDAGetNumErrTestFails");
    check(IDAGetNumNonlinSolvConvFails(mem_.get(), &n_conv_fails), "IDAGetNumNonlinSolvConvFails");
    stats_.rhs_evals = n_res;
    stats_.jacobian_evals = n_jac;
    stats_.newton_iterations = n_newton;
    stats_.failures = n_err_fails + n_conv_fails;
  }

  double do_time() const override { return t_; }

 public:
  const GglDae& dae() const { return dae_; }
  Eigen::VectorXd state() const { return Eigen::Map<const Eigen::VectorXd>(N_VGetArrayPointer(yy_.get()), n_); }

 private:

  void do_model_state() override {
    const int nq = dae_.nq();
    const double* data = N_VGetArrayPointer(yy_.get());
    q_model_ = Eigen::Map<const Eigen::VectorXd>(data, nq);
    v_model_ = Eigen::Map<const Eigen::VectorXd>(data + nq, nq);
  }

  Eigen::Map<Eigen::VectorXd> y() { return {N_VGetArrayPointer(yy_.get()), n_}; }
  Eigen::Map<Eigen::VectorXd> yp() { return {N_VGetArrayPointer(yp_.get()), n_}; }

  N_Vector new_vector() {
    N_Vector v = N_VNew_Serial(n_, ctx_.get());
    if (v == nullptr) throw SolverError("ida-ggl: N_VNew_Serial failed");
    return v;
  }

  void check(int flag, const char* function) const { check_flag(flag, function, false); }
  void check_ls(int flag, const char* function) const { check_flag(flag, function, true); }
  void check_flag(int flag, const char* function, bool linear_solver) const {
    if (flag >= 0) return;
    std::string what = fmt::format("ida-ggl: {} failed with flag {} ({}) at t = {}", function, flag,
                                   flag_name(flag, linear_solver), t_);
    if (message_[0] != '\0') what += fmt::format(": {}", message_.data());
    long ls_flag = 0;
    if (mem_ && IDAGetLastLinFlag(mem_.get(), &ls_flag) == IDALS_SUCCESS && ls_flag == SUNLS_LUFACT_FAIL)
      what += fmt::format(" (iteration matrix singular: zero pivot in column {} of {}; y = (q, v, lambda, mu))",
                          SUNLinSolLastFlag(LS_.get()), n_);
    throw SolverError(what);
  }

  // IDA callbacks; user_data is the simulator. They allocate nothing.
  static int residual_fn(realtype /*t*/, N_Vector yy, N_Vector yp, N_Vector rr, void* user_data) {
    auto* self = static_cast<GglSimulator*>(user_data);
    const int n = self->n_;
    self->dae_.residual(Eigen::Map<const Eigen::VectorXd>(N_VGetArrayPointer(yy), n),
                        Eigen::Map<const Eigen::VectorXd>(N_VGetArrayPointer(yp), n),
                        Eigen::Map<Eigen::VectorXd>(N_VGetArrayPointer(rr), n));
    return 0;
  }

  static int jacobian_fn(realtype /*t*/, realtype cj, N_Vector yy, N_Vector /*yp*/, N_Vector /*rr*/, SUNMatrix J,
                         void* user_data, N_Vector, N_Vector, N_Vector) {
    auto* self = static_cast<GglSimulator*>(user_data);
    const int n = self->n_;
    if (self->dae_.sparse()) {  // IDA zeroes the whole matrix, pattern included, before each call
      self->klu_->before_setup();
      const auto& cp = self->dae_.column_pointers();
      const auto& ri = self->dae_.row_indices();
      std::copy(cp.begin(), cp.end(), SUNSparseMatrix_IndexPointers(J));
      std::copy(ri.begin(), ri.end(), SUNSparseMatrix_IndexValues(J));
      self->dae_.jacobian_sparse(cj, Eigen::Map<const Eigen::VectorXd>(N_VGetArrayPointer(yy), n),
                                 SUNSparseMatrix_Data(J));
      return 0;
    }
    self->dae_.jacobian(cj, Eigen::Map<const Eigen::VectorXd>(N_VGetArrayPointer(yy), n),
                        Eigen::Map<Eigen::MatrixXd>(SUNDenseMatrix_Data(J), n, n));
    return 0;
  }

  // Error weights, 1 / tolerance, recomputed by IDA before every step (top of file).
  static int weights_fn(N_Vector yy, N_Vector ewt, void* user_data) {
    auto* self = static_cast<GglSimulator*>(user_data);
    double h = 0.0;
    long steps = 0;
    if (IDAGetNumSteps(self->mem_.get(), &steps) < 0) return -1;
    if (steps == 0) {
      h = self->h0_;
    } else if (IDAGetCurrentStep(self->mem_.get(), &h) < 0) {
      return -1;
    }
    h = std::abs(h);
    if (h == 0.0) h = 1.0;  // guard (h0_ > 0 once a run starts)
    const int nq = self->dae_.nq(), nc = self->dae_.nc();
    const double rtol = self->rtol_, atol = self->atol_, atol_v = self->atol_v_, m_min = self->m_min_;
    const double* y = N_VGetArrayPointer(yy);
    double* w = N_VGetArrayPointer(ewt);
    for (int i = 0; i < nq; ++i) w[i] = 1.0 / (rtol * std::abs(y[i]) + atol);
    for (int i = nq; i < 2 * nq; ++i) w[i] = 1.0 / (rtol * std::abs(y[i]) + atol_v);
    for (int i = 2 * nq; i < 2 * nq + nc; ++i) w[i] = h / (rtol * h * std::abs(y[i]) + m_min * atol_v);
    for (int i = 2 * nq + nc; i < 2 * nq + 2 * nc; ++i) w[i] = h / (rtol * h * std::abs(y[i]) + m_min * atol);
    return 0;
  }

  // Keeps IDA's last message (no allocation: warnings can arrive during timed steps).
  static void error_handler(int /*error_code*/, const char* /*module*/, const char* /*function*/, char* msg,
                            void* eh_data) {
    auto* self = static_cast<GglSimulator*>(eh_data);
    std::snprintf(self->message_.data(), self->message_.size(), "%s", msg != nullptr ? msg : "");
  }

  GglDae dae_;
  int n_;
  double rtol_, atol_ = 0.0, atol_v_ = 0.0, m_min_ = 1.0;
  double t_ = 0.0, h0_ = 0.0;
  Eigen::VectorXd y0_, yp0_;
  std::array<char, 512> message_{};
  // Declaration order is destruction order reversed: IDA memory first, the context last.
  ContextPtr ctx_;
  VectorPtr yy_, yp_, id_;
  MatrixPtr A_;
  SolverPtr LS_;
  std::unique_ptr<ida::KluFirstPivots> klu_;  // the sparse path's pivot keeping (ida_support.hpp)
  IdaPtr mem_;
};

class IdaGgl final : public Formulation {
 public:
  std::string name() const override { return "ida-ggl"; }
  std::string description() const override {
    return "natural coordinates, GGL stabilized index-2 DAE in (q, v, lambda, mu), SUNDIALS IDA with analytic Jacobian";
  }
  std::vector<IntegratorInfo> integrators() const override {
    return {{"bdf", SettingKind::kTolerance, 1e-3, 1e-13,
             "SUNDIALS IDA, variable-order BDF, GGL index 2, lambda and mu out of the error test", {}}};
  }
  // Joints and force elements through NaturalCoordinates; no contact role: contacts are unsupported
  // (IDA would need event location and an impact map restarting the DAE, as in ida-index3).
  Accepts accepts() const override { return {{ElementRole::kJoint, ElementRole::kForce}, {}}; }
  std::unique_ptr<Simulator> create(const Model& model, const std::string& integrator, double setting) const override {
    if (integrator != "bdf") throw SolverError(fmt::format("ida-ggl: unknown integrator '{}'", integrator));
    return make_simulator(model, setting);
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
  if (!(rtol > 0.0) || !std::isfinite(rtol))
    throw SolverError(fmt::format("ida-ggl: rtol must be positive and finite, got {}", rtol));
  return std::make_unique<GglSimulator>(model, rtol, error_test, sparse_path(la, model));
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
