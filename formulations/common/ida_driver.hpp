// One SUNDIALS IDA simulator for the natural-coordinate DAEs (ida-index3, ida-ggl): it owns the
// context, vectors, iteration matrix and linear solver (dense LU, or KLU on the DAE's fixed sparse
// pattern, chosen once at set-up), the callbacks, the flag checks and IDA's counters. A formulation
// derives from Driver<Dae> and keeps what distinguishes it: its DAE (residual, Jacobian,
// consistent initial conditions), its error weights and its first step.
//
// The Dae type provides: size(), nq(), sparse(), column_pointers(), row_indices() (the sparse
// pattern, fixed at set-up), residual(y, y', F), jacobian(cj, y, J) (dense, column-major),
// jacobian_sparse(cj, y, values), consistent_initial_conditions(y, y'), with y = (q, v, ...).
#pragma once

#include <fmt/format.h>
#include <ida/ida.h>
#include <nvector/nvector_serial.h>
#include <sunlinsol/sunlinsol_dense.h>
#include <sunlinsol/sunlinsol_klu.h>
#include <sunmatrix/sunmatrix_dense.h>
#include <sunmatrix/sunmatrix_sparse.h>

#include <Eigen/Dense>
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <limits>
#include <memory>
#include <string>

#include "common/ida_support.hpp"
#include "common/length_scale.hpp"
#include "common/sparse_natural.hpp"
#include "core/formulation.hpp"

namespace mbs::ida {

// Which variables IDA's local error test sees (the rest are flagged algebraic and suppressed).
enum class ErrorTest {
  kPositionsOnly,           // q only
  kPositionsAndVelocities,  // q and v
};

// The scales of the error weights. atol = rtol x the shortest length of the model (m): the same
// relative accuracy on its smallest length (it matters where a coordinate crosses zero). m_min, the
// mass in the multipliers' weights (kg): the lightest point mass or body, not the smallest entry of
// M, which for a rigid body is a second moment of its unit vectors (kg m^2): tiny for a light
// slender planar link, it left zero multipliers a tolerance far below round-off.
struct Tolerances {
  double rtol = 0.0, atol = 0.0, m_min = 1.0;

  Tolerances(const Model& model, double rtol_) : rtol(rtol_) {
    const double length = min_model_length(model);
    atol = rtol * (std::isfinite(length) ? length : 1.0);
    m_min = std::numeric_limits<double>::infinity();
    for (const PointMass& p : model.points) m_min = std::min(m_min, p.mass);
    for (const RigidBody& b : model.bodies) m_min = std::min(m_min, b.mass);
    if (!std::isfinite(m_min)) m_min = 1.0;
  }
  // 1 / (rtol |q| + atol): q's weight (1/m).
  double q_weight(double q) const { return 1.0 / (rtol * std::abs(q) + atol); }
};

// What a formulation's error messages add to IDA's.
struct Messages {
  const char* prefix;         // before every message (e.g. "ida-ggl: ")
  const char* singular_hint;  // after the zero pivot's column of a singular iteration matrix
};

template <class Dae>
class Driver : public Simulator {
 public:
  const Dae& dae() const { return dae_; }
  // The current DAE state y (tests and diagnostics: it allocates).
  Eigen::VectorXd state() const { return Eigen::Map<const Eigen::VectorXd>(N_VGetArrayPointer(yy_.get()), n_); }

