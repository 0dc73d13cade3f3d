// Formulation "ida-index3": natural coordinates as an index-3 DAE in y = (q, v, lambda), solved by
// SUNDIALS IDA (variable-order, variable-step BDF) with a dense analytic Jacobian.
//
// Error test: only q is in IDA's local error test; v and lambda are flagged algebraic (id = 0) and
// suppressed (IDASetSuppressAlg). BDF error estimates of the index-2 v and index-3 lambda do not
// shrink with h as IDA's estimator assumes, and v is only as accurate as the differentiated q
// anyway. With v left in (only lambda out) and plain weights the step collapses at most rtols (and
// takes far more steps where it does not); with the h-scaled weights below it runs, but the
// loosest rtol meeting the energy rule takes more steps (docs/formulations.md, Method notes).
//
// Error weights (IDAWFtolerances, not IDASStolerances): q gets 1 / (rtol |q| + atol); v and lambda,
// which only enter the Newton convergence test, get tolerances scaled by 1/h and 1/h^2 (the index
// scaling RADAU5 applies to index-2 and index-3 variables). Their Newton corrections, and the
// round-off in them, are 1/h and 1/h^2 times those of q, so with fixed weights the Newton test
// fails ever more as h shrinks and the step collapses (seen with IDASStolerances at tight rtols on
// the pendulum early in the run, where lambda ~ 0 leaves only atol; Method notes).
//
// The first step and its weights: IDA computes the weights once before the first step and again
// only after a successful one, so the h they are scaled by must be the step IDA first tries, and
// the retries at t = 0 (error-test or Newton failures, h cut up to 4x each) never rescale them.
// Before, the first weights took h = 1 (plain tolerances; on a second run, IDA still reported the
// previous run's last step, so runs differed), and IDA's own first step, 0.001 t_end shortened only
// by q' (zero from rest), ignored q''. On spatial rigid bodies at tight rtols every first step
// then failed Newton's test on lambda, whose tolerance was h^2 too tight, down to IDA_CONV_FAIL at
// t = 0 (a closed spatial loop of rigid bars; tests/test_elements.cpp; Method notes). Now the first
// step is ours, from q' and q'' (BDF1's local error h^2/2 |q''| about half the q tolerance), set
// with IDASetInitStep each run, and the weights use it until the first step is taken.
//
// atol = rtol x the shortest rod length (m): the error test sees only q, so this is the same
// relative accuracy on the model's smallest length (it matters where a coordinate crosses zero).
//
// Planar pendulum: below some rtol the energy rule holds; in a band above it drift is not monotone
// in rtol (which rtols pass shifts with small changes, e.g. the weights before the first step;
// docs/formulations.md, Method notes). The tuner confirms
// its choice on a grid and the midpoints below it, which is why its setting can sit in that band.
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
#include "ida_index3/ida_residual.hpp"
#include "ida_index3/linearizer.hpp"

