// One row of a linearization problem: a formulation's linearization about the equilibrium, scored
// by the eigenvalue error against the exact spectrum, and timed over `repetitions` executions with
// Google Benchmark.
#pragma once

#include <complex>
#include <vector>

#include "core/formulation.hpp"
#include "problem/problem.hpp"
#include "run/bench_case.hpp"

namespace mbs {

// The exact spectrum of the linearized pendulum: +-i sqrt(g/l), each (dim - 1) times.
std::vector<std::complex<double>> exact_pendulum_eigenvalues(const Problem& problem);

// The spec's eigenvalue error: norm-2 of (true eigenvalues - exact ones), each true eigenvalue paired
// with the nearest unused exact one. Infinite when there are no true eigenvalues, or more than
// exact ones (a spurious eigenvalue judged true).
double eigenvalue_error(const std::vector<Eigenvalue>& eigenvalues, const std::vector<std::complex<double>>& exact);

// Linearizes, scores and times one formulation (not timed when !timed), within timeout_s seconds
// of wall-clock time (0: no budget; --timeout). Never throws: failures and an exceeded budget
// become error rows.
CaseResult run_linearization_case(const Problem& problem, const Formulation& formulation, bool timed = true,
                                  double timeout_s = 0.0);

}  // namespace mbs
