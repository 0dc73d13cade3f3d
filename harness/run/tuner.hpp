// Finds, for one (formulation, integrator), the loosest setting that satisfies the problem's rule
// robustly (docs/scoring-and-results.md, "What a row means"): the chosen setting s, the tighter
// grid settings down to s x confirm_down_to (at least `confirm` of them), the geometric midpoints
// between them, the refinement settings between s and its grid setting, and s x confirm_down_to
// itself (the next setting scripts/report's sweep tries) must all pass, and no other run between
// s x confirm_down_to and s may have failed, so a lucky pass above a
// failing region (drift is not monotone in h or tol) is not reported.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/formulation.hpp"
#include "problem/problem.hpp"
#include "run/scoring.hpp"

namespace mbs {

struct Trial {
  double setting = 0.0;
  Score score;
  bool pass = false;
};

struct TuneResult {
  std::optional<double> chosen;       // the loosest robustly passing setting
  std::vector<Trial> trials;          // every setting tried, in order
  bool cancelled_in_setup = false;    // the time budget ran out in a trial's set-up (create())
  const Trial* best(Metric metric) const;  // the completed trial with the smallest metric
};

struct TunerOptions {
  int confirm = 3;                     // tighter grid settings that must also pass, at least
  double confirm_down_to = 0.5;        // and down to this fraction of the setting, which must pass too
  int per_octave = 4;                  // coarse grid: 2^(1/4) apart in h, 10^(1/4) in tol
  int refine = 4;                      // fine steps inside the last coarse interval
  long max_steps = 5'000'000;          // a fixed-step grid stops before more steps than this
  // Called before each trial (1-based) with its setting: progress display; may be empty.
  std::function<void(int trial, double setting)> on_trial;
};

// Settings of the coarse grid for one integrator, loosest first. Fixed steps are t_end / n with
// whole n, so every run ends exactly on t_end.
std::vector<double> setting_grid(const IntegratorInfo& info, double t_end, const TunerOptions& options);

// Grid steps below a candidate that must pass: `confirm`, or more to reach confirm_down_to.
int confirm_depth(const IntegratorInfo& info, const TunerOptions& options);

TuneResult tune(const Problem& problem, const Formulation& formulation, const IntegratorInfo& info,
                const TunerOptions& options = {});

// One scored run at a setting (setup + run), solver errors captured in the score; Cancelled from
// the set-up (the time budget ran out) propagates.
Score run_at(const Problem& problem, const Formulation& formulation, const std::string& integrator, double setting,
             ScoringObserver& observer);

}  // namespace mbs