namespace mbs::ida_index3 {

// ---------------------------------------------------------------------------------------------
// The DAE

Index3Dae::Index3Dae(const Model& model, bool sparse)
    : nat_(model),
      sparse_(sparse),
      Q_(nat_.Q()),
      dQ_dq_(nat_.has_force_elements() ? nat_.nq() : 0, nat_.has_force_elements() ? nat_.nq() : 0),
      dQ_dv_(dQ_dq_.rows(), dQ_dq_.cols()),
      rows_(independent_rows(nat_, model)),
      inv_m_(nat_.M_diag().cwiseInverse()),
      Phi_q_all_(nat_.nc(), nat_.nq()),
      Phi_all_(nat_.nc()),
      mu_all_(Eigen::VectorXd::Zero(nat_.nc())),
      Phi_q_(nc(), nat_.nq()) {
  if (sparse_) build_sparse_pattern();
}

void Index3Dae::build_sparse_pattern() {
  const int n = nq(), m = nc(), N = size(), dim = nat_.dim();
  Phi_q_sp_ = std::make_unique<SparseJacobian>(nat_, rows_);
  const auto& J = Phi_q_sp_->matrix();
  std::vector<Eigen::Triplet<double, int>> t;
  for (int i = 0; i < n; ++i) {
    t.emplace_back(i, i, 1.0);
    t.emplace_back(i, n + i, 1.0);
    t.emplace_back(n + i, n + i, 1.0);
  }
  for (int k = 0; k < m; ++k)
    for (int p = J.outerIndexPtr()[k]; p < J.outerIndexPtr()[k + 1]; ++p) {
      t.emplace_back(2 * n + k, J.innerIndexPtr()[p], 1.0);
      t.emplace_back(n + J.innerIndexPtr()[p], 2 * n + k, 1.0);
    }
  // Geometric stiffness sum_k lambda_k d2Phi_k/dq2 of the kept rows (as NaturalCoordinates::add_Phi_qq_times).
  struct Entry {
    int i, j, row;
    double coef;
  };
  std::vector<Entry> hess;
  for (const int r : rows_) {
    const ConstraintRow& row = nat_.rows()[r];
    const Combo& d2 = row.same ? row.d1 : row.d2;
    for (int a = 0; a < row.d1.n; ++a)
      for (int b = 0; b < d2.n; ++b) {
        const double x = row.s * row.d1.w[a] * d2.w[b];
        for (int c = 0; c < dim; ++c) {
          hess.push_back({row.d1.off[a] + c, d2.off[b] + c, r, x});
          hess.push_back({d2.off[b] + c, row.d1.off[a] + c, r, x});
        }
      }
  }
  for (const Entry& e : hess) t.emplace_back(n + e.i, e.j, 1.0);
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
    slot_q_.push_back(slot(i, i));
    slot_v_.push_back(slot(i, n + i));
    slot_m_.push_back(slot(n + i, n + i));
  }
  for (int k = 0; k < m; ++k)
    for (int p = J.outerIndexPtr()[k]; p < J.outerIndexPtr()[k + 1]; ++p) {
      slot_j_.push_back(slot(2 * n + k, J.innerIndexPtr()[p]));
      slot_jt_.push_back(slot(n + J.innerIndexPtr()[p], 2 * n + k));
    }
  for (const Entry& e : hess) hess_.push_back({slot(n + e.i, e.j), e.row, e.coef});
}

void Index3Dae::jacobian_sparse(double cj, const Eigen::Ref<const Eigen::VectorXd>& y, double* values) {
  const int n = nq(), m = nc();
  std::fill(values, values + row_ind_.size(), 0.0);
  for (int i = 0; i < n; ++i) {
    values[slot_q_[i]] = cj;
    values[slot_v_[i]] = -1.0;
    values[slot_m_[i]] = cj * nat_.M_diag()[i];
  }
  Phi_q_sp_->evaluate(y.head(n));
  const double* J = Phi_q_sp_->matrix().valuePtr();
  for (size_t p = 0; p < slot_j_.size(); ++p) {
    values[slot_j_[p]] = J[p];
    values[slot_jt_[p]] = J[p];
  }
  const auto lambda = y.tail(m);
  for (int k = 0; k < m; ++k) mu_all_[rows_[k]] = lambda[k];  // dropped rows stay 0
  for (const Hess& h : hess_) values[h.slot] += mu_all_[h.row] * h.coef;
}

void Index3Dae::kept_Phi_q(const Eigen::Ref<const Eigen::VectorXd>& q) {
  nat_.Phi_q(q, Phi_q_all_);
  for (int k = 0; k < nc(); ++k) Phi_q_.row(k) = Phi_q_all_.row(rows_[k]);
}

void Index3Dae::residual(const Eigen::Ref<const Eigen::VectorXd>& y, const Eigen::Ref<const Eigen::VectorXd>& yp,
                         Eigen::Ref<Eigen::VectorXd> F) {
  const int n = nq(), m = nc();
  const auto q = y.head(n), v = y.segment(n, n), lambda = y.tail(m);
  const auto q_dot = yp.head(n), v_dot = yp.segment(n, n);

  // kinematics: q' - v = 0
  F.head(n) = q_dot - v;

  // dynamics: M v' + Phi_q^T lambda - Q = 0
  auto F_dyn = F.segment(n, n);
  if (sparse_) {
    Phi_q_sp_->evaluate(q);
    F_dyn.noalias() = Phi_q_sp_->matrix().transpose() * lambda;
  } else {
    kept_Phi_q(q);
    F_dyn.noalias() = Phi_q_.transpose() * lambda;
  }
  F_dyn += nat_.M_diag().cwiseProduct(v_dot);
  if (nat_.has_force_elements()) {
    nat_.Q(q, v, Q_);
    F_dyn -= Q_;
  } else {
    F_dyn -= nat_.Q();
  }

  // constraints: Phi(q) = 0 (kept rows)
  nat_.Phi(q, Phi_all_);
  for (int k = 0; k < m; ++k) F[2 * n + k] = Phi_all_[rows_[k]];
}

