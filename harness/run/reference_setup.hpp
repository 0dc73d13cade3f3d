// Before a problem's runs: the reference trajectory its rows are scored against, when its reference
// gives positions in time (an exact solution evaluated at the output times, or a converged
// reference read from results/<problem>/reference/ or computed).
#pragma once

#include <string>

#include "problem/problem.hpp"

namespace mbs {

struct ReferenceOptions {
  std::string results_dir = "results";  // where results/<problem>/reference/trajectory.csv is looked up
  bool rebuild = false;                 // recompute a converged reference even when a stored one matches
  double timeout = 0.0;                 // --timeout: the budget of each reference case computed (s); 0: none
};

// What attach_reference did, for the log and the summary.
struct ReferenceSetup {
  bool computed = false;  // converged: computed in this run (else read from the stored file)
  std::string note;       // one line: where the reference came from
};

// Sets problem.reference_trajectory. Throws ProblemError when a converged reference cannot be
// defended (see references/converged.hpp), PreparationTimedOut (core/cancellation.hpp) when one of its
// cases runs out of options.timeout.
ReferenceSetup attach_reference(Problem& problem, const ReferenceOptions& options);

// results_dir/<problem>/reference/trajectory.csv
std::string converged_reference_path(const std::string& results_dir, const std::string& problem);

}  // namespace mbs
