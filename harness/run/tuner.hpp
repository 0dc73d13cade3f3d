// Finds, for one (formulation, integrator), the loosest setting that satisfies the problem's rule
// robustly: the chosen setting, the next `confirm` tighter grid settings and the geometric
// midpoints between them must all pass, so a lucky pass above a failing region (drift is not
// monotone in h or tol) is never reported.
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
  const Trial* best(Metric metric) const;  // the completed trial with the smallest metric
};

struct TunerOptions {
  int confirm = 3;                     // tighter grid settings that must also pass
  int per_octave = 4;                  // coarse grid: 2^(1/4) apart in h, 10^(1/4) in tol
  int refine = 4;                      // fine steps inside the last coarse interval
  long max_steps = 5'000'000;          // a fixed-step grid stops before more steps than this
  // Called before each trial (1-based) with its setting: progress display; may be empty.
  std::function<void(int trial, double setting)> on_trial;
};

// Settings of the coarse grid for one integrator, loosest first. Fixed steps are t_end / n with
// whole n, so every run ends exactly on t_end.
std::vector<double> setting_grid(const IntegratorInfo& info, double t_end, const TunerOptions& options);

TuneResult tune(const Problem& problem, const Formulation& formulation, const IntegratorInfo& info,
                const TunerOptions& options = {});

// One scored run at a setting (setup + run), solver errors captured in the score.
Score run_at(const Problem& problem, const Formulation& formulation, const std::string& integrator, double setting,
             ScoringObserver& observer);

}  // namespace mbs