void Index3Dae::jacobian(double cj, const Eigen::Ref<const Eigen::VectorXd>& y, Eigen::Ref<Eigen::MatrixXd> J) {
  const int n = nq(), m = nc();
  const auto q = y.head(n), lambda = y.tail(m);
  J.setZero();

  // kinematics rows: [cj I, -I, 0]
  J.block(0, 0, n, n).diagonal().setConstant(cj);
  J.block(0, n, n, n).diagonal().setConstant(-1.0);

  // dynamics rows: [sum_k lambda_k d2Phi_k/dq2 - dQ/dq, cj M - dQ/dv, Phi_q^T]
  for (int k = 0; k < m; ++k) mu_all_[rows_[k]] = lambda[k];  // dropped rows stay 0
  nat_.add_Phi_qq_times(mu_all_, J.block(n, 0, n, n));
  if (nat_.has_force_elements()) {
    dQ_dq_.setZero();
    dQ_dv_.setZero();
    nat_.add_Q_jacobians(q, y.segment(n, n), dQ_dq_, dQ_dv_);
    J.block(n, 0, n, n) -= dQ_dq_;
    J.block(n, n, n, n) = -dQ_dv_;
  }
  J.block(n, n, n, n).diagonal() += cj * nat_.M_diag();
  kept_Phi_q(q);
  J.block(n, 2 * n, n, m) = Phi_q_.transpose();

  // constraints rows: [Phi_q, 0, 0]
  J.block(2 * n, 0, m, n) = Phi_q_;
}

void Index3Dae::consistent_initial_conditions(Eigen::Ref<Eigen::VectorXd> y, Eigen::Ref<Eigen::VectorXd> yp) {
  const int n = nq(), m = nc();
  auto q = y.head(n), v = y.segment(n, n), lambda = y.tail(m);
  q = nat_.model().initial_q();
  v = nat_.model().initial_v();
  // Setup only: the shared toolkit's projection of v onto Phi_q v = 0 and its consistent
  // accelerations and multipliers (common/kept_constraints.hpp), on the same kept rows.
  RunStats setup_stats;
  KeptConstraints<Eigen::Dynamic, Eigen::Dynamic> kc(nat_, rows_, setup_stats, sparse_, "ida-index3");
  kc.load(q, v);
  kc.project_velocities(v);
  kc.load(q, v);
  nat_.Q(q, v, Q_);
  Eigen::VectorXd a(n), lambda_kept(m);
  kc.accelerations(Q_, a, lambda_kept);
  lambda = lambda_kept;
  yp.head(n) = v;
  yp.segment(n, n) = a;
  // lambda' is not determined at this level; it only seeds IDA's first predictor.
  yp.tail(m).setZero();
}

// ---------------------------------------------------------------------------------------------
// The IDA simulator

