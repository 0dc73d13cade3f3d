#include "results/compare.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <stdexcept>

namespace mbs {

namespace {
std::string ratio_cell(double now, double base, const char* f) {
  if (!std::isfinite(now) || !std::isfinite(base) || base <= 0) return "-";
  return fmt::format(fmt::runtime(fmt::format("{{:.2f}} ({} -> {})", f, f)), now / base, base, now);
}
}  // namespace

Summary read_baseline(const std::string& baseline_json, const std::string& problem) {
  Summary base = read_summary(baseline_json);
  if (base.problem != problem)
    throw std::runtime_error(fmt::format("{}: the baseline is for problem '{}', not '{}'", baseline_json, base.problem, problem));
  return base;
}

bool reruns_at_baseline_setting(const SummaryRow& b) {
  // Only a pass can regress; a control's change is news. A failing row's re-run could only say
  // "fail -> fail", at the cost of a verification and a timing (seconds a row on A02).
  return b.status == CaseStatus::kPass || b.control;
}

std::map<std::string, double> baseline_settings(const Summary& baseline) {
  std::map<std::string, double> settings;
  for (const SummaryRow& b : baseline.rows)
    if (b.run_kind == RunKind::kTuned && b.setting && reruns_at_baseline_setting(b)) settings[b.case_name()] = *b.setting;
  return settings;
}

Comparison compare_with_baseline(const BenchReport& report, const Summary& base, const std::vector<std::string>& selected,
                                 const CompareOptions& options) {
  Comparison out;
  std::vector<bool> matched(report.rows.size(), false);
  std::vector<std::vector<std::string>> table{{"row", "status (baseline -> now)", "steps now/baseline", "normalized time now/baseline"}};
  for (const SummaryRow& b : base.rows) {
    const std::string name = b.row_name();
    const bool tuned = b.run_kind == RunKind::kTuned;
    const CaseResult* now = nullptr;
    for (size_t i = 0; i < report.rows.size(); ++i) {  // a tuned row is matched by the same case re-run at its setting
      const CaseResult& r = report.rows[i];
      if (r.row_name() == name || (tuned && r.run_kind == RunKind::kBaseline && r.case_name() == name)) {
        now = &r;
        matched[i] = true;
      }
    }
    const bool was_selected = std::find(selected.begin(), selected.end(), b.case_name()) != selected.end();
    if (!now) {
      if (b.status == CaseStatus::kPass && !b.control && was_selected)
        out.regressions.push_back(fmt::format("{}: passed in the baseline, missing from this run", name));
      else
        out.not_run.push_back(fmt::format("{} ({} in the baseline): {}", name, b.status,
                                          !was_selected                           ? "case not selected by --formulation"
                                          : b.status == CaseStatus::kUnsupported ? "unsupported there"
                                          : options.at_baseline_settings && b.setting && !reruns_at_baseline_setting(b)
                                              ? "not re-run at its setting (only a passing case can regress)"
                                              : "no row now (no setting in the baseline to re-run at)"));
      continue;
    }
    const double norm_now = now->normalized_time;
    table.push_back({name, fmt::format("{} -> {}", b.status, now->status),
                     now->score.completed && b.steps > 0 ? ratio_cell(static_cast<double>(now->score.stats.steps), static_cast<double>(b.steps), "{:g}") : "-",
                     b.normalized_time ? ratio_cell(norm_now, *b.normalized_time, "{:.3g}") : "-"});
    if (b.control || now->control()) {  // expected to fail: a change is news, never a regression
      if (b.status != now->status)
        out.notes.push_back(fmt::format("{}: a control case (expected to fail), status {} in the baseline, now {}", name,
                                        b.status, now->status));
      continue;
    }
    if (b.status != CaseStatus::kPass) continue;  // only a passing case can regress
    if (now->status != CaseStatus::kPass) {
      out.regressions.push_back(fmt::format("{}: status {} -> {} ({})", name, b.status, now->status, now->message));
      continue;
    }
    if (now->score.stats.steps > options.max_step_growth * b.steps + 2)
      out.regressions.push_back(fmt::format("{}: needs {} steps to pass, baseline {} (loss of accuracy per step)", name,
                                            now->score.stats.steps, b.steps));
    if (b.normalized_time && std::isfinite(norm_now) && norm_now > options.max_slowdown * *b.normalized_time)
      out.regressions.push_back(fmt::format("{}: normalized time {:.3g}, baseline {:.3g} (more than {}x slower)", name, norm_now,
                                            *b.normalized_time, options.max_slowdown));
  }
  for (size_t i = 0; i < report.rows.size(); ++i)
    if (!matched[i]) out.no_baseline.push_back(fmt::format("{} ({} now)", report.rows[i].row_name(), report.rows[i].status));
  std::vector<size_t> width(table[0].size(), 0);
  for (const auto& row : table)
    for (size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
  for (const auto& row : table)
    for (size_t c = 0; c < row.size(); ++c)
      out.ratios += c + 1 < row.size() ? fmt::format("  {:<{}}", row[c], width[c]) : "  " + row[c] + "\n";
  return out;
}

}  // namespace mbs
