// One problem's whole bench: the calibration kernel, then every case (tuned, given, or at a
// baseline's setting), then the fixed-step cases at the source's published step, ranked. The
// command line (harness/app/main.cpp) prints, compares and writes what this returns.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "core/formulation.hpp"
#include "problem/problem.hpp"
#include "run/bench_case.hpp"
#include "run/progress.hpp"
#include "run/timing.hpp"

namespace mbs {

using CaseList = std::vector<std::pair<const Formulation*, IntegratorInfo>>;

struct BenchOptions {
  CaseOptions cases;  // step / tolerance given on the command line, timing, time budget
  // --baseline-settings: each case at the baseline's setting ("formulation/integrator" -> setting);
  // cases without one are skipped.
  bool at_baseline_settings = false;
  std::map<std::string, double> baseline_settings;
  std::function<bool()> interrupted;  // checked between cases; may be empty
};

// What running a problem gives: its rows and the calibration kernel timed in the same process (the
// results' BenchReport adds where, when and how they were made).
struct BenchRun {
  std::vector<CaseResult> rows;
  Timing kernel;
};

// Fills run.kernel and run.rows (ranked). True when a case failed or stopped (status fail or
// error). A case that throws is a row with status error, never a crash.
bool bench_problem(const Problem& problem, const CaseList& cases, const BenchOptions& options, Progress& progress,
                   BenchRun& run);

// Times every row serially at its setting, in this process, after the rows were found elsewhere
// (in parallel): re-runs each case at its tuned setting (bench --baseline-settings' path) with the
// calibration kernel timed first, then copies the timings onto the rows that ran to the end (pass or
// fail, as a serial run times them) and ranks. Returns the number of rows whose re-run took other
// steps than the tuning run's (reported on stderr; the row kept is the tuned one).
int retime_serially(const Problem& problem, const CaseList& cases, const CaseOptions& options, Progress& progress,
                    BenchRun& run);

// The cases a sweep runs for a problem, in the serial run's order: for an analysis problem one per
// formulation (its first selected integrator: the linearization does not depend on it).
CaseList sweep_cases(const Problem& problem, const CaseList& selected);

// A row of a control case (info.expected_failure non-empty) carries why it is expected to fail; if it
// failed or stopped, its status becomes control (its message kept, control_outcome saying which), so
// that it neither reads as a failure nor changes the exit code. A control that passes stays pass,
// flagged by expected_failure. Other rows are left as they are.
void mark_control(CaseResult& row, const IntegratorInfo& info);

// A row failed or stopped (status fail or error), as bench_problem's return value says; a control
// row (status control) did not fail unexpectedly and does not count.
bool has_failed_rows(const std::vector<CaseResult>& rows);

}  // namespace mbs
