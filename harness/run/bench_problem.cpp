#include "run/bench_problem.hpp"

#include <fmt/format.h>
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
                   BenchReport& report) {
  auto interrupted = [&] { return options.interrupted && options.interrupted(); };
  bool any_failed = false;
  if (options.cases.timed) report.kernel = time_calls([] { calibration_kernel(); }, options.cases.min_time_s);
  spdlog::info("{}: calibration kernel {:.3f} us", problem.name, report.kernel.median_s * 1e6);
  for (const auto& [f, info] : cases) {
    if (interrupted()) break;
    spdlog::info("{}: {}/{} ...", problem.name, f->name(), info.name);
    progress.begin_case(problem.name, f->name() + "/" + info.name);
    if (problem.analysis) {  // one linearization per formulation, whatever its integrators
      bool done = false;
      for (const CaseResult& r : report.rows) done = done || r.formulation == f->name();
      if (!done) {
        progress.update("linearizing");
        report.rows.push_back(run_linearization_case(problem, *f, options.cases.timed));
        any_failed = any_failed || failed(report.rows.back());
      }
      progress.end_case();
      continue;
    }
    const auto baseline = options.baseline_settings.find(f->name() + "/" + info.name);
    if (options.at_baseline_settings && baseline == options.baseline_settings.end()) {
      // No setting in the baseline (unsupported, or it never passed nor failed at one): nothing
      // to re-run cheaply, and nothing the comparison could hold against it.
      spdlog::info("{}: {}/{} has no baseline setting; skipped", problem.name, f->name(), info.name);
      progress.end_case();
      continue;
    }
    try {
      if (baseline == options.baseline_settings.end()) {
        report.rows.push_back(run_case(problem, *f, info, options.cases));
      } else {
        CaseOptions at = options.cases;
        (info.kind == SettingKind::kFixedStep ? at.step : at.tolerance) = baseline->second;
        report.rows.push_back(run_case(problem, *f, info, at));
        report.rows.back().run_kind = RunKind::kBaseline;
      }
    } catch (const std::exception& e) {  // a bug, not a solver failure: still a row
      report.rows.push_back(unexpected_error(*f, info, e));
    }
    progress.end_case();
    const CaseResult& r = report.rows.back();
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
        report.rows.push_back(run_case(problem, *f, info, published));
        judge_by_published_checks(problem, report.rows.back());
      } catch (const std::exception& e) {
        report.rows.push_back(unexpected_error(*f, info, e));
      }
      progress.end_case();
      any_failed = any_failed || failed(report.rows.back());
    }
  }
  rank_cases(report.rows, report.kernel.median_s);
  return any_failed;
}

}  // namespace mbs
