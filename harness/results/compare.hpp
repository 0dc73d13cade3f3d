// Compares a fresh report with a committed summary.json, so CI catches a loss of accuracy (a
// passing case that no longer passes, or needs more steps to pass) or a slowdown (normalized time,
// which divides out the machine's speed, beyond a generous factor: CI machines are noisy).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "results/summary.hpp"
#include "results/summary_json.hpp"

namespace mbs {

struct CompareOptions {
  double max_step_growth = 1.25;  // steps may grow by this factor (round-off across platforms)
  double max_slowdown = 3.0;      // normalized time may grow by this factor
  bool at_baseline_settings = false;  // the run re-ran the baseline's settings (bench --baseline-settings)
};

// Reads and checks a baseline before anything runs: readable, a summary.json, of this problem.
// Throws std::runtime_error naming the file and what is wrong.
Summary read_baseline(const std::string& baseline_json, const std::string& problem);

struct Comparison {
  std::vector<std::string> regressions;  // one line each (empty: none)
  std::vector<std::string> not_run;      // baseline rows without a row now, and why
  std::vector<std::string> no_baseline;  // rows run now that the baseline lacks
  std::vector<std::string> notes;        // control cases whose outcome changed (never a regression)
  std::string ratios;                    // per matched row: status, steps and normalized time, now / baseline
};

// `selected`: the cases (formulation/integrator) this run was asked for; a baseline row of a selected
// case that the report lacks is a regression too, one of a case not selected is listed as not run.
// A control case (expected to fail) never regresses: its changes are notes.
Comparison compare_with_baseline(const BenchReport& report, const Summary& baseline, const std::vector<std::string>& selected,
                                 const CompareOptions& options = {});

// Whether bench --baseline-settings re-runs a baseline row at its setting: a pass or a control.
bool reruns_at_baseline_setting(const SummaryRow& b);

// The tuned setting of every case in a baseline summary that is re-run there ("formulation/integrator"
// -> setting), instead of tuning it again (bench --baseline-settings).
std::map<std::string, double> baseline_settings(const Summary& baseline);

}  // namespace mbs
