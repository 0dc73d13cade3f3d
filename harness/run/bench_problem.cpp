#include "run/bench_problem.hpp"

#include <fmt/format.h>
#include <iostream>
#include <set>
#include <spdlog/spdlog.h>

#include "run/linearization_case.hpp"
#include "run/timing.hpp"

namespace mbs {

namespace {
bool failed(const CaseResult& r) { return r.status == CaseStatus::kFail || r.status == CaseStatus::kError; }

CaseResult unexpected_error(const Formulation& f, const IntegratorInfo& info, const std::exception& e) {
  CaseResult r;
  r.formulation = f.name();
  r.integrator = info.name;
  r.setting_kind = info.kind;
  r.status = CaseStatus::kError;
  r.message = fmt::format("unexpected error: {}", e.what());
  return r;
}
}  // namespace

bool bench_problem(const Problem& problem, const CaseList& cases, const BenchOptions& options, Progress& progress,
                   BenchRun& run) {
  auto interrupted = [&] { return options.interrupted && options.interrupted(); };
  bool any_failed = false;
  if (options.cases.timed) run.kernel = time_calls([] { calibration_kernel(); }, options.cases.min_time_s);
  spdlog::info("{}: calibration kernel {:.3f} us", problem.name, run.kernel.median_s * 1e6);
  for (const auto& [f, info] : cases) {
    if (interrupted()) break;
    spdlog::info("{}: {}/{} ...", problem.name, f->name(), info.name);
    progress.begin_case(problem.name, f->name() + "/" + info.name);
    if (problem.analysis) {  // one linearization per formulation, whatever its integrators
      bool done = false;
      for (const CaseResult& r : run.rows) done = done || r.formulation == f->name();
      if (!done) {
        progress.update("linearizing");
        // Not mark_control: the row belongs to the formulation, not to whichever integrator comes
        // first (an engine's first may be a first-order control for simulations).
        run.rows.push_back(run_linearization_case(problem, *f, options.cases.timed, options.cases.timeout_s));
        any_failed = any_failed || failed(run.rows.back());
      }
      progress.end_case();
      continue;
    }
    const auto baseline = options.baseline_settings.find(f->name() + "/" + info.name);
    if (options.at_baseline_settings && baseline == options.baseline_settings.end()) {
      // No setting in the baseline (unsupported, errored before one was chosen) or a row that did
      // not pass there: nothing the comparison could hold against it.
      spdlog::info("{}: {}/{} has no passing baseline setting; skipped", problem.name, f->name(), info.name);
      progress.end_case();
      continue;
    }
    try {
      if (baseline == options.baseline_settings.end()) {
        run.rows.push_back(run_case(problem, *f, info, options.cases));
      } else {
        CaseOptions at = options.cases;
        (info.kind == SettingKind::kFixedStep ? at.step : at.tolerance) = baseline->second;
        run.rows.push_back(run_case(problem, *f, info, at));
        run.rows.back().run_kind = RunKind::kBaseline;
      }
    } catch (const std::exception& e) {  // a bug, not a solver failure: still a row
      run.rows.push_back(unexpected_error(*f, info, e));
    }
    mark_control(run.rows.back(), info);
    progress.end_case();
    const CaseResult& r = run.rows.back();
    spdlog::info("{}: {} -> {} {}", problem.name, r.case_name(), r.status, r.message);
    any_failed = any_failed || failed(r);
  }
  // The source's own step, for the fixed-step cases, as extra rows beside the tuned ones.
  if (problem.published_step && !options.cases.step && !problem.analysis) {
    CaseOptions published = options.cases;
    published.step = problem.published_step;
    for (const auto& [f, info] : cases) {
      if (interrupted() || info.kind != SettingKind::kFixedStep) continue;
      progress.begin_case(problem.name, f->name() + "/" + info.name + " at the published step");
      try {
        run.rows.push_back(run_case(problem, *f, info, published));
        judge_by_published_checks(problem, run.rows.back());
      } catch (const std::exception& e) {
        run.rows.push_back(unexpected_error(*f, info, e));
      }
      mark_control(run.rows.back(), info);
      progress.end_case();
      any_failed = any_failed || failed(run.rows.back());
    }
  }
  rank_cases(run.rows, run.kernel.median_s);
  return any_failed;
}

int retime_serially(const Problem& problem, const CaseList& cases, const CaseOptions& options, Progress& progress,
                    BenchRun& run) {
  BenchOptions at;
  at.cases = options;
  at.cases.timed = true;
  at.cases.step.reset();  // each row at its own setting (a --step / --tol run's rows carry theirs)
  at.cases.tolerance.reset();
  at.at_baseline_settings = true;
  for (const CaseResult& r : run.rows)
    if (r.run_kind != RunKind::kPublished && r.setting) at.baseline_settings[r.case_name()] = *r.setting;
  BenchRun timed;
  bench_problem(problem, sweep_cases(problem, cases), at, progress, timed);
  int differ = 0;
  for (CaseResult& r : run.rows) {
    r.timing.reset();
    r.normalized_time = r.relative_to_fastest = std::numeric_limits<double>::quiet_NaN();
    if (r.outcome() != CaseStatus::kPass && r.outcome() != CaseStatus::kFail) continue;  // a serial run times only rows that ran to the end
    for (const CaseResult& t : timed.rows) {
      const bool same_row = t.case_name() == r.case_name() &&
                            (r.run_kind == RunKind::kPublished ? t.run_kind == RunKind::kPublished : t.run_kind != RunKind::kPublished);
      if (!same_row) continue;
      // The runs are deterministic: the same setting takes the same steps. (The status may differ
      // when the tuner found no robust setting: its best one can pass once and still be a fail.)
      if (t.score.completed != r.score.completed || t.score.stats.steps != r.score.stats.steps) {
        ++differ;
        std::cerr << fmt::format("bench: {}: the timing run at the same setting took {} steps, the tuning run {}\n",
                                 r.row_name(), t.score.stats.steps, r.score.stats.steps);
      }
      r.timing = t.timing;
    }
  }
  run.kernel = timed.kernel;
  rank_cases(run.rows, run.kernel.median_s);
  return differ;
}

CaseList sweep_cases(const Problem& problem, const CaseList& selected) {
  if (!problem.analysis) return selected;
  CaseList out;
  std::set<std::string> seen;
  for (const auto& c : selected)
    if (seen.insert(c.first->name()).second) out.push_back(c);
  return out;
}

void mark_control(CaseResult& row, const IntegratorInfo& info) {
  if (info.expected_failure.empty()) return;
  row.expected_failure = info.expected_failure;
  if (row.status != CaseStatus::kFail && row.status != CaseStatus::kError) return;  // pass: flagged; unsupported: as it is
  row.control_outcome = row.status;
  row.status = CaseStatus::kControl;
}

bool has_failed_rows(const std::vector<CaseResult>& rows) {
  for (const CaseResult& r : rows)
    if (failed(r)) return true;
  return false;
}

}  // namespace mbs
