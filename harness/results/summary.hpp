// One problem's results: the rows a run found (BenchRun) and where, when and how they were made.
// What bench writes to results/<problem>/ (summary.json, .csv, histories), what a sweep's partials
// carry, and what --compare and --baseline-settings read back.
#pragma once

#include <string>

#include "problem/problem.hpp"
#include "run/bench_problem.hpp"

namespace mbs {

struct BenchReport : BenchRun {  // rows; kernel: the calibration kernel, timed in the same process
  const Problem* problem = nullptr;
  std::string created;     // UTC time stamp, ISO 8601
  std::string build;       // compiler and build type
  std::string problem_file;  // as shown in the summary (relative to the source tree when inside it)
  std::string reference_note;  // where the reference trajectory came from (empty without one)
  std::string sweep;           // rows not from one serial run (bench --merge, --jobs): how they were found and timed
};

}  // namespace mbs