 protected:
  Driver(const Model& model, bool sparse, double rtol, ErrorTest error_test, Messages messages)
      : Simulator(model), dae_(model, sparse), n_(dae_.size()), tol_(model, rtol), messages_(messages) {
    SUNContext ctx = nullptr;
    if (const int flag = SUNContext_Create(nullptr, &ctx); flag != 0)
      throw SolverError(fmt::format("{}SUNContext_Create failed with flag {}", messages_.prefix, flag));
    ctx_.reset(ctx);
    yy_.reset(new_vector());
    yp_.reset(new_vector());
    id_.reset(new_vector());

    mem_.reset(IDACreate(ctx_.get()));
    if (!mem_) throw SolverError(fmt::format("{}IDACreate failed", messages_.prefix));
    // The harness reports failures itself (SolverError); keep IDA's text for that message.
    check(IDASetErrHandlerFn(mem_.get(), &Driver::error_handler, this), "IDASetErrHandlerFn");
    N_VConst(0.0, yy_.get());
    N_VConst(0.0, yp_.get());
    check(IDAInit(mem_.get(), &Driver::residual_fn, 0.0, yy_.get(), yp_.get()), "IDAInit");
    check(IDASetUserData(mem_.get(), this), "IDASetUserData");

    if (dae_.sparse()) {  // compressed-column matrix on the DAE's fixed pattern, factored by KLU
      A_.reset(SUNSparseMatrix(n_, n_, static_cast<sunindextype>(dae_.row_indices().size()), CSC_MAT, ctx_.get()));
      if (!A_) throw SolverError(fmt::format("{}SUNSparseMatrix failed", messages_.prefix));
      LS_.reset(SUNLinSol_KLU(yy_.get(), A_.get(), ctx_.get()));
      if (!LS_) throw SolverError(fmt::format("{}SUNLinSol_KLU failed", messages_.prefix));
      klu_ = std::make_unique<KluFirstPivots>(LS_.get());
    } else {
      A_.reset(SUNDenseMatrix(n_, n_, ctx_.get()));
      if (!A_) throw SolverError(fmt::format("{}SUNDenseMatrix failed", messages_.prefix));
      LS_.reset(SUNLinSol_Dense(yy_.get(), A_.get(), ctx_.get()));
      if (!LS_) throw SolverError(fmt::format("{}SUNLinSol_Dense failed", messages_.prefix));
    }
    check_ls(IDASetLinearSolver(mem_.get(), LS_.get(), A_.get()), "IDASetLinearSolver");
    check_ls(IDASetJacFn(mem_.get(), &Driver::jacobian_fn), "IDASetJacFn");

    // id = 1: differential, in the error test; id = 0: algebraic, suppressed (IDASetSuppressAlg).
    const int nq = dae_.nq();
    Eigen::Map<Eigen::VectorXd> id(N_VGetArrayPointer(id_.get()), n_);
    id.setZero();
    id.head(nq).setOnes();
    if (error_test == ErrorTest::kPositionsAndVelocities) id.segment(nq, nq).setOnes();
    check(IDASetId(mem_.get(), id_.get()), "IDASetId");
    check(IDASetSuppressAlg(mem_.get(), SUNTRUE), "IDASetSuppressAlg");
    check(IDASetMaxNumSteps(mem_.get(), 1000000), "IDASetMaxNumSteps");
    check(IDAWFtolerances(mem_.get(), &Driver::weights_fn), "IDAWFtolerances");
    y0_.resize(n_);
    yp0_.resize(n_);
    dae_.consistent_initial_conditions(y0_, yp0_);
  }

  const Tolerances& tolerances() const { return tol_; }
  bool velocities_in_error_test() const { return N_VGetArrayPointer(id_.get())[dae_.nq()] == 1.0; }
  // The consistent initial (y, y'), solved once at set-up.
  const Eigen::VectorXd& y0() const { return y0_; }
  const Eigen::VectorXd& yp0() const { return yp0_; }

  // The first step (s) by q alone: 0.001 t_end as IDA's default, shortened so that |h q'| <= 0.5
  // and h^2 |q''| <= 1 in q's weighted RMS norm (q' = v0, q'' = v'0 of the consistent initial state).
  double first_step_from_q(double t_end) const {
    const int nq = dae_.nq();
    double sv = 0.0, sa = 0.0;
    for (int i = 0; i < nq; ++i) {
      const double w = tol_.q_weight(y0_[i]);
      sv += (w * yp0_[i]) * (w * yp0_[i]);
      sa += (w * yp0_[nq + i]) * (w * yp0_[nq + i]);
    }
    const double v_norm = std::sqrt(sv / nq), a_norm = std::sqrt(sa / nq);
    double h = 1e-3 * t_end;
    if (v_norm * h > 0.5) h = 0.5 / v_norm;
    if (a_norm * h * h > 1.0) h = 1.0 / std::sqrt(a_norm);
    return h;
  }