namespace {

using ida::ContextPtr;  // the SUNDIALS owners and flag names shared (common/ida_support.hpp)
using ida::flag_name;
using ida::IdaPtr;
using ida::MatrixPtr;
using ida::SolverPtr;
using ida::VectorPtr;

class IdaSimulator final : public Simulator {
 public:
  IdaSimulator(const Model& model, double rtol, ErrorTest error_test, bool sparse)
      : Simulator(model), dae_(model, sparse), n_(dae_.size()), rtol_(rtol) {
    const double length = min_model_length(model);
    atol_ = rtol_ * (std::isfinite(length) ? length : 1.0);
    // The mass in the lambda weights (kg): the lightest point mass or body. Not the smallest entry
    // of M, which for a rigid body is a second moment of its unit vectors (kg m^2): 2.2e-7 for a
    // light slender planar link, which left zero multipliers a tolerance of 1e-17 N.
    m_min_ = std::numeric_limits<double>::infinity();
    for (const PointMass& p : model.points) m_min_ = std::min(m_min_, p.mass);
    for (const RigidBody& b : model.bodies) m_min_ = std::min(m_min_, b.mass);

    SUNContext ctx = nullptr;
    if (const int flag = SUNContext_Create(nullptr, &ctx); flag != 0)
      throw SolverError(fmt::format("SUNContext_Create failed with flag {}", flag));
    ctx_.reset(ctx);
    yy_.reset(new_vector("N_VNew_Serial"));
    yp_.reset(new_vector("N_VNew_Serial"));
    id_.reset(new_vector("N_VNew_Serial"));

    mem_.reset(IDACreate(ctx_.get()));
    if (!mem_) throw SolverError("IDACreate failed");
    // The harness reports failures itself (SolverError); keep IDA's text for that message.
    check(IDASetErrHandlerFn(mem_.get(), &IdaSimulator::error_handler, this), "IDASetErrHandlerFn");
    N_VConst(0.0, yy_.get());
    N_VConst(0.0, yp_.get());
    check(IDAInit(mem_.get(), &IdaSimulator::residual_fn, 0.0, yy_.get(), yp_.get()), "IDAInit");
    check(IDASetUserData(mem_.get(), this), "IDASetUserData");

    if (dae_.sparse()) {  // compressed-column matrix on the DAE's fixed pattern, factored by KLU
      A_.reset(SUNSparseMatrix(n_, n_, static_cast<sunindextype>(dae_.row_indices().size()), CSC_MAT, ctx_.get()));
      if (!A_) throw SolverError("SUNSparseMatrix failed");
      LS_.reset(SUNLinSol_KLU(yy_.get(), A_.get(), ctx_.get()));
      if (!LS_) throw SolverError("SUNLinSol_KLU failed");
      klu_ = std::make_unique<ida::KluFirstPivots>(LS_.get());
    } else {
      A_.reset(SUNDenseMatrix(n_, n_, ctx_.get()));
      if (!A_) throw SolverError("SUNDenseMatrix failed");
      LS_.reset(SUNLinSol_Dense(yy_.get(), A_.get(), ctx_.get()));
      if (!LS_) throw SolverError("SUNLinSol_Dense failed");
    }
    check_ls(IDASetLinearSolver(mem_.get(), LS_.get(), A_.get()), "IDASetLinearSolver");
    check_ls(IDASetJacFn(mem_.get(), &IdaSimulator::jacobian_fn), "IDASetJacFn");

    // id = 1: differential, in the error test; id = 0: algebraic, suppressed (see top of file).
    const int nq = dae_.nq();
    Eigen::Map<Eigen::VectorXd> id(N_VGetArrayPointer(id_.get()), n_);
    id.setZero();
    id.head(nq).setOnes();
    if (error_test == ErrorTest::kPositionsAndVelocities) id.segment(nq, nq).setOnes();
    check(IDASetId(mem_.get(), id_.get()), "IDASetId");
    check(IDASetSuppressAlg(mem_.get(), SUNTRUE), "IDASetSuppressAlg");
    check(IDASetMaxNumSteps(mem_.get(), 1000000), "IDASetMaxNumSteps");
    check(IDAWFtolerances(mem_.get(), &IdaSimulator::weights_fn), "IDAWFtolerances");
    y0_.resize(n_);
    yp0_.resize(n_);
    dae_.consistent_initial_conditions(y0_, yp0_);
  }

 private:
  void do_initialize(double t_end) override {
    y() = y0_;  // consistent initial conditions, solved once at setup
    yp() = yp0_;
    t_ = 0.0;
    message_[0] = '\0';
    check(IDAReInit(mem_.get(), 0.0, yy_.get(), yp_.get()), "IDAReInit");
    if (klu_) klu_->begin_run();
    h0_ = initial_step(t_end);
    check(IDASetInitStep(mem_.get(), h0_), "IDASetInitStep");
    // t_end is known from here on; the stop time keeps IDA from stepping past it. Set every run:
    // newer IDA versions disable it once reached.
    check(IDASetStopTime(mem_.get(), t_end), "IDASetStopTime");
  }

  // The first step (s): 0.001 t_end as IDA's default, shortened so that |h q'| <= 0.5 and
  // h^2 |q''| <= 1 in q's weighted RMS norm (q' = v0, q'' = v'0 of the consistent initial state).
  double initial_step(double t_end) const {
    const int nq = dae_.nq();
    double sv = 0.0, sa = 0.0;
    for (int i = 0; i < nq; ++i) {
      const double w = 1.0 / (rtol_ * std::abs(y0_[i]) + atol_);
      sv += (w * yp0_[i]) * (w * yp0_[i]);
      sa += (w * yp0_[nq + i]) * (w * yp0_[nq + i]);
    }
    const double v_norm = std::sqrt(sv / nq), a_norm = std::sqrt(sa / nq);
    double h = 1e-3 * t_end;
    if (v_norm * h > 0.5) h = 0.5 / v_norm;
    if (a_norm * h * h > 1.0) h = 1.0 / std::sqrt(a_norm);
    return h;
  }

