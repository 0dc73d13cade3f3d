// The SUNDIALS pieces under the IDA driver (common/ida_driver.hpp, ida-index3 and ida-ggl): RAII
// owners of the SUNDIALS objects, the names of IDA's return flags for error messages, and KLU's
// first pivots kept across runs.
#pragma once

#include <ida/ida.h>
#include <sundials/sundials_context.h>
#include <sundials/sundials_linearsolver.h>
#include <sundials/sundials_matrix.h>
#include <sundials/sundials_nvector.h>
#include <sunlinsol/sunlinsol_klu.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

namespace mbs::ida {

struct ContextFree {
  void operator()(std::remove_pointer_t<SUNContext>* ctx) const { SUNContext_Free(&ctx); }
};
struct VectorFree {
  void operator()(std::remove_pointer_t<N_Vector>* v) const { N_VDestroy(v); }
};
struct MatrixFree {
  void operator()(std::remove_pointer_t<SUNMatrix>* A) const { SUNMatDestroy(A); }
};
struct SolverFree {
  void operator()(std::remove_pointer_t<SUNLinearSolver>* LS) const { SUNLinSolFree(LS); }
};
struct IdaFree {
  void operator()(void* mem) const { IDAFree(&mem); }
};
using ContextPtr = std::unique_ptr<std::remove_pointer_t<SUNContext>, ContextFree>;
using VectorPtr = std::unique_ptr<std::remove_pointer_t<N_Vector>, VectorFree>;
using MatrixPtr = std::unique_ptr<std::remove_pointer_t<SUNMatrix>, MatrixFree>;
using SolverPtr = std::unique_ptr<std::remove_pointer_t<SUNLinearSolver>, SolverFree>;
using IdaPtr = std::unique_ptr<void, IdaFree>;

// The name of an IDA (or, linear_solver, IDALS) return flag; IDAGetReturnFlagName and
// IDAGetLinReturnFlagName return a malloc'd string.
inline std::string flag_name(int flag, bool linear_solver) {
  char* s = linear_solver ? IDAGetLinReturnFlagName(flag) : IDAGetReturnFlagName(flag);
  std::string out = s != nullptr ? s : "?";
  std::free(s);
  return out;
}

// SUNDIALS' KLU solver with the analysis and the first factorization's pivots kept across runs.
// SUNLinSol_KLU's initialize, called at the first step after every IDAReInit, forces klu_analyze
// and a pivoting klu_factor, which allocate. Every run of a simulator starts from the same state
// with the same first step, so the first run's first pivot sequence fits every later run's first
// matrix: a later run refactors on it (klu_refactor, no allocation; SUNDIALS' rcond test still
// re-pivots where it must) unless the previous run re-pivoted, and then starts afresh as SUNDIALS
// would. (Keeping the previous run's last pivots instead made a run of the N-four-bar fail at t = 0.)
class KluFirstPivots {
 public:
  // LS: a SUNLinSol_KLU solver, owned by the caller; its initialize is replaced here.
  explicit KluFirstPivots(SUNLinearSolver LS) : LS_(LS) { LS_->ops->initialize = &initialize_keeping_factorization; }

  // Before every run's first step: factor afresh, or refactor on the recorded pivots.
  void begin_run() {
    auto* c = content();
    c->first_factorize = recorded_ && c->numeric != nullptr && same_pivots(*c->numeric) ? 0 : 1;
  }
  // From the Jacobian callback, before each setup: the first run's first factorization's pivots,
  // recorded once (sized here, in the first run).
  void before_setup() {
    if (recorded_) return;
    const auto* numeric = content()->numeric;
    if (numeric == nullptr) return;
    pivots_.assign(numeric->Pnum, numeric->Pnum + numeric->n);
    recorded_ = true;
  }

 private:
  using Numeric = sun_klu_numeric;
  SUNLinearSolverContent_KLU content() const { return static_cast<SUNLinearSolverContent_KLU>(LS_->content); }
  bool same_pivots(const Numeric& numeric) const {
    return static_cast<size_t>(numeric.n) == pivots_.size() && std::equal(pivots_.begin(), pivots_.end(), numeric.Pnum);
  }
  // SUNLinSolInitialize_KLU without its forced factorization (begin_run() decides).
  static int initialize_keeping_factorization(SUNLinearSolver S) {
    static_cast<SUNLinearSolverContent_KLU>(S->content)->last_flag = SUNLS_SUCCESS;
    return SUNLS_SUCCESS;
  }

  SUNLinearSolver LS_;
  std::vector<std::remove_pointer_t<decltype(Numeric::Pnum)>> pivots_;
  bool recorded_ = false;
};

}  // namespace mbs::ida
