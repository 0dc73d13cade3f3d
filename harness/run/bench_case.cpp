#include "run/bench_case.hpp"

#include "run/watchdog.hpp"

#include <cmath>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

namespace mbs {

namespace {

std::string setting_text(SettingKind kind, double s) {
  return kind == SettingKind::kFixedStep ? fmt::format("h = {:.4g} s", s) : fmt::format("tol = {:.3g}", s);
}
}  // namespace

CaseResult run_case(const Problem& problem, const Formulation& formulation, const IntegratorInfo& info,
                    const CaseOptions& options) {
  const Watchdog watchdog(options.timeout_s);
  // Every phase is bounded: runs check the budget once per step, set-up's long loops through
  // throw_if_cancelled(); the row says where the budget ran out.
  auto timed_out = [&](CaseResult& row, const std::string& phase) {
    if (!cancellation_requested()) return false;
    row.status = CaseStatus::kError;
    row.message = fmt::format("timed out in {} after {:.3g} s (--timeout {:g})", phase, watchdog.elapsed_s(), options.timeout_s);
    row.timing.reset();
    return true;
  };
  CaseResult row;
  row.formulation = formulation.name();
  row.integrator = info.name;
  row.setting_kind = info.kind;
  if (std::string why = formulation.unsupported_reason(problem.model); !why.empty()) {
    row.status = CaseStatus::kUnsupported;
    row.message = why;
    return row;
  }

  // 1. The setting: given, or tuned.
  const std::optional<double> given = info.kind == SettingKind::kFixedStep ? options.step : options.tolerance;
  std::string note;
  if (given) {
    row.run_kind = RunKind::kGiven;
    try {
      row.setting = info.kind == SettingKind::kFixedStep ? fixed_step(problem.run.end_time, *given) : *given;
    } catch (const SolverError& e) {
      row.status = CaseStatus::kError;
      row.message = e.what();
      return row;
    }
  } else {
    TunerOptions tuner = options.tuner;
    if (options.on_progress && !tuner.on_trial)
      tuner.on_trial = [&](int trial, double setting) {
        options.on_progress(fmt::format("tuning, trial {}: {}", trial, setting_text(info.kind, setting)));
      };
    const TuneResult tr = tune(problem, formulation, info, tuner);
    row.trials = static_cast<int>(tr.trials.size());
    if (timed_out(row, tr.cancelled_in_setup ? "set-up (tuning)" : "tuning")) {
      // What the search had seen says why it went on so long (e.g. coarse settings stopping).
      // The trial the budget cut short is named by its setting; the one before it by its outcome.
      const size_t n = tr.trials.size();
      if (n > 0) row.message += fmt::format(", at {}", setting_text(info.kind, tr.trials.back().setting));
      if (n > 1) {
        const Trial& prev = tr.trials[n - 2];
        row.message += fmt::format(
            "; the trial before it, {}: {}", setting_text(info.kind, prev.setting),
            prev.score.completed ? fmt::format("{} = {:.3g}", problem.rule.metric, prev.score.metric(problem.rule.metric))
                                 : prev.score.error);
      }
      return row;
    }
    row.tuned = true;
    spdlog::debug("{}: {} trials", row.case_name(), tr.trials.size());
    for (const Trial& t : tr.trials)
      spdlog::debug("  {} -> {} drift {:.3e} steps {}{}", setting_text(info.kind, t.setting),
                    t.pass ? "pass" : "fail", t.score.max_energy_drift, t.score.stats.steps,
                    t.score.completed ? "" : " error: " + t.score.error);
    if (tr.chosen) {
      row.setting = *tr.chosen;
    } else if (const Trial* best = tr.best(problem.rule.metric)) {
      row.setting = best->setting;
      note = fmt::format("no setting from {} to {} passed robustly; best {} = {:.3g} at {}",
                         setting_text(info.kind, info.loosest), setting_text(info.kind, info.tightest),
                         problem.rule.metric, best->score.metric(problem.rule.metric),
                         setting_text(info.kind, best->setting));
    } else {
      row.status = CaseStatus::kError;
      row.message = tr.trials.empty()
                        ? fmt::format("no setting to try: none from {} to {} fits a run of {} s", setting_text(info.kind, info.loosest),
                                      setting_text(info.kind, info.tightest), problem.run.end_time)
                        : fmt::format("every setting failed; first error: {}", tr.trials.front().score.error);
      return row;
    }
  }

  // 2. Verification run at that setting, recording the time history.
  if (options.on_progress) options.on_progress("verifying at " + setting_text(info.kind, *row.setting));
  ScoringObserver observer(problem, true);
  std::unique_ptr<Simulator> sim;
  try {
    sim = formulation.create(problem.model, info.name, *row.setting);
  } catch (const SolverError& e) {
    if (timed_out(row, "set-up (verification)")) return row;
    row.status = CaseStatus::kError;
    row.message = e.what();
    return row;
  }
  row.score = score_run(problem, *sim, observer);
  if (timed_out(row, "verification")) return row;
  row.history = observer.history();
  if (!row.score.completed) {
    row.status = CaseStatus::kError;
    row.message = row.score.error;
    return row;
  }
  // A tuned case passes only at a robust setting; the best of a failed search is reported as fail
  // even if that one run happened to meet the rule.
  const bool ok = passes(problem, row.score) && note.empty();
  row.status = ok ? CaseStatus::kPass : CaseStatus::kFail;
  if (!note.empty()) row.message = note;
  else if (!ok && row.score.metric(problem.rule.metric) < problem.rule.below)
    row.message = fmt::format("{} = {:.3g} met, but a published check is off by more than {:g}", problem.rule.metric,
                              row.score.metric(problem.rule.metric), problem.rule.checks_within);
  else if (!ok)
    row.message = fmt::format("{} = {:.3g} is not below {:.3g}", problem.rule.metric,
                              row.score.metric(problem.rule.metric), problem.rule.below);

  // 3. Timing: the whole simulation, integrator initialisation included, setup excluded. The
  // verification run of this simulator just made is the warm-up.
  if (!options.timed) return row;
  if (options.on_progress) options.on_progress("timing at " + setting_text(info.kind, *row.setting));
  try {
    const double t_end = problem.run.end_time;
    row.timing = time_calls([&] { sim->run(t_end, nullptr); }, options.min_time_s, options.min_samples,
                            WarmUp::kAlreadyWarm);
  } catch (const SolverError& e) {
    if (timed_out(row, "timing")) return row;
    row.status = CaseStatus::kError;
    row.message = fmt::format("failed while timing: {}", e.what());
  }
  return row;
}

void judge_by_published_checks(const Problem& problem, CaseResult& row) {
  row.run_kind = RunKind::kPublished;
  if (row.status != CaseStatus::kPass && row.status != CaseStatus::kFail) return;  // error, unsupported: as they are
  if (problem.checks.empty()) {  // no published figures: the source's step, judged by the rule
    if (row.message.empty()) row.message = fmt::format("at the source's step; {} = {:.3g}", problem.rule.metric,
                                                       row.score.metric(problem.rule.metric));
    return;
  }
  std::vector<std::string> off;
  for (size_t i = 0; i < problem.checks.size() && i < row.score.checks.size(); ++i)
    if (!(std::abs(row.score.checks[i].ratio() - 1.0) < 5e-4))
      off.push_back(fmt::format("{} ratio {:.4f}", problem.checks[i].name, row.score.checks[i].ratio()));
  row.status = off.empty() ? CaseStatus::kPass : CaseStatus::kFail;
  row.message = off.empty() ? fmt::format("judged by the published table (ratios 1.000); {} = {:.3g}", problem.rule.metric,
                                          row.score.metric(problem.rule.metric))
                            : fmt::format("published table not reproduced: {}", fmt::join(off, "; "));
}

void rank_cases(std::vector<CaseResult>& rows, double kernel_median_s) {
  double fastest = std::numeric_limits<double>::infinity();
  for (auto& r : rows) {
    if (!r.timing) continue;
    r.normalized_time = r.timing->median_s / kernel_median_s;
    // The fastest is among rows that met the problem's rule (tuned or given), not the published table.
    if (r.status == CaseStatus::kPass && r.run_kind != RunKind::kPublished) fastest = std::min(fastest, r.timing->median_s);
  }
  for (auto& r : rows)
    if (r.timing && r.status == CaseStatus::kPass) r.relative_to_fastest = r.timing->median_s / fastest;
}

}  // namespace mbs
