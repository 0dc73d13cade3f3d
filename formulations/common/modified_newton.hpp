// The Newton loop of the implicit natural-coordinate methods (alm-index3, penalty, gen-alpha): one
// step's iteration on its unknowns, with the method's equations and convergence test as hooks.
//
// Modified Newton: the step's first tangent is kept while every correction is at most
// `contraction` times the previous one, and refactored at the current iterate when it is not (a
// tangent that moves little within a step rarely needs refactoring: the second correction mostly
// confirms convergence). keep_tangent = false is full Newton, a fresh tangent every iteration.
//
// The method (passed by reference; its hooks may be private with `friend ModifiedNewton;`)
// provides
//   void newton_residual();                        the residual at the iterate
//   void newton_tangent();                         the tangent at the iterate, factored
//   double newton_correct();                       solve, update the iterate; |correction|_inf
//   bool newton_converged(const NewtonIterate&);   its test (and its own rules: a stall accepted,
//                                                  a penalty raised); throws on a non-finite state
//   void newton_failed(const NewtonIterate&);      throws SolverError (no convergence)
// and the loop counts into RunStats: a residual evaluation per iteration, a Jacobian evaluation
// per tangent, a Newton iteration per correction, a failure when it gives up (max_iterations, or a
// non-finite correction).
#pragma once

#include <cmath>
#include <limits>

#include "core/formulation.hpp"

namespace mbs {

struct NewtonRules {
  int max_iterations = 20;
  double contraction = 0.5;  // a correction above this share of the previous one is slow
  bool keep_tangent = true;  // modified Newton (false: full Newton)
};

// One iteration, as the method's convergence test sees it.
struct NewtonIterate {
  int it;          // 1, 2, ...
  double dq;       // |correction|_inf
  double dq_prev;  // the previous iteration's (infinity at the first)
  bool slow;       // !(dq <= contraction dq_prev): never at the first iteration
  bool fresh;      // this iteration factored a new tangent
};

class ModifiedNewton {
 public:
  // Iterates until method.newton_converged(); returns the number of iterations. Inlined into the
  // method's step, so that its constant rules fold (a full-Newton method keeps no `fresh` test).
  template <typename Method>
  [[gnu::always_inline]] static int run(Method& method, const NewtonRules rules, RunStats& stats) {
    bool fresh = true;
    double dq_prev = std::numeric_limits<double>::infinity();
    for (int it = 1;; ++it) {
      method.newton_residual();
      ++stats.rhs_evals;
      if (fresh) {
        method.newton_tangent();
        ++stats.jacobian_evals;
      }
      const double dq = method.newton_correct();
      ++stats.newton_iterations;
      const NewtonIterate x{it, dq, dq_prev, !(dq <= rules.contraction * dq_prev), fresh};
      if (method.newton_converged(x)) return it;
      fresh = !rules.keep_tangent || x.slow;
      dq_prev = dq;
      if (it == rules.max_iterations || !std::isfinite(dq)) {
        ++stats.failures;
        method.newton_failed(x);
        return it;  // newton_failed() throws
      }
    }
  }
};

}  // namespace mbs
