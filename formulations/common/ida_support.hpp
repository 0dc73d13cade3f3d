// What the formulations built on SUNDIALS IDA share (ida-index3, ida-ggl): RAII owners of the
// SUNDIALS objects and the names of IDA's return flags for error messages. Each formulation keeps
// its own DAE, error test, weights and first step: those are what distinguishes them.
#pragma once

#include <ida/ida.h>
#include <sundials/sundials_context.h>
#include <sundials/sundials_linearsolver.h>
#include <sundials/sundials_matrix.h>
#include <sundials/sundials_nvector.h>

#include <cstdlib>
#include <memory>
#include <string>
#include <type_traits>

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

}  // namespace mbs::ida
