#include "results/summary_json.hpp"

#include <yaml-cpp/yaml.h>

#include <cerrno>
#include <cmath>
#include <complex>
#include <cstring>
#include <fstream>
#include <fmt/format.h>
#include <limits>
#include <stdexcept>

#include "problem/reference_kinds.hpp"
#include "results/files.hpp"
#include "results/json_writer.hpp"

namespace mbs {

namespace {
std::string measured_names(const Problem& p) {
  std::vector<std::string> names;
  for (const auto& [name, combo] : p.measured_points) names.push_back(name);
  return fmt::format("{}", fmt::join(names, ", "));
}
}  // namespace

std::string to_json(const BenchReport& report) {
  const Problem& p = *report.problem;
  JsonWriter j;
  j.begin_object();
  j.field("problem", p.name).field("title", p.title);
  j.field("problem_file", report.problem_file.empty() ? p.file : report.problem_file);
  j.key("rule").begin_object().field("metric", to_string(p.rule.metric)).field("below", p.rule.below).end_object();
  j.field("objective", p.objective).field("end_time_s", p.run.end_time);
  if (const auto& ref = p.reference_trajectory) {
    j.key("reference").begin_object().field("kind", ref->kind).field("uncertainty_m", ref->uncertainty);
    j.field("provenance", ref->provenance).field("measured_points", measured_names(p)).field("output_interval_s", ref->dt);
    if (!ref->file.empty()) j.field("file", ref->file).field("problem_hash", problem_key(p));
    j.end_object();
  }
  // Analysis problems: the exact spectrum the eigenvalue error is measured against, [re, im] (1/s).
  if (const auto exact = p.analysis && p.reference ? p.reference->eigenvalues(p) : std::vector<std::complex<double>>{}; !exact.empty()) {
    j.key("reference_eigenvalues").begin_array();
    for (const std::complex<double>& s : exact) j.begin_array().value(s.real()).value(s.imag()).end_array();
    j.end_array();
  }
  j.field("created", report.created).field("build", report.build);
  if (!report.sweep.empty()) j.field("sweep", report.sweep);
  j.key("calibration").begin_object()
      .field("kernel", "fixed-size RK4 on theta'' = -(g/L) sin(theta), 276 steps over 10 s")
      .field("cpu_time_median_s", report.kernel.median_s)
      .field("cpu_time_min_s", report.kernel.min_s)
      .end_object();
  j.key("rows").begin_array();
  for (const CaseResult& r : report.rows) {
    j.begin_object();
    j.field("formulation", r.formulation).field("integrator", r.integrator);
    j.key("setting");
    r.setting ? j.value(*r.setting) : j.null();
    j.field("setting_kind", setting_kind_name(r.setting_kind)).field("tuned", r.tuned).field("tuner_trials", r.trials);
    j.field("status", to_string(r.status));
    if (r.control()) {  // a control case: expected to fail; a pass is flagged, a failure or stop is no news
      j.field("control", true).field("expected_failure", r.expected_failure);
      if (r.status == CaseStatus::kControl) j.field("control_outcome", to_string(r.control_outcome));
    }
    const bool ran = r.score.completed;
    const double nan = std::numeric_limits<double>::quiet_NaN();
    j.field("max_energy_drift", ran ? r.score.max_energy_drift : nan);
    j.field("max_position_violation", ran ? r.score.max_position_violation : nan);
    j.field("max_velocity_violation", ran ? r.score.max_velocity_violation : nan);
    j.field("final_position_error", ran ? r.score.final_position_error : nan);
    j.field("max_reference_error", ran ? r.score.max_reference_error : nan);
    j.field("final_reference_error", ran ? r.score.final_reference_error : nan);
    j.field("max_energy_rise", ran ? r.score.max_energy_rise : nan);
    j.field("rule_metric_value", ran ? r.score.metric(p.rule.metric) : nan);  // the value the rule judged
    if (p.momentum_axis) j.field("max_angular_momentum_drift", ran ? r.score.max_angular_momentum_drift : nan);
    j.field("steps", ran ? r.score.stats.steps : 0L);
    j.field("rhs_evals", r.score.stats.rhs_evals).field("jacobian_evals", r.score.stats.jacobian_evals);
    j.field("newton_iterations", r.score.stats.newton_iterations).field("failures", r.score.stats.failures);
    j.field("cpu_time_median_s", r.timing ? r.timing->median_s : nan);
    j.field("cpu_time_min_s", r.timing ? r.timing->min_s : nan);
    j.field("timing_samples", r.timing ? r.timing->samples : 0);
    j.field("normalized_time", r.normalized_time);
    j.field("relative_to_fastest", r.relative_to_fastest);
    j.field("run", to_string(r.run_kind));
    j.key("checks").begin_array();
    for (size_t i = 0; i < r.score.checks.size() && i < p.checks.size(); ++i) {
      const CheckValue& c = r.score.checks[i];
      j.begin_object().field("name", p.checks[i].name).field("value", ran ? c.value : nan).field("target", c.target);
      j.field("ratio", ran ? c.ratio() : nan).field("published", p.checks[i].published);
      j.field("reproduces_published_digits", ran && c.reproduces(p.checks[i].decimals));
      if (p.checks[i].published_is_target) j.field("ratio_to_published", ran ? c.value / p.checks[i].published : nan);
      j.end_object();
    }
    j.end_array();
    if (r.linearization) {
      const Linearization& l = *r.linearization;
      j.key("linearization").begin_object().field("coordinates", l.coordinates).field("rule", l.rule);
      j.field("eigenvalue_error", r.score.eigenvalue_error).field("solution_file", "solution/" + r.formulation + ".txt");
      j.key("eigenvalues").begin_array();
      for (const Eigenvalue& e : l.eigenvalues)
        j.begin_object().field("re", e.finite ? e.s.real() : nan).field("im", e.finite ? e.s.imag() : nan).field("finite", e.finite)
            .field("true", e.is_true).field("why", e.why).end_object();
      j.end_array().end_object();
    }
    if (p.model.has_role(ElementRole::kContact)) {
      j.field("max_penetration_m", ran ? r.score.max_penetration : nan).field("micro_impacts", r.score.micro_impacts);
      j.key("impacts").begin_array();
      for (const Impact& im : r.score.impacts)
        j.begin_object().field("t_s", im.t).field("contact", contacts(p.model)[im.contact]->name).field("vn_before_m_s", im.vn_before)
            .field("vn_after_m_s", im.vn_after).field("energy_after_J", im.energy_after).end_object();
      j.end_array();
    }
    if (!p.run.final_angles.empty()) {
      j.key("final_angles").begin_array();
      for (size_t i = 0; i < p.run.final_angles.size(); ++i) {
        const FinalAngle& a = p.run.final_angles[i];
        const double value = ran && i < r.score.final_angles.size() ? r.score.final_angles[i] : nan;
        j.begin_object().field("name", a.name).field("value_rad", value).field("published_rad", a.published);
        j.field("difference_rad", value - a.published).end_object();
      }
      j.end_array();
      j.field("solution_file", ran ? "solution/" + history_file_name(r) : std::string());
    }
    j.field("history_file", r.history.empty() ? std::string() : "histories/" + history_file_name(r));
    j.field("message", r.message);
    j.end_object();
  }
  j.end_array();
  j.end_object();
  return j.str() + "\n";
}

std::string to_csv(const BenchReport& report) {
  std::string out =
      "formulation,integrator,setting_kind,setting,status,control,steps,max_energy_drift,max_position_violation,"
      "max_velocity_violation,final_position_error,max_reference_error,final_reference_error,cpu_time_median_s,"
      "cpu_time_min_s,normalized_time,"
      "relative_to_fastest,message\n";
  auto f = [](double x) { return std::isfinite(x) ? fmt::format("{:.9g}", x) : std::string(); };
  for (const CaseResult& r : report.rows) {
    std::string msg = r.message;
    for (char& c : msg)
      if (c == '"') c = '\'';
    const bool ran = r.score.completed;
    const double nan = std::numeric_limits<double>::quiet_NaN();
    out += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},\"{}\"\n", r.formulation, r.integrator,
                       setting_kind_name(r.setting_kind), r.setting ? f(*r.setting) : "", r.status, r.control(),
                       ran ? r.score.stats.steps : 0,
                       f(ran ? r.score.max_energy_drift : nan), f(ran ? r.score.max_position_violation : nan),
                       f(ran ? r.score.max_velocity_violation : nan), f(ran ? r.score.final_position_error : nan),
                       f(ran ? r.score.max_reference_error : nan), f(ran ? r.score.final_reference_error : nan),
                       f(r.timing ? r.timing->median_s : nan), f(r.timing ? r.timing->min_s : nan),
                       f(r.normalized_time), f(r.relative_to_fastest), msg);
  }
  return out;
}