 private:
  // The first step (s) of a run, set with IDASetInitStep: IDA computes the weights once before
  // the first step, so the h they are scaled by must be the step IDA first tries.
  virtual double do_first_step(double t_end) const = 0;
  // Error weights w = 1 / tolerance of y, with h the current step (the first step before it is taken).
  virtual void do_error_weights(double h, const double* y, double* w) const = 0;

  void do_initialize(double t_end) final {
    y() = y0_;
    yp() = yp0_;
    t_ = 0.0;
    message_[0] = '\0';
    check(IDAReInit(mem_.get(), 0.0, yy_.get(), yp_.get()), "IDAReInit");
    if (klu_) klu_->begin_run();
    h0_ = do_first_step(t_end);
    check(IDASetInitStep(mem_.get(), h0_), "IDASetInitStep");
    // t_end is known from here on; the stop time keeps IDA from stepping past it. Set every run:
    // newer IDA versions disable it once reached.
    check(IDASetStopTime(mem_.get(), t_end), "IDASetStopTime");
  }

  void do_step(double t_end) final {
    double t_ret = t_;
    const int flag = IDASolve(mem_.get(), t_end, &t_ret, yy_.get(), yp_.get(), IDA_ONE_STEP);
    if (flag < 0) {
      do_finish_run();  // the counters up to the failure, for the failed row
      check(flag, "IDASolve");
    }
    t_ = t_ret;
  }

