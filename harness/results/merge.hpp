// bench --merge (and --jobs N): a problem's partial summaries combined into the report a serial run
// gives, checked against each other and against the merging process first.
#pragma once

#include <string>
#include <vector>

#include "results/partial.hpp"
#include "results/summary.hpp"
#include "run/bench_problem.hpp"

namespace mbs {

struct MergeOptions {
  std::string partials_dir;
  bool allow_missing = false;  // a missing case is an error unless this is set
  // What the merging process expects; the partials must agree with it (not the host).
  SweepFingerprint expected;
};

struct MergeResult {
  int partials = 0;
  std::vector<std::string> missing;  // cases without a partial (only with allow_missing)
  std::vector<std::string> hosts;    // distinct hosts the partials ran on
  bool timed = false;                // the partials carry timings
};

// Reads <partials_dir>/<problem>/*.yaml for the given cases, checks them against each other and
// against options.expected, and fills report.rows (in the serial run's order), report.kernel and
// the ranking. Throws SweepError (exit 2) on a missing, unreadable or incompatible partial.
MergeResult merge_partials(const Problem& problem, const CaseList& cases, const MergeOptions& options, BenchReport& report);

}  // namespace mbs
