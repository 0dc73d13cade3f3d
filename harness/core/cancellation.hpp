// The time budget of a case (--timeout) in every phase: the harness's watchdog requests
// cancellation (core/formulation.hpp); Simulator::run checks it once per step and long set-up
// loops call throw_if_cancelled() (the same relaxed atomic load), both throwing Cancelled, whose
// phase the harness names (run/bench_case.cpp). Set-up work that cannot be interrupted is refused
// up front when too large (e.g. common/independent_rows.hpp).
#pragma once

#include <stdexcept>

#include "core/formulation.hpp"

namespace mbs {

// Dense set-up work (flops, to within a constant) above which a single uninterruptible step is
// refused up front rather than run: seconds of work that --timeout could not reach. Shared by the
// dense rank test of common/independent_rows.hpp and --project-initial-state's projection.
inline constexpr double kMaxUninterruptibleDenseWork = 2e9;

// The time budget ran out.
class Cancelled : public SolverError {
 public:
  using SolverError::SolverError;
};

// --timeout spent before any case ran (reading a problem file, computing its reference): not bad
// input but a run that failed; bench exits 1 and runs nothing.
struct PreparationTimedOut : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Throws Cancelled, naming `where`, once cancellation is requested.
void throw_if_cancelled(const char* where);

}  // namespace mbs
