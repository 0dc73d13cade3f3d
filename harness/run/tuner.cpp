#include "run/tuner.hpp"

#include <algorithm>
#include <cmath>

namespace mbs {

const Trial* TuneResult::best(Metric metric) const {
  const Trial* b = nullptr;
  for (const Trial& t : trials) {
    if (!t.score.completed || !std::isfinite(t.score.metric(metric))) continue;
    if (!b || t.score.metric(metric) < b->score.metric(metric)) b = &t;
  }
  return b;
}

std::vector<double> setting_grid(const IntegratorInfo& info, double t_end, const TunerOptions& options) {
  std::vector<double> grid;
  if (info.kind == SettingKind::kFixedStep) {
    const double ratio = std::pow(2.0, 1.0 / options.per_octave);
    long last = 0;
    // At least one step: a run shorter than the loosest step starts at a single step of t_end (a
    // count of 0 would never grow).
    for (double n = std::max(1.0, std::ceil(t_end / info.loosest - 1e-9));; n *= ratio) {
      const long whole = static_cast<long>(std::ceil(n - 1e-9));
      if (whole == last) continue;
      const double h = t_end / whole;
      if (h < info.tightest * (1 - 1e-12) || whole > options.max_steps) break;
      grid.push_back(h);
      last = whole;
    }
  } else {
    const double ratio = std::pow(10.0, -1.0 / options.per_octave);
    for (double tol = info.loosest; tol >= info.tightest * (1 - 1e-9); tol *= ratio) grid.push_back(tol);
  }
  return grid;
}

Score run_at(const Problem& problem, const Formulation& formulation, const std::string& integrator, double setting,
             ScoringObserver& observer) {
  try {
    auto sim = formulation.create(problem.model, integrator, setting);
    return score_run(problem, *sim, observer);
  } catch (const SolverError& e) {
    Score s;
    s.error = e.what();
    return s;
  }
}

TuneResult tune(const Problem& problem, const Formulation& formulation, const IntegratorInfo& info,
                const TunerOptions& options) {
  TuneResult result;
  ScoringObserver observer(problem, false);
  // Fixed steps stay whole divisions of the end time.
  auto snap = [&](double s) {
    return info.kind == SettingKind::kFixedStep ? fixed_step(problem.run.end_time, s) : s;
  };
  auto trial = [&](double setting) -> bool {
    if (options.on_trial) options.on_trial(static_cast<int>(result.trials.size()) + 1, setting);
    Trial t;
    t.setting = setting;
    t.score = run_at(problem, formulation, info.name, setting, observer);
    t.pass = passes(problem, t.score);
    result.trials.push_back(std::move(t));
    return result.trials.back().pass;
  };

  // Coarse scan, loosest first, for the first grid setting i such that the confirm tighter grid
  // settings pass too, and so do the geometric midpoints between them (drift can fail between
  // passing grid points: IDA's does). Results are memoized, each setting runs once at most.
  const std::vector<double> grid = setting_grid(info, problem.run.end_time, options);
  std::vector<int> coarse(grid.size(), -1), middle(grid.size(), -1);  // -1 unknown, 0 fail, 1 pass
  auto pass_coarse = [&](size_t i) {
    if (coarse[i] < 0) coarse[i] = trial(grid[i]);
    return coarse[i] == 1;
  };
  auto pass_middle = [&](size_t i) {  // between grid[i] and grid[i + 1]
    if (middle[i] < 0) middle[i] = trial(snap(std::sqrt(grid[i] * grid[i + 1])));
    return middle[i] == 1;
  };
  int run_start = -1;
  for (size_t i = 0; i + options.confirm < grid.size() && run_start < 0; ++i) {
    if (cancellation_requested()) return result;  // out of time: the caller reports it
    if (!pass_coarse(i)) continue;
    bool robust = true;
    for (size_t k = i; k < i + options.confirm && robust; ++k) robust = pass_coarse(k + 1) && pass_middle(k);
    if (robust) run_start = static_cast<int>(i);
  }
  if (run_start < 0) return result;  // never robustly passed

  // Refine between the last failing coarse setting and the first passing one: accept the loosest
  // fine setting below which every fine setting passes too.
  double chosen = grid[run_start];
  if (run_start > 0) {
    const double hi = grid[run_start - 1], lo = grid[run_start];
    std::vector<double> fine;
    for (int k = 1; k < options.refine; ++k) fine.push_back(snap(lo * std::pow(hi / lo, static_cast<double>(k) / options.refine)));
    for (double s : fine) {  // tightest first
      if (s <= chosen * (1 + 1e-12)) continue;  // rounding to whole steps gave no looser setting
      if (!trial(s)) break;
      chosen = s;
    }
  }
  result.chosen = chosen;
  return result;
}

}  // namespace mbs