Summary read_summary(const std::string& summary_json) {
  if (std::ifstream probe(summary_json); !probe)
    throw std::runtime_error(fmt::format("{}: cannot open the baseline: {}", summary_json, std::strerror(errno)));
  YAML::Node root;
  try {
    root = YAML::LoadFile(summary_json);  // JSON is a subset of YAML
  } catch (const YAML::ParserException& e) {
    throw std::runtime_error(fmt::format("{}:{}:{}: not a readable summary.json: {}", summary_json, e.mark.line + 1,
                                         e.mark.column + 1, e.msg));
  } catch (const YAML::Exception& e) {
    throw std::runtime_error(fmt::format("{}: cannot read the baseline: {}", summary_json, e.what()));
  }
  if (!root.IsMap() || !root["rows"] || !root["rows"].IsSequence())
    throw std::runtime_error(fmt::format("{}: no 'rows' list: not a summary.json written by bench", summary_json));
  Summary s;
  size_t i = 0;
  try {
    s.problem = root["problem"] ? root["problem"].as<std::string>() : "?";
    s.created = root["created"] ? root["created"].as<std::string>() : "";
    for (const YAML::Node& b : root["rows"]) {
      ++i;
      SummaryRow r;
      r.formulation = b["formulation"].as<std::string>();
      r.integrator = b["integrator"].as<std::string>();
      const std::string run = b["run"] ? b["run"].as<std::string>() : "tuned";
      const std::optional<RunKind> kind = run_kind_from_name(run);
      const std::string status = b["status"].as<std::string>();
      const std::optional<CaseStatus> st = status_from_name(status);
      if (!kind || !st)
        throw std::runtime_error(fmt::format("{}: row {} ({}): unknown {} '{}'", summary_json, i, r.case_name(),
                                             kind ? "status" : "run", kind ? status : run));
      r.run_kind = *kind;
      r.status = *st;
      if (b["setting"] && !b["setting"].IsNull()) r.setting = b["setting"].as<double>();
      if (b["steps"]) r.steps = b["steps"].as<long>();
      if (b["normalized_time"] && !b["normalized_time"].IsNull()) r.normalized_time = b["normalized_time"].as<double>();
      r.control = b["control"] && b["control"].as<bool>();  // absent from summaries older than the control status
      s.rows.push_back(std::move(r));
    }
  } catch (const YAML::Exception& e) {  // a field missing or of the wrong type
    const std::string at = e.mark.is_null() ? "" : fmt::format(":{}:{}", e.mark.line + 1, e.mark.column + 1);
    throw std::runtime_error(fmt::format("{}{}: row {}: {} (not a summary.json written by bench?)", summary_json, at, i, e.msg));
  }
  return s;
}

}  // namespace mbs