  // Counters once per run, not per step.
  void do_finish_run() final {
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

  double do_time() const final { return t_; }

  void do_model_state() final {
    const int nq = dae_.nq();
    const double* data = N_VGetArrayPointer(yy_.get());
    q_model_ = Eigen::Map<const Eigen::VectorXd>(data, nq);
    v_model_ = Eigen::Map<const Eigen::VectorXd>(data + nq, nq);
  }

  Eigen::Map<Eigen::VectorXd> y() { return {N_VGetArrayPointer(yy_.get()), n_}; }
  Eigen::Map<Eigen::VectorXd> yp() { return {N_VGetArrayPointer(yp_.get()), n_}; }

  N_Vector new_vector() {
    N_Vector v = N_VNew_Serial(n_, ctx_.get());
    if (v == nullptr) throw SolverError(fmt::format("{}N_VNew_Serial failed", messages_.prefix));
    return v;
  }

  void check(int flag, const char* function) const { check_flag(flag, function, false); }
  void check_ls(int flag, const char* function) const { check_flag(flag, function, true); }
  void check_flag(int flag, const char* function, bool linear_solver) const {
    if (flag >= 0) return;
    std::string what = fmt::format("{}{} failed with flag {} ({}) at t = {}", messages_.prefix, function, flag,
                                   flag_name(flag, linear_solver), t_);
    if (message_[0] != '\0') what += fmt::format(": {}", message_.data());
    // IDA reports a singular iteration matrix (e.g. a redundant constraint) only as a convergence
    // failure; say so, with the zero pivot's column (1-based).
    long ls_flag = 0;
    if (mem_ && IDAGetLastLinFlag(mem_.get(), &ls_flag) == IDALS_SUCCESS && ls_flag == SUNLS_LUFACT_FAIL)
      what += fmt::format(" (iteration matrix singular: zero pivot in column {} of {}; {})",
                          SUNLinSolLastFlag(LS_.get()), n_, messages_.singular_hint);
    throw SolverError(what);
  }

  // IDA callbacks; user_data is the simulator. They allocate nothing.
  static int residual_fn(realtype /*t*/, N_Vector yy, N_Vector yp, N_Vector rr, void* user_data) {
    auto* self = static_cast<Driver*>(user_data);
    const int n = self->n_;
    self->dae_.residual(Eigen::Map<const Eigen::VectorXd>(N_VGetArrayPointer(yy), n),
                        Eigen::Map<const Eigen::VectorXd>(N_VGetArrayPointer(yp), n),
                        Eigen::Map<Eigen::VectorXd>(N_VGetArrayPointer(rr), n));
    return 0;
  }

  static int jacobian_fn(realtype /*t*/, realtype cj, N_Vector yy, N_Vector /*yp*/, N_Vector /*rr*/, SUNMatrix J,
                         void* user_data, N_Vector, N_Vector, N_Vector) {
    auto* self = static_cast<Driver*>(user_data);
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

  // Error weights, recomputed by IDA before every step. Before the first step, h is the first step
  // we set (IDA's current step is then 0, or after IDAReInit the previous run's last one).
  static int weights_fn(N_Vector yy, N_Vector ewt, void* user_data) {
    auto* self = static_cast<Driver*>(user_data);
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
    self->do_error_weights(h, N_VGetArrayPointer(yy), N_VGetArrayPointer(ewt));
    return 0;
  }

  // Keeps IDA's last message (no allocation: warnings can arrive during timed steps).
  static void error_handler(int /*error_code*/, const char* /*module*/, const char* /*function*/, char* msg,
                            void* eh_data) {
    auto* self = static_cast<Driver*>(eh_data);
    std::snprintf(self->message_.data(), self->message_.size(), "%s", msg != nullptr ? msg : "");
  }

  Dae dae_;
  int n_;
  Tolerances tol_;
  Messages messages_;
  double t_ = 0.0, h0_ = 0.0;  // s: time, first step of the run
  Eigen::VectorXd y0_, yp0_;   // consistent initial y and y'
  std::array<char, 512> message_{};
  // Declaration order is destruction order reversed: IDA memory first, the context last.
  ContextPtr ctx_;
  VectorPtr yy_, yp_, id_;
  MatrixPtr A_;
  SolverPtr LS_;
  std::unique_ptr<KluFirstPivots> klu_;  // the sparse path's pivot keeping (ida_support.hpp)
  IdaPtr mem_;
};

// What both IDA formulations register alike: one integrator, "bdf", whose setting is rtol, on
// joints and force elements. No contact role: IDA would need event location and an impact map
// restarting the DAE.
class BdfFormulation : public Formulation {
 public:
  using Make = std::unique_ptr<Simulator> (*)(const Model& model, double rtol);
  // bdf: the one case's line for --list (what is in IDA's error test).
  BdfFormulation(Make make, const char* bdf) : make_(make), bdf_(bdf) {}

  std::vector<IntegratorInfo> integrators() const final {
    return {{"bdf", SettingKind::kTolerance, 1e-3, 1e-13, bdf_, {}}};
  }
  Accepts accepts() const override { return {{ElementRole::kJoint, ElementRole::kForce}, {}}; }
  std::unique_ptr<Simulator> create(const Model& model, const std::string& integrator, double setting) const final {
    if (integrator != "bdf") throw SolverError(fmt::format("{}: unknown integrator '{}'", name(), integrator));
    return make_(model, setting);
  }

 private:
  Make make_;
  const char* bdf_;
};

// A formulation's simulator Sim (a Driver) after checking rtol (who: the formulation, for the
// message); la: dense or sparse (sparse_path).
template <class Sim>
std::unique_ptr<Simulator> make_checked(const char* who, const Model& model, double rtol, ErrorTest error_test,
                                        LinearAlgebra la) {
  if (!(rtol > 0.0) || !std::isfinite(rtol))
    throw SolverError(fmt::format("{}: rtol must be positive and finite, got {}", who, rtol));
  return std::make_unique<Sim>(model, rtol, error_test, sparse_path(la, model));
}

}  // namespace mbs::ida
