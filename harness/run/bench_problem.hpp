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
#include "report/report.hpp"
#include "run/bench_case.hpp"
#include "run/progress.hpp"

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

// Fills report.kernel and report.rows (ranked). True when a case failed or stopped (status fail
// or error). A case that throws is a row with status error, never a crash.
bool bench_problem(const Problem& problem, const CaseList& cases, const BenchOptions& options, Progress& progress,
                   BenchReport& report);

}  // namespace mbs
