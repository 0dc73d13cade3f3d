#include "results/compare.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <stdexcept>

#include "results/summary_json.hpp"

namespace mbs {

std::map<std::string, double> baseline_settings(const std::string& baseline_json) {
  std::map<std::string, double> settings;
  for (const SummaryRow& b : read_summary(baseline_json).rows)
    if (b.run_kind == RunKind::kTuned && b.setting) settings[b.case_name()] = *b.setting;
  return settings;
}

std::vector<std::string> compare_with_baseline(const BenchReport& report, const std::string& baseline_json,
                                               const std::vector<std::string>& selected,
                                               const CompareOptions& options) {
  const Summary base = read_summary(baseline_json);
  std::vector<std::string> out;
  if (base.problem != report.problem->name)
    throw std::runtime_error(fmt::format("{}: the baseline is for problem '{}', not '{}'", baseline_json, base.problem,
                                         report.problem->name));
  for (const SummaryRow& b : base.rows) {
    const std::string name = b.row_name();
    const bool tuned = b.run_kind == RunKind::kTuned;
    const CaseResult* now = nullptr;
    for (const CaseResult& r : report.rows)  // a tuned row is matched by the same case re-run at its setting
      if (r.row_name() == name || (tuned && r.run_kind == RunKind::kBaseline && r.case_name() == name)) now = &r;
    if (b.status != CaseStatus::kPass) continue;  // only a passing case can regress
    if (!now) {
      if (std::find(selected.begin(), selected.end(), b.case_name()) != selected.end())
        out.push_back(fmt::format("{}: passed in the baseline, missing from this run", name));
      continue;
    }
    if (now->status != CaseStatus::kPass) {
      out.push_back(fmt::format("{}: status {} -> {} ({})", name, b.status, now->status, now->message));
      continue;
    }
    if (now->score.stats.steps > options.max_step_growth * b.steps + 2)
      out.push_back(fmt::format("{}: needs {} steps to pass, baseline {} (loss of accuracy per step)", name,
                                now->score.stats.steps, b.steps));
    if (b.normalized_time && std::isfinite(now->normalized_time) && now->normalized_time > options.max_slowdown * *b.normalized_time)
      out.push_back(fmt::format("{}: normalized time {:.3g}, baseline {:.3g} (more than {}x slower)", name, now->normalized_time,
                                *b.normalized_time, options.max_slowdown));
  }
  return out;
}

}  // namespace mbs
