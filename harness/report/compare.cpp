#include "report/compare.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <stdexcept>

namespace mbs {

namespace {
YAML::Node load_baseline(const std::string& baseline_json) {
  YAML::Node base;
  try {
    base = YAML::LoadFile(baseline_json);  // JSON is a subset of YAML
  } catch (const YAML::Exception& e) {
    throw std::runtime_error(fmt::format("{}: cannot read the baseline: {}", baseline_json, e.what()));
  }
  if (!base["rows"] || !base["rows"].IsSequence())
    throw std::runtime_error(fmt::format("{}: no 'rows' in the baseline", baseline_json));
  return base;
}
}  // namespace

std::map<std::string, double> baseline_settings(const std::string& baseline_json) {
  std::map<std::string, double> settings;
  for (const YAML::Node& b : load_baseline(baseline_json)["rows"]) {
    const std::string run = b["run"] ? b["run"].as<std::string>() : "tuned";
    if (run != "tuned" || !b["setting"] || b["setting"].IsNull()) continue;
    settings[b["formulation"].as<std::string>() + "/" + b["integrator"].as<std::string>()] = b["setting"].as<double>();
  }
  return settings;
}

std::vector<std::string> compare_with_baseline(const BenchReport& report, const std::string& baseline_json,
                                               const std::vector<std::string>& selected,
                                               const CompareOptions& options) {
  const YAML::Node base = load_baseline(baseline_json);
  std::vector<std::string> out;
  if (!base["problem"] || base["problem"].as<std::string>() != report.problem->name)
    throw std::runtime_error(fmt::format("{}: the baseline is for problem '{}', not '{}'", baseline_json,
                                         base["problem"] ? base["problem"].as<std::string>() : "?", report.problem->name));
  for (const YAML::Node& b : base["rows"]) {
    const std::string run = b["run"] ? b["run"].as<std::string>() : "tuned";
    const std::string name = b["formulation"].as<std::string>() + "/" + b["integrator"].as<std::string>() +
                             (run == "tuned" ? "" : " @" + run);
    const CaseResult* now = nullptr;
    for (const CaseResult& r : report.rows)  // a tuned row is matched by the same case re-run at its setting
      if (r.row_name() == name || (run == "tuned" && r.run_kind == RunKind::kBaseline && r.case_name() == name)) now = &r;
    if (!now) {
      const std::string c = b["formulation"].as<std::string>() + "/" + b["integrator"].as<std::string>();
      if (std::find(selected.begin(), selected.end(), c) != selected.end() && b["status"].as<std::string>() == "pass")
        out.push_back(fmt::format("{}: passed in the baseline, missing from this run", name));
      continue;
    }
    const std::string was = b["status"].as<std::string>();
    if (was == "pass" && now->status != CaseStatus::kPass) {
      out.push_back(fmt::format("{}: status {} -> {} ({})", name, was, now->status, now->message));
      continue;
    }
    if (was != "pass") continue;
    const long steps_was = b["steps"].as<long>();
    if (now->score.stats.steps > options.max_step_growth * steps_was + 2)
      out.push_back(fmt::format("{}: needs {} steps to pass, baseline {} (loss of accuracy per step)", name,
                                now->score.stats.steps, steps_was));
    if (b["normalized_time"] && !b["normalized_time"].IsNull() && std::isfinite(now->normalized_time)) {
      const double norm_was = b["normalized_time"].as<double>();
      if (now->normalized_time > options.max_slowdown * norm_was)
        out.push_back(fmt::format("{}: normalized time {:.3g}, baseline {:.3g} (more than {}x slower)", name,
                                  now->normalized_time, norm_was, options.max_slowdown));
    }
  }
  return out;
}

}  // namespace mbs