  void do_step(double t_end) override {
    double t_ret = t_;
    const int flag = IDASolve(mem_.get(), t_end, &t_ret, yy_.get(), yp_.get(), IDA_ONE_STEP);
    if (flag < 0) {
      do_finish_run();  // the counters up to the failure, for the failed row
      check(flag, "IDASolve");
    }
    t_ = t_ret;
  }

  // Counters once per run, not per step.
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

  void do_model_state() override {
    const int nq = dae_.nq();
    const double* data = N_VGetArrayPointer(yy_.get());
    q_model_ = Eigen::Map<const Eigen::VectorXd>(data, nq);
    v_model_ = Eigen::Map<const Eigen::VectorXd>(data + nq, nq);
  }

  Eigen::Map<Eigen::VectorXd> y() { return {N_VGetArrayPointer(yy_.get()), n_}; }
  Eigen::Map<Eigen::VectorXd> yp() { return {N_VGetArrayPointer(yp_.get()), n_}; }

  N_Vector new_vector(const char* what) {
    N_Vector v = N_VNew_Serial(n_, ctx_.get());
    if (v == nullptr) throw SolverError(fmt::format("{} failed", what));
    return v;
  }

  void check(int flag, const char* function) const { check_flag(flag, function, false); }
  void check_ls(int flag, const char* function) const { check_flag(flag, function, true); }
  void check_flag(int flag, const char* function, bool linear_solver) const {
    if (flag >= 0) return;
    std::string what = fmt::format("{} failed with flag {} ({}) at t = {}", function, flag,
                                   flag_name(flag, linear_solver), t_);
    if (message_[0] != '\0') what += fmt::format(": {}", message_.data());
    // IDA reports a singular iteration matrix (e.g. a redundant constraint) only as a convergence
    // failure; say so, with the zero pivot's column (1-based; y = (q, v, lambda)).
    long ls_flag = 0;
    if (mem_ && IDAGetLastLinFlag(mem_.get(), &ls_flag) == IDALS_SUCCESS && ls_flag == SUNLS_LUFACT_FAIL)
      what += fmt::format(" (iteration matrix singular: zero pivot in column {} of {}; redundant constraints?)",
                          SUNLinSolLastFlag(LS_.get()), n_);
    throw SolverError(what);
  }

  // IDA callbacks; user_data is the simulator. They allocate nothing.
  static int residual_fn(realtype /*t*/, N_Vector yy, N_Vector yp, N_Vector rr, void* user_data) {
    auto* self = static_cast<IdaSimulator*>(user_data);
    const int n = self->n_;
    self->dae_.residual(Eigen::Map<const Eigen::VectorXd>(N_VGetArrayPointer(yy), n),
                        Eigen::Map<const Eigen::VectorXd>(N_VGetArrayPointer(yp), n),
                        Eigen::Map<Eigen::VectorXd>(N_VGetArrayPointer(rr), n));
    return 0;
  }

  static int jacobian_fn(realtype /*t*/, realtype cj, N_Vector yy, N_Vector /*yp*/, N_Vector /*rr*/, SUNMatrix J,
                         void* user_data, N_Vector, N_Vector, N_Vector) {
    auto* self = static_cast<IdaSimulator*>(user_data);
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
    // SUNDIALS dense matrices are column-major, like Eigen's default.
    self->dae_.jacobian(cj, Eigen::Map<const Eigen::VectorXd>(N_VGetArrayPointer(yy), n),
                        Eigen::Map<Eigen::MatrixXd>(SUNDenseMatrix_Data(J), n, n));
    return 0;
  }

