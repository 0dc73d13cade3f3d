// Compares a fresh report with a committed summary.json, so CI catches a loss of accuracy (a
// passing case that no longer passes, or needs more steps to pass) or a slowdown (normalized time,
// which divides out the machine's speed, beyond a generous factor: CI machines are noisy).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "results/summary.hpp"

namespace mbs {

struct CompareOptions {
  double max_step_growth = 1.25;  // steps may grow by this factor (round-off across platforms)
  double max_slowdown = 3.0;      // normalized time may grow by this factor
};

// Returns one line per regression (empty: none). Throws std::runtime_error if the baseline cannot
// be read.
// `selected`: the cases (formulation/integrator) this run was asked for; a baseline row of a selected
// case that the report lacks is a regression too.
std::vector<std::string> compare_with_baseline(const BenchReport& report, const std::string& baseline_json,
                                               const std::vector<std::string>& selected,
                                               const CompareOptions& options = {});

// The tuned setting of every case in a baseline summary.json ("formulation/integrator" -> setting),
// for re-running each case there instead of tuning it again (bench --baseline-settings).
std::map<std::string, double> baseline_settings(const std::string& baseline_json);

}  // namespace mbs
