#include "report/report.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fmt/format.h>
#include <stdexcept>

#include "core/contact.hpp"
#include "problem/reference_kinds.hpp"
#include "results/files.hpp"
#include "results/summary_json.hpp"

namespace mbs {

namespace {

std::string num(double x, const char* f = "{:.3e}") { return std::isfinite(x) ? fmt::format(fmt::runtime(f), x) : "-"; }

std::string setting_cell(const CaseResult& r) {
  if (!r.setting) return "-";
  return r.setting_kind == SettingKind::kFixedStep ? fmt::format("h={:.4g}", *r.setting) : fmt::format("tol={:.2g}", *r.setting);
}

std::string time_cell(double s) {
  if (!std::isfinite(s)) return "-";
  if (s < 1e-3) return fmt::format("{:.2f} us", s * 1e6);
  if (s < 1.0) return fmt::format("{:.3f} ms", s * 1e3);
  return fmt::format("{:.3f} s", s);
}

std::string measured_names(const Problem& p) {
  std::vector<std::string> names;
  for (const auto& [name, combo] : p.measured_points) names.push_back(name);
  return fmt::format("{}", fmt::join(names, ", "));
}

std::string rule_sampling(const Problem& p) {
  return is_reference_metric(p.rule.metric) ? "at the output times, against the reference" : "checked at every step";
}

// The rule's metric where the base columns (energy drift, violations, reference errors) do not
// show it (a contact problem's drift between impacts), then score.report's: extra columns.
std::vector<Metric> extra_metrics(const Problem& p) {
  std::vector<Metric> out;
  const Metric base[] = {Metric::kMaxEnergyDrift, Metric::kMaxPositionViolation, Metric::kMaxVelocityViolation,
                         Metric::kMaxReferenceError, Metric::kFinalReferenceError};
  if (std::find(std::begin(base), std::end(base), p.rule.metric) == std::end(base)) out.push_back(p.rule.metric);
  for (const Metric m : p.reported_metrics)
    if (std::find(out.begin(), out.end(), m) == out.end()) out.push_back(m);
  return out;
}

struct Column {
  std::string head;
  bool left;
};

}  // namespace

std::string status_text(const CaseResult& row) {
  return row.status == CaseStatus::kPass && row.control() ? "pass (control)" : to_string(row.status);
}

std::string row_note(const CaseResult& row) {
  if (!row.control()) return row.message;
  if (row.status == CaseStatus::kControl)
    return fmt::format("control case, {} as expected{}; expected to fail because {}", row.control_outcome,
                       row.message.empty() ? "" : ": " + row.message, row.expected_failure);
  if (row.status == CaseStatus::kPass)
    return fmt::format("a control case, expected to fail, PASSED{}; expected to fail because {}",
                       row.message.empty() ? "" : " (" + row.message + ")", row.expected_failure);
  return row.message;
}

std::vector<std::string> control_warnings(const BenchReport& report) {
  std::vector<std::string> out;
  for (const CaseResult& r : report.rows)
    if (r.status == CaseStatus::kPass && r.control())
      out.push_back(fmt::format("{}: {} is a control case, expected to fail, but it passed ({})", report.problem->name,
                                r.row_name(), r.expected_failure));
  return out;
}

std::string format_table(const BenchReport& report) {
  const Problem& p = *report.problem;
  if (p.analysis) return format_linearization_table(report);
  const std::vector<Column> base_cols{{"case", true},          {"setting", true},          {"steps", false},
                                 {"max drift J", false},  {"max |Phi| m", false},     {"max |Phi_q v| m/s", false},
                                 {"ref err max m", false}, {"ref err end m", false},  {"cpu median", false},      {"cpu min", false},
                                 {"norm", false},         {"status", true},           {"vs fastest", false}};
  std::vector<Column> cols = base_cols;
  // The rule's metric after the steps when no base column shows it; score.report's before the times.
  const std::vector<Metric> extra = extra_metrics(p);
  const bool rule_column = !extra.empty() && extra.front() == p.rule.metric;
  for (size_t i = rule_column ? 1 : 0; i < extra.size(); ++i) cols.insert(cols.end() - 5, Column{to_string(extra[i]), false});
  if (rule_column) cols.insert(cols.begin() + 3, Column{fmt::format("{} (rule)", p.rule.metric), false});
  std::vector<std::vector<std::string>> cells;
  for (const CaseResult& r : report.rows) {
    const bool ran = r.score.completed;
    cells.push_back({r.row_name(), setting_cell(r), ran ? std::to_string(r.score.stats.steps) : "-",
                     ran ? num(r.score.max_energy_drift) : "-", ran ? num(r.score.max_position_violation) : "-",
                     ran ? num(r.score.max_velocity_violation) : "-", ran ? num(r.score.max_reference_error) : "-",
                     ran ? num(r.score.final_reference_error) : "-",
                     r.timing ? time_cell(r.timing->median_s) : "-", r.timing ? time_cell(r.timing->min_s) : "-",
                     num(r.normalized_time, "{:.2f}"), status_text(r), num(r.relative_to_fastest, "{:.2f}x")});
    for (size_t i = rule_column ? 1 : 0; i < extra.size(); ++i)
      cells.back().insert(cells.back().end() - 5, ran ? num(r.score.metric(extra[i])) : "-");
    if (rule_column) cells.back().insert(cells.back().begin() + 3, ran ? num(r.score.metric(p.rule.metric)) : "-");
  }
  std::vector<size_t> width(cols.size());
  for (size_t c = 0; c < cols.size(); ++c) {
    width[c] = cols[c].head.size();
    for (const auto& row : cells) width[c] = std::max(width[c], row[c].size());
  }
  std::string out = fmt::format("{} — {}\n", p.name, p.title);
  out += fmt::format("rule: {} < {:g} ({}); objective: {}; t_end = {:g} s\n", p.rule.metric, p.rule.below,
                     rule_sampling(p), p.objective, p.run.end_time);
  if (!report.reference_note.empty())
    out += fmt::format("reference: {} (ref err: largest distance of {} from it, at the output times every {:g} s)\n",
                       report.reference_note, measured_names(p), p.run.output_interval);
  out += fmt::format("calibration kernel (RK4, 276 steps): {} median; norm = cpu median / kernel median\n\n",
                     time_cell(report.kernel.median_s));
  auto line = [&](const std::vector<std::string>& row) {
    std::string s;
    for (size_t c = 0; c < cols.size(); ++c) {
      s += cols[c].left ? fmt::format("{:<{}}", row[c], width[c]) : fmt::format("{:>{}}", row[c], width[c]);
      s += c + 1 < cols.size() ? "  " : "\n";
    }
    return s;
  };
  std::vector<std::string> head;
  for (const auto& c : cols) head.push_back(c.head);
  out += line(head);
  size_t total = 0;
  for (size_t w : width) total += w + 2;
  out += std::string(total - 2, '-') + "\n";
  for (const auto& row : cells) out += line(row);
  bool any = false;
  for (const CaseResult& r : report.rows) {
    const std::string note = row_note(r);
    if (note.empty()) continue;
    if (!any) out += "\n";
    any = true;
    out += fmt::format("  {}: {}\n", r.row_name(), note);
  }
  out += format_checks(report);
  out += format_impacts(report);
  out += format_final_angles(report);
  return out;
}

std::string format_impacts(const BenchReport& report) {
  const Problem& p = *report.problem;
  if (!p.model.has_role(ElementRole::kContact)) return "";
  std::string out = fmt::format("\nimpacts (t s of the first state after, contact, normal velocity at the reported states before -> after m/s, "
                                "total energy after J, datum {:g} J)\n",
                                p.energy_datum);
  for (const CaseResult& r : report.rows) {
    if (!r.score.completed) continue;
    out += fmt::format("{}: {} impacts (+{} below {:g} m/s), max penetration {:.3g} m\n", r.row_name(), r.score.impacts.size(),
                       r.score.micro_impacts, kImpactJump, r.score.max_penetration);
    for (size_t i = 0; i < r.score.impacts.size() && i < 6; ++i) {
      const Impact& im = r.score.impacts[i];
      out += fmt::format("  t = {:.4f}  {:<11} {:8.4f} -> {:7.4f}  E = {:.4f}\n", im.t, contacts(p.model)[im.contact]->name,
                         im.vn_before, im.vn_after, im.energy_after);
    }
    if (r.score.impacts.size() > 6) out += fmt::format("  ... ({} more in summary.json)\n", r.score.impacts.size() - 6);
  }
  return out;
}

std::string format_checks(const BenchReport& report) {
  const Problem& p = *report.problem;
  if (p.checks.empty()) return "";
  std::string out = "\npublished checks (value / ratio to the exact target; * = reproduces the published digits";
  bool any_printed_target = false;
  for (const Check& c : p.checks) any_printed_target = any_printed_target || c.published_is_target;
  out += any_printed_target ? "; p = ratio to the published target, from the source's approximate formula)\n" : ")\n";
  std::vector<std::string> head{"case"};
  std::vector<std::string> targets{"target"}, published{"published"};
  for (size_t i = 0; i < p.checks.size(); ++i) {
    head.push_back(p.checks[i].name);
    const int d = p.checks[i].decimals;
    const CaseResult* any = nullptr;
    for (const CaseResult& r : report.rows)
      if (r.score.checks.size() == p.checks.size()) any = &r;
    targets.push_back(any ? fmt::format("{:.{}f}", any->score.checks[i].target, d + 2) : "-");
    published.push_back(fmt::format("{:.{}f}", p.checks[i].published, d));
  }
  std::vector<std::vector<std::string>> rows{targets, published};
  for (const CaseResult& r : report.rows) {
    std::vector<std::string> row{r.row_name()};
    for (size_t i = 0; i < p.checks.size(); ++i) {
      if (!r.score.completed || i >= r.score.checks.size() || !std::isfinite(r.score.checks[i].value)) {
        row.push_back("-");
        continue;
      }
      const CheckValue& c = r.score.checks[i];
      const int d = p.checks[i].decimals;
      std::string cell = fmt::format("{:.{}f} / {:.{}f}", c.value, d + 2, c.ratio(), std::max(3, d));
      if (p.checks[i].published_is_target) cell += fmt::format(" / {:.{}f}p", c.value / p.checks[i].published, std::max(3, d));
      row.push_back(cell + (c.reproduces(d) ? " *" : ""));
    }
    rows.push_back(row);
  }
  std::vector<size_t> width(head.size());
  for (size_t c = 0; c < head.size(); ++c) {
    width[c] = head[c].size();
    for (const auto& row : rows) width[c] = std::max(width[c], row[c].size());
  }
  auto line = [&](const std::vector<std::string>& row) {
    std::string s;
    for (size_t c = 0; c < row.size(); ++c)
      s += (c == 0 ? fmt::format("{:<{}}", row[c], width[c]) : fmt::format("{:>{}}", row[c], width[c])) +
           (c + 1 < row.size() ? "  " : "\n");
    return s;
  };
  out += line(head);
  for (const auto& row : rows) out += line(row);
  return out;
}

std::string format_overview(const std::vector<BenchReport>& reports) {
  std::vector<std::string> cases;
  for (const BenchReport& r : reports)
    for (const CaseResult& row : r.rows)
      if (row.run_kind != RunKind::kPublished && std::find(cases.begin(), cases.end(), row.case_name()) == cases.end())
        cases.push_back(row.case_name());
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> head{"case"};
  for (const BenchReport& r : reports) head.push_back(r.problem->name);
  rows.push_back(head);
  for (const std::string& c : cases) {
    std::vector<std::string> row{c};
    for (const BenchReport& r : reports) {
      std::string cell = "-";
      for (const CaseResult& x : r.rows)
        if (x.run_kind != RunKind::kPublished && x.case_name() == c)
          cell = status_text(x) + (std::isfinite(x.normalized_time) ? fmt::format(" {} norm {:.3g}", setting_cell(x), x.normalized_time) : "");
      row.push_back(cell);
    }
    rows.push_back(row);
  }
  std::vector<size_t> width(head.size(), 0);
  for (const auto& row : rows)
    for (size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
  std::string out = "overview (status, tuned setting, normalized CPU time = cpu median / calibration kernel)\n";
  for (const auto& row : rows) {
    for (size_t c = 0; c < row.size(); ++c)
      out += fmt::format("{:<{}}", row[c], width[c]) + (c + 1 < row.size() ? "  " : "\n");
  }
  return out;
}

std::string to_markdown(const BenchReport& report) {
  const Problem& p = *report.problem;
  if (p.analysis)  // no time integration: the linearization table, every eigenvalue and its judgement
    return fmt::format("# {} — {}\n\nCreated {} ({}).\n\n```\n{}```\n", p.name, p.title, report.created, report.build,
                       format_linearization_table(report));
  std::string out = fmt::format("# {} — {}\n\n", p.name, p.title);
  out += fmt::format("Rule: `{} < {:g}` ({}); objective: {}; end time {:g} s. Created {} ({}).\n\n",
                     p.rule.metric, p.rule.below, rule_sampling(p), p.objective, p.run.end_time, report.created, report.build);
  if (!report.reference_note.empty())
    out += fmt::format("Reference: {}. Reference error: the largest distance of {} from it at the output times (every {:g} s).\n\n",
                       report.reference_note, measured_names(p), p.run.output_interval);
  out += fmt::format("Calibration kernel (fixed-size RK4, 276 steps): {:.3g} us median.\n\n", report.kernel.median_s * 1e6);
  if (!report.sweep.empty()) out += fmt::format("Sweep: {}.\n\n", report.sweep);
  // The rule's metric beside the base columns when they do not show it; score.report's in a second table.
  const std::vector<Metric> extra = extra_metrics(p);
  const bool rule_column = !extra.empty() && extra.front() == p.rule.metric;
  out += "| case | setting | steps | " + (rule_column ? fmt::format("{} (rule) | ", p.rule.metric) : std::string()) +
         "max drift (J) | max \\|Phi\\| (m) | max \\|Phi_q v\\| (m/s) | ref. error max (m) | "
         "ref. error end (m) | CPU median | CPU min | normalized | status | vs fastest |\n";
  out += std::string("|---|---|---:|") + (rule_column ? "---:|" : "") + "---:|---:|---:|---:|---:|---:|---:|---:|---|---:|\n";
  for (const CaseResult& r : report.rows) {
    const bool ran = r.score.completed;
    const std::string rule_cell = rule_column ? (ran ? num(r.score.metric(p.rule.metric)) : "-") + " | " : "";
    out += fmt::format("| {} | {} | {} | {}{} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n", r.row_name(), setting_cell(r),
                       ran ? std::to_string(r.score.stats.steps) : "-", rule_cell, ran ? num(r.score.max_energy_drift) : "-",
                       ran ? num(r.score.max_position_violation) : "-", ran ? num(r.score.max_velocity_violation) : "-",
                       ran ? num(r.score.max_reference_error) : "-", ran ? num(r.score.final_reference_error) : "-", r.timing ? time_cell(r.timing->median_s) : "-",
                       r.timing ? time_cell(r.timing->min_s) : "-", num(r.normalized_time, "{:.2f}"), status_text(r),
                       num(r.relative_to_fastest, "{:.2f}x"));
  }
  if (!p.reported_metrics.empty()) {
    out += fmt::format("\n| case | {} |\n|---|", fmt::join(p.reported_metrics, " | "));
    for (size_t i = 0; i < p.reported_metrics.size(); ++i) out += "---:|";
    out += "\n";
    for (const CaseResult& r : report.rows) {
      out += "| " + r.row_name() + " |";
      for (const Metric m : p.reported_metrics) out += " " + (r.score.completed ? num(r.score.metric(m)) : "-") + " |";
      out += "\n";
    }
  }
  bool any = false;
  for (const CaseResult& r : report.rows) {
    const std::string note = row_note(r);
    if (note.empty()) continue;
    if (!any) out += "\nNotes:\n\n";
    any = true;
    out += fmt::format("- `{}`: {}\n", r.row_name(), note);
  }
  if (!p.checks.empty()) out += "\n```\n" + format_checks(report) + "```\n";
  if (p.model.has_role(ElementRole::kContact)) out += "\n```\n" + format_impacts(report) + "```\n";
  if (!p.run.final_angles.empty()) out += "\n```\n" + format_final_angles(report) + "```\n";
  return out;
}

std::string final_angles_text(const BenchReport& report, const CaseResult& row) {
  const Problem& p = *report.problem;
  std::string out = fmt::format("# {} {} {}: the state at t = {:.17g} s in the source's angles (rad)\n"
                                "# name, value, published, value - published\n",
                                p.name, row.row_name(), row.setting ? fmt::format("{} {:.6g}", setting_kind_name(row.setting_kind), *row.setting) : "",
                                row.score.final_time);
  for (size_t i = 0; i < p.run.final_angles.size() && i < row.score.final_angles.size(); ++i) {
    const FinalAngle& a = p.run.final_angles[i];
    const double v = row.score.final_angles[i];
    out += fmt::format("{:<8} {: .16e} {: .16e} {: .3e}\n", a.name, v, a.published, v - a.published);
  }
  return out;
}

std::string format_final_angles(const BenchReport& report) {
  const Problem& p = *report.problem;
  if (p.run.final_angles.empty()) return "";
  std::string out = fmt::format("\nfinal angles at t_end (rad; published:");
  for (const FinalAngle& a : p.run.final_angles) out += fmt::format(" {} {:.10g}", a.name, a.published);
  out += "): largest |value - published| per row\n";
  for (const CaseResult& r : report.rows) {
    if (!r.score.completed) continue;
    double worst = 0.0;
    std::string at;
    for (size_t i = 0; i < p.run.final_angles.size() && i < r.score.final_angles.size(); ++i) {
      const double d = std::abs(r.score.final_angles[i] - p.run.final_angles[i].published);
      if (!(d <= worst)) worst = d, at = p.run.final_angles[i].name;
    }
    out += fmt::format("  {:<36} {:.3e} ({})\n", r.row_name(), worst, at);
  }
  return out;
}

void write_results(const BenchReport& report, const std::string& results_root) {
  const Problem& p = *report.problem;
  std::vector<std::string> folders{"histories"};
  std::vector<ResultFile> files{{"summary.json", to_json(report)}, {"summary.csv", to_csv(report)}, {"summary.md", to_markdown(report)}};
  if (const auto& ref = p.reference_trajectory; ref && !ref->file.empty()) {
    folders.push_back(std::filesystem::path(ref->file).parent_path().string());
    files.emplace_back(ref->file, p.reference->stored_text(p, *ref));
  }
  if (p.reference_trajectory) files.emplace_back("histories/reference.txt", reference_text(p));
  for (const CaseResult& r : report.rows)
    if (!r.history.empty()) files.emplace_back("histories/" + history_file_name(r), history_text(report, r));
  const size_t before_solutions = files.size();
  for (const CaseResult& r : report.rows)
    if (!p.run.final_angles.empty() && r.score.completed) files.emplace_back("solution/" + history_file_name(r), final_angles_text(report, r));
  for (const CaseResult& r : report.rows)
    if (r.linearization) files.emplace_back("solution/" + r.formulation + ".txt", solution_text(report, r));
  if (files.size() > before_solutions) folders.push_back("solution");
  try {
    // What scripts/report writes beside the results: kept until it regenerates them.
    write_folder((std::filesystem::path(results_root) / p.name).string(), folders, files, {"report.md", "figures", "sweep.json"});
  } catch (const std::exception& e) {
    throw std::runtime_error(fmt::format("writing results for {} failed: {}", p.name, e.what()));
  }
}

}  // namespace mbs
