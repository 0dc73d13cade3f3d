#include "run/tuner.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include "core/cancellation.hpp"

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
  } catch (const Cancelled&) {
    throw;
  } catch (const SolverError& e) {
    Score s;
    s.error = e.what();
    return s;
  }
}

int confirm_depth(const IntegratorInfo& info, const TunerOptions& options) {
  // Grid steps needed to reach `confirm_down_to` of a setting: 2^(-1/4) per step in h, 10^(-1/4) in tol.
  const double per_step = std::log(info.kind == SettingKind::kFixedStep ? 2.0 : 10.0) / options.per_octave;
  return std::max(options.confirm, static_cast<int>(std::ceil(-std::log(options.confirm_down_to) / per_step - 1e-9)));
}

namespace {
struct OutOfTime {};  // the budget ran out between trials, or in a trial's set-up
}  // namespace

TuneResult tune(const Problem& problem, const Formulation& formulation, const IntegratorInfo& info,
                const TunerOptions& options) {
  TuneResult result;
  ScoringObserver observer(problem, false);
  // Fixed steps stay whole divisions of the end time.
  auto snap = [&](double s) {
    return info.kind == SettingKind::kFixedStep ? fixed_step(problem.run.end_time, s) : s;
  };
  // Each setting runs once at most: the checks of neighbouring candidates share their runs.
  std::map<double, bool> passed;
  auto pass_at = [&](double setting) -> bool {
    if (const auto it = passed.find(setting); it != passed.end()) return it->second;
    if (cancellation_requested()) throw OutOfTime{};
    if (options.on_trial) options.on_trial(static_cast<int>(result.trials.size()) + 1, setting);
    Trial t;
    t.setting = setting;
    try {
      t.score = run_at(problem, formulation, info.name, setting, observer);
    } catch (const Cancelled&) {
      result.cancelled_in_setup = true;
      throw OutOfTime{};
    }
    t.pass = passes(problem, t.score);
    result.trials.push_back(std::move(t));
    return passed[setting] = result.trials.back().pass;
  };
  // The next setting a sweep tries below s (scripts/report: s x confirm_down_to) must pass too.
  auto sweep_next_passes = [&](double s) { return pass_at(snap(s * options.confirm_down_to)); };

  // Coarse scan, loosest first, for the first grid setting i such that the confirm tighter grid
  // settings pass too, and so do the geometric midpoints between them (drift can fail between
  // passing grid points: IDA's does) and the sweep's next setting.
  const std::vector<double> grid = setting_grid(info, problem.run.end_time, options);
  const size_t confirm = static_cast<size_t>(confirm_depth(info, options));
  // No run tried so far, for any candidate, failed between s x confirm_down_to and s.
  auto none_failed_beneath = [&](double s) {
    const double lo = snap(s * options.confirm_down_to) * (1 - 1e-12);
    for (auto it = passed.lower_bound(lo); it != passed.end() && it->first <= s * (1 + 1e-12); ++it)
      if (!it->second) return false;
    return true;
  };
  try {
    for (size_t from = 0;;) {
      int run_start = -1;
      for (size_t i = from; i + confirm < grid.size() && run_start < 0; ++i) {
        if (!pass_at(grid[i])) continue;
        bool robust = true;
        for (size_t k = i; k < i + confirm && robust; ++k)
          robust = pass_at(grid[k + 1]) && pass_at(snap(std::sqrt(grid[k] * grid[k + 1])));
        if (robust && sweep_next_passes(grid[i]) && none_failed_beneath(grid[i])) run_start = static_cast<int>(i);
      }
      if (run_start < 0) return result;  // never robustly passed

      // Refine between the last failing coarse setting and the first passing one: accept the loosest
      // fine setting below which every fine setting passes too, as does its sweep's next setting.
      double chosen = grid[run_start];
      if (run_start > 0) {
        const double hi = grid[run_start - 1], lo = grid[run_start];
        std::vector<double> fine;
        for (int k = 1; k < options.refine; ++k) fine.push_back(snap(lo * std::pow(hi / lo, static_cast<double>(k) / options.refine)));
        for (double s : fine) {  // tightest first
          if (s <= chosen * (1 + 1e-12)) continue;  // rounding to whole steps gave no looser setting
          if (!pass_at(s) || !sweep_next_passes(s) || !none_failed_beneath(s)) break;
          chosen = s;
        }
      }
      // A looser candidate's check may have failed beneath the chosen one: then search further down.
      if (none_failed_beneath(chosen)) {
        result.chosen = chosen;
        break;
      }
      from = static_cast<size_t>(run_start) + 1;
    }
  } catch (const OutOfTime&) {
    // out of time: the caller reports it
  }
  return result;
}

}  // namespace mbs