  // Error weights, 1 / tolerance, recomputed by IDA before every step. q: rtol |q| + atol (m).
  // v and lambda (index 2 and 3) are scaled by h and h^2: tolerance
  // rtol |v| + atol / h (m/s) and rtol |lambda| + m_min atol / h^2 (N). Newton corrections to v and
  // lambda are ~ 1/h and 1/h^2 times those to q (and so is their round-off), so fixed weights make
  // the Newton convergence test fail ever more as h shrinks, and the step collapses.
  static int weights_fn(N_Vector yy, N_Vector ewt, void* user_data) {
    auto* self = static_cast<IdaSimulator*>(user_data);
    // Before the first step: the first step we set (IDA's current step is then 0, or after
    // IDAReInit the previous run's last one). See the top of the file.
    double h = 0.0;
    long steps = 0;
    if (IDAGetNumSteps(self->mem_.get(), &steps) < 0) return -1;
    if (steps == 0) {
      h = self->h0_;
    } else if (IDAGetCurrentStep(self->mem_.get(), &h) < 0) {
      return -1;
    }
    h = std::abs(h);
    if (h == 0.0) h = 1.0;  // guard (h0_ > 0 once a run starts): plain weights, all positive
    const int nq = self->dae_.nq(), n = self->n_;
    const double rtol = self->rtol_, atol = self->atol_, m_min = self->m_min_;
    const double* y = N_VGetArrayPointer(yy);
    double* w = N_VGetArrayPointer(ewt);
    for (int i = 0; i < nq; ++i) w[i] = 1.0 / (rtol * std::abs(y[i]) + atol);
    for (int i = nq; i < 2 * nq; ++i) w[i] = h / (rtol * h * std::abs(y[i]) + atol);
    for (int i = 2 * nq; i < n; ++i) w[i] = h * h / (rtol * h * h * std::abs(y[i]) + m_min * atol);
    return 0;
  }

  // Keeps IDA's last message (no allocation: warnings can arrive during timed steps).
  static void error_handler(int /*error_code*/, const char* /*module*/, const char* /*function*/, char* msg,
                            void* eh_data) {
    auto* self = static_cast<IdaSimulator*>(eh_data);
    std::snprintf(self->message_.data(), self->message_.size(), "%s", msg != nullptr ? msg : "");
  }

  Index3Dae dae_;
  int n_;
  double rtol_, atol_ = 0.0, m_min_ = 1.0;
  double t_ = 0.0, h0_ = 0.0;  // s: time, first step of the run
  Eigen::VectorXd y0_, yp0_;  // consistent initial (q, v, lambda) and its derivative
  std::array<char, 512> message_{};
  // Declaration order is destruction order reversed: IDA memory first, the context last.
  ContextPtr ctx_;
  VectorPtr yy_, yp_, id_;
  MatrixPtr A_;
  SolverPtr LS_;
  std::unique_ptr<ida::KluFirstPivots> klu_;  // the sparse path's pivot keeping (ida_support.hpp)
  IdaPtr mem_;
};

class IdaIndex3 final : public Formulation {
 public:
  std::string name() const override { return "ida-index3"; }
  std::string description() const override {
    return "natural coordinates, index-3 DAE in (q, v, lambda), SUNDIALS IDA with analytic dense Jacobian";
  }
  std::vector<IntegratorInfo> integrators() const override {
    return {{"bdf", SettingKind::kTolerance, 1e-3, 1e-13,
             "SUNDIALS IDA, variable-order BDF, index 3, v and lambda out of the error test", {}}};
  }
  Accepts accepts() const override { return {{ElementRole::kJoint, ElementRole::kForce}, {}}; }
  std::unique_ptr<Simulator> create(const Model& model, const std::string& integrator, double setting) const override {
    if (integrator != "bdf") throw SolverError(fmt::format("ida-index3: unknown integrator '{}'", integrator));
    return make_simulator(model, setting);
  }
  std::string linearization_unsupported_reason(const Model& model) const override {
    return linearizer_unsupported_reason(model);
  }
  std::unique_ptr<Linearizer> create_linearizer(const Model& model) const override { return make_linearizer(model); }
};

}  // namespace

std::unique_ptr<Simulator> make_simulator(const Model& model, double rtol, ErrorTest error_test, LinearAlgebra la) {
  if (!(rtol > 0.0) || !std::isfinite(rtol))
    throw SolverError(fmt::format("ida-index3: rtol must be positive and finite, got {}", rtol));
  return std::make_unique<IdaSimulator>(model, rtol, error_test, sparse_path(la, model));
}

MBS_REGISTER_FORMULATION(IdaIndex3);

}  // namespace mbs::ida_index3
