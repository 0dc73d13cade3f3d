#include "results/partial.hpp"

#include <yaml-cpp/yaml.h>

#include <cstdlib>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <sstream>
#include <unistd.h>

#include "problem/reference_kinds.hpp"
#include "results/files.hpp"

namespace mbs {
namespace fs = std::filesystem;

namespace {

constexpr int kPartialVersion = 2;  // 2: control fields; histories on the output grid

std::string d(double x) { return fmt::format("{:.17g}", x); }

std::string doubles(const double* x, size_t n) {
  std::string s;
  for (size_t i = 0; i < n; ++i) s += (i ? " " : "") + d(x[i]);
  return s;
}

// Reading: every field is required; a missing or malformed one names the file and the key.
struct PartialReader {
  std::string file;
  [[noreturn]] void fail(const std::string& what) const { throw SweepError(fmt::format("{}: {}", file, what)); }
  const YAML::Node need(const YAML::Node& n, const char* key) const {
    const YAML::Node v = n[key];
    if (!v) fail(fmt::format("missing '{}' (not a partial summary of this bench?)", key));
    return v;
  }
  std::string str(const YAML::Node& n, const char* key) const {
    try {
      return need(n, key).as<std::string>();
    } catch (const YAML::Exception&) {
      fail(fmt::format("'{}' is not a string", key));
    }
  }
  double num(const std::string& s, const char* key) const {
    char* end = nullptr;
    const double x = std::strtod(s.c_str(), &end);
    if (s.empty() || *end != '\0') fail(fmt::format("'{}' has '{}', not a number", key, s));
    return x;
  }
  double dbl(const YAML::Node& n, const char* key) const { return num(str(n, key), key); }
  long lng(const YAML::Node& n, const char* key) const { return static_cast<long>(dbl(n, key)); }
  bool boolean(const YAML::Node& n, const char* key) const {
    const std::string s = str(n, key);
    if (s != "true" && s != "false") fail(fmt::format("'{}' has '{}', not true or false", key, s));
    return s == "true";
  }
  std::vector<double> list(const YAML::Node& n, const char* key) const {
    std::vector<double> v;
    std::stringstream ss(str(n, key));
    for (std::string w; ss >> w;) v.push_back(num(w, key));
    return v;
  }
};

void emit_row(YAML::Emitter& e, const CaseResult& r) {
  e << YAML::BeginMap;
  e << YAML::Key << "formulation" << YAML::Value << r.formulation;
  e << YAML::Key << "integrator" << YAML::Value << r.integrator;
  e << YAML::Key << "setting_kind" << YAML::Value << setting_kind_name(r.setting_kind);
  e << YAML::Key << "status" << YAML::Value << to_string(r.status);
  e << YAML::Key << "setting" << YAML::Value << (r.setting ? d(*r.setting) : std::string("none"));
  e << YAML::Key << "tuned" << YAML::Value << (r.tuned ? "true" : "false");
  e << YAML::Key << "run_kind" << YAML::Value << to_string(r.run_kind);
  e << YAML::Key << "trials" << YAML::Value << std::to_string(r.trials);
  e << YAML::Key << "message" << YAML::Value << r.message;
  e << YAML::Key << "expected_failure" << YAML::Value << r.expected_failure;
  e << YAML::Key << "control_outcome" << YAML::Value << to_string(r.control_outcome);
  if (r.timing) {
    e << YAML::Key << "timing" << YAML::Value << YAML::BeginMap;
    e << YAML::Key << "median_s" << YAML::Value << d(r.timing->median_s);
    e << YAML::Key << "min_s" << YAML::Value << d(r.timing->min_s);
    e << YAML::Key << "samples" << YAML::Value << std::to_string(r.timing->samples);
    e << YAML::Key << "calls_per_sample" << YAML::Value << std::to_string(r.timing->calls_per_sample);
    e << YAML::EndMap;
  }
  const Score& s = r.score;
  e << YAML::Key << "score" << YAML::Value << YAML::BeginMap;
  e << YAML::Key << "completed" << YAML::Value << (s.completed ? "true" : "false");
  e << YAML::Key << "error" << YAML::Value << s.error;
  e << YAML::Key << "stats" << YAML::Value
    << fmt::format("{} {} {} {} {}", s.stats.steps, s.stats.rhs_evals, s.stats.jacobian_evals, s.stats.newton_iterations,
                   s.stats.failures);
  const std::pair<const char*, double> figures[] = {
      {"max_energy_drift", s.max_energy_drift},
      {"max_position_violation", s.max_position_violation},
      {"max_velocity_violation", s.max_velocity_violation},
      {"final_position_error", s.final_position_error},
      {"max_reference_error", s.max_reference_error},
      {"final_reference_error", s.final_reference_error},
      {"max_energy_rise", s.max_energy_rise},
      {"max_angular_momentum_drift", s.max_angular_momentum_drift},
      {"final_time", s.final_time},
      {"max_penetration", s.max_penetration},
      {"max_energy_drift_between_impacts", s.max_energy_drift_between_impacts},
      {"eigenvalue_error", s.eigenvalue_error}};
  for (const auto& [k, v] : figures) e << YAML::Key << k << YAML::Value << d(v);
  e << YAML::Key << "final_angles" << YAML::Value << doubles(s.final_angles.data(), s.final_angles.size());
  std::vector<double> checks;
  for (const CheckValue& c : s.checks) checks.insert(checks.end(), {c.value, c.target});
  e << YAML::Key << "checks" << YAML::Value << doubles(checks.data(), checks.size());
  e << YAML::Key << "impacts" << YAML::Value << YAML::BeginSeq;
  for (const Impact& im : s.impacts)
    e << fmt::format("{} {} {} {} {}", d(im.t), im.contact, d(im.vn_before), d(im.vn_after), d(im.energy_after));
  e << YAML::EndSeq;
  e << YAML::Key << "micro_impacts" << YAML::Value << std::to_string(s.micro_impacts);
  e << YAML::EndMap;
  e << YAML::Key << "history" << YAML::Value << YAML::BeginSeq;
  for (size_t i = 0; i < r.history.rows(); ++i) e << doubles(r.history.row(i), static_cast<size_t>(r.history.columns));
  e << YAML::EndSeq;
  if (r.linearization) {
    const Linearization& l = *r.linearization;
    e << YAML::Key << "linearization" << YAML::Value << YAML::BeginMap;
    e << YAML::Key << "coordinates" << YAML::Value << l.coordinates;
    e << YAML::Key << "rule" << YAML::Value << l.rule;
    e << YAML::Key << "terms" << YAML::Value << YAML::BeginSeq;
    for (const auto& [name, m] : l.terms) {
      e << YAML::BeginMap << YAML::Key << "name" << YAML::Value << name;
      e << YAML::Key << "rows" << YAML::Value << std::to_string(m.rows());
      e << YAML::Key << "cols" << YAML::Value << std::to_string(m.cols());
      std::vector<double> data(m.data(), m.data() + m.size());  // column-major
      e << YAML::Key << "data" << YAML::Value << doubles(data.data(), data.size()) << YAML::EndMap;
    }
    e << YAML::EndSeq;
    e << YAML::Key << "eigenvalues" << YAML::Value << YAML::BeginSeq;
    for (const Eigenvalue& ev : l.eigenvalues) {
      e << YAML::BeginMap << YAML::Key << "s" << YAML::Value << fmt::format("{} {}", d(ev.s.real()), d(ev.s.imag()));
      e << YAML::Key << "finite" << YAML::Value << (ev.finite ? "true" : "false");
      e << YAML::Key << "true" << YAML::Value << (ev.is_true ? "true" : "false");
      e << YAML::Key << "why" << YAML::Value << ev.why << YAML::EndMap;
    }
    e << YAML::EndSeq << YAML::EndMap;
  }
  e << YAML::EndMap;
}

CaseResult read_row(const PartialReader& rd, const YAML::Node& n) {
  CaseResult r;
  r.formulation = rd.str(n, "formulation");
  r.integrator = rd.str(n, "integrator");
  const std::string kind = rd.str(n, "setting_kind");
  if (kind != "step" && kind != "tol" && !kind.empty()) rd.fail(fmt::format("unknown setting_kind '{}'", kind));
  if (!kind.empty()) r.setting_kind = kind == "step" ? SettingKind::kFixedStep : SettingKind::kTolerance;
  const std::string status = rd.str(n, "status");
  const std::optional<CaseStatus> known = status_from_name(status);
  if (!known) rd.fail(fmt::format("unknown status '{}'", status));
  r.status = *known;
  if (const std::string s = rd.str(n, "setting"); s != "none") r.setting = rd.num(s, "setting");
  r.tuned = rd.boolean(n, "tuned");
  const std::string run_kind = rd.str(n, "run_kind");
  const std::optional<RunKind> rk = run_kind_from_name(run_kind);
  if (!rk) rd.fail(fmt::format("unknown run_kind '{}'", run_kind));
  r.run_kind = *rk;
  r.trials = static_cast<int>(rd.lng(n, "trials"));
  r.message = rd.str(n, "message");
  r.expected_failure = rd.str(n, "expected_failure");
  const std::string outcome = rd.str(n, "control_outcome");
  const std::optional<CaseStatus> co = status_from_name(outcome);
  if (!co || (*co != CaseStatus::kFail && *co != CaseStatus::kError)) rd.fail(fmt::format("control_outcome '{}' is not fail or error", outcome));
  r.control_outcome = *co;
  if (r.status == CaseStatus::kControl && !r.control()) rd.fail("status control without expected_failure");
  if (const YAML::Node t = n["timing"]) {
    Timing timing;
    timing.median_s = rd.dbl(t, "median_s");
    timing.min_s = rd.dbl(t, "min_s");
    timing.samples = static_cast<int>(rd.lng(t, "samples"));
    timing.calls_per_sample = rd.lng(t, "calls_per_sample");
    r.timing = timing;
  }
  const YAML::Node sn = rd.need(n, "score");
  Score& s = r.score;
  s.completed = rd.boolean(sn, "completed");
  s.error = rd.str(sn, "error");
  const std::vector<double> st = rd.list(sn, "stats");
  if (st.size() != 5) rd.fail("'stats' needs 5 numbers");
  s.stats = RunStats{static_cast<long>(st[0]), static_cast<long>(st[1]), static_cast<long>(st[2]), static_cast<long>(st[3]),
                     static_cast<long>(st[4])};
  const std::pair<const char*, double*> figures[] = {
      {"max_energy_drift", &s.max_energy_drift},
      {"max_position_violation", &s.max_position_violation},
      {"max_velocity_violation", &s.max_velocity_violation},
      {"final_position_error", &s.final_position_error},
      {"max_reference_error", &s.max_reference_error},
      {"final_reference_error", &s.final_reference_error},
      {"max_energy_rise", &s.max_energy_rise},
      {"max_angular_momentum_drift", &s.max_angular_momentum_drift},
      {"final_time", &s.final_time},
      {"max_penetration", &s.max_penetration},
      {"max_energy_drift_between_impacts", &s.max_energy_drift_between_impacts},
      {"eigenvalue_error", &s.eigenvalue_error}};
  for (const auto& [k, v] : figures) *v = rd.dbl(sn, k);
  s.final_angles = rd.list(sn, "final_angles");
  const std::vector<double> checks = rd.list(sn, "checks");
  if (checks.size() % 2) rd.fail("'checks' needs pairs of numbers");
  for (size_t i = 0; i + 1 < checks.size(); i += 2) s.checks.push_back(CheckValue{checks[i], checks[i + 1]});
  for (const YAML::Node& im : rd.need(sn, "impacts")) {
    std::vector<double> v;
    std::stringstream ss(im.as<std::string>());
    for (std::string w; ss >> w;) v.push_back(rd.num(w, "impacts"));
    if (v.size() != 5) rd.fail("an impact needs 5 numbers");
    s.impacts.push_back(Impact{v[0], static_cast<int>(v[1]), v[2], v[3], v[4]});
  }
  s.micro_impacts = rd.lng(sn, "micro_impacts");
  for (const YAML::Node& h : rd.need(n, "history")) {
    std::vector<double> v;
    std::stringstream ss(h.as<std::string>());
    for (std::string w; ss >> w;) v.push_back(rd.num(w, "history"));
    if (r.history.empty()) r.history.columns = static_cast<int>(v.size());
    if (v.empty()) rd.fail("a history row is empty");
    if (v.size() != static_cast<size_t>(r.history.columns)) rd.fail("history rows differ in length");
    r.history.values.insert(r.history.values.end(), v.begin(), v.end());
  }
  if (const YAML::Node ln = n["linearization"]) {
    Linearization l;
    l.coordinates = rd.str(ln, "coordinates");
    l.rule = rd.str(ln, "rule");
    for (const YAML::Node& t : rd.need(ln, "terms")) {
      const long rows = rd.lng(t, "rows"), cols = rd.lng(t, "cols");
      const std::vector<double> data = rd.list(t, "data");
      if (rows < 0 || cols < 0 || static_cast<long>(data.size()) != rows * cols) rd.fail("a linearization term's size does not match its data");
      l.terms.emplace_back(rd.str(t, "name"), Eigen::Map<const Eigen::MatrixXd>(data.data(), rows, cols));
    }
    for (const YAML::Node& ev : rd.need(ln, "eigenvalues")) {
      const std::vector<double> sv = rd.list(ev, "s");
      if (sv.size() != 2) rd.fail("an eigenvalue needs 2 numbers");
      Eigenvalue e;
      e.s = {sv[0], sv[1]};
      e.finite = rd.boolean(ev, "finite");
      e.is_true = rd.boolean(ev, "true");
      e.why = rd.str(ev, "why");
      l.eigenvalues.push_back(e);
    }
    r.linearization = std::move(l);
  }
  return r;
}

std::string file_name_of(const std::string& case_name) {
  std::string s = case_name;
  const size_t slash = s.find('/');
  if (slash != std::string::npos) s.replace(slash, 1, "__");
  return s;
}

}  // namespace

std::string executable_id() {
  static const std::string id = [] {
    std::ifstream in("/proc/self/exe", std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return in ? fnv1a_hex(ss.str()) : std::string("unknown");
  }();
  return id;
}

std::string host_description() {
  char name[256] = {};
  ::gethostname(name, sizeof name - 1);
  std::string cpu;
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("model name", 0) == 0) {
      cpu = line.substr(line.find(':') + 1);
      cpu.erase(0, cpu.find_first_not_of(' '));
      break;
    }
  return cpu.empty() ? std::string(name) : fmt::format("{} ({})", name, cpu);
}

std::string reference_fingerprint(const Problem& problem) {
  const auto& ref = problem.reference_trajectory;
  if (!ref || ref->file.empty() || !problem.reference) return "";
  return fnv1a_hex(problem.reference->stored_text(problem, *ref));
}

std::string partial_path(const std::string& partials_dir, const std::string& problem, const std::string& case_name) {
  return (fs::path(partials_dir) / problem / (file_name_of(case_name) + ".yaml")).string();
}

void write_partial(const BenchReport& report, const std::string& case_name, const SweepFingerprint& f,
                   const std::string& path) {
  YAML::Emitter e;
  e << YAML::BeginMap;
  e << YAML::Key << "mbsbench_partial" << YAML::Value << std::to_string(kPartialVersion);
  e << YAML::Key << "problem" << YAML::Value << report.problem->name;
  e << YAML::Key << "case" << YAML::Value << case_name;
  e << YAML::Key << "created" << YAML::Value << report.created;
  e << YAML::Key << "problem_file" << YAML::Value << report.problem_file;
  e << YAML::Key << "problem_hash" << YAML::Value << f.problem_hash;
  e << YAML::Key << "build" << YAML::Value << f.build;
  e << YAML::Key << "build_id" << YAML::Value << f.build_id;
  e << YAML::Key << "options" << YAML::Value << f.options;
  e << YAML::Key << "reference" << YAML::Value << f.reference;
  e << YAML::Key << "reference_note" << YAML::Value << report.reference_note;
  e << YAML::Key << "host" << YAML::Value << f.host;
  e << YAML::Key << "kernel" << YAML::Value << YAML::BeginMap;
  e << YAML::Key << "median_s" << YAML::Value << d(report.kernel.median_s);
  e << YAML::Key << "min_s" << YAML::Value << d(report.kernel.min_s);
  e << YAML::Key << "samples" << YAML::Value << std::to_string(report.kernel.samples);
  e << YAML::Key << "calls_per_sample" << YAML::Value << std::to_string(report.kernel.calls_per_sample);
  e << YAML::EndMap;
  e << YAML::Key << "rows" << YAML::Value << YAML::BeginSeq;
  for (const CaseResult& r : report.rows) emit_row(e, r);
  e << YAML::EndSeq << YAML::EndMap;
  if (!e.good()) throw std::runtime_error(fmt::format("cannot write the partial {}: {}", path, e.GetLastError()));
  write_atomically(path, std::string("# mbsbench partial summary: one case; combine with bench --merge\n") + e.c_str() + "\n");
}

Partial read_partial(const std::string& path) {
  PartialReader rd{path};
  YAML::Node root;
  try {
    root = YAML::LoadFile(path);
  } catch (const YAML::ParserException& e) {
    throw SweepError(fmt::format("{}:{}:{}: not a readable partial summary: {}", path, e.mark.line + 1, e.mark.column + 1, e.msg));
  } catch (const YAML::Exception& e) {
    throw SweepError(fmt::format("{}: not a readable partial summary: {}", path, e.what()));
  }
  if (!root.IsMap()) rd.fail("not a partial summary (no mapping at the top)");
  if (rd.str(root, "mbsbench_partial") != std::to_string(kPartialVersion))
    rd.fail(fmt::format("partial summary version {}, this bench reads {}", rd.str(root, "mbsbench_partial"), kPartialVersion));
  Partial p;
  p.file = path;
  p.problem = rd.str(root, "problem");
  p.case_name = rd.str(root, "case");
  SweepFingerprint& f = p.fingerprint;
  f.problem_hash = rd.str(root, "problem_hash");
  f.build = rd.str(root, "build");
  f.build_id = rd.str(root, "build_id");
  f.reference = rd.str(root, "reference");
  f.host = rd.str(root, "host");
  f.options = rd.str(root, "options");
  p.reference_note = rd.str(root, "reference_note");
  const YAML::Node k = rd.need(root, "kernel");
  p.kernel = Timing{rd.dbl(k, "median_s"), rd.dbl(k, "min_s"), static_cast<int>(rd.lng(k, "samples")), rd.lng(k, "calls_per_sample")};
  const YAML::Node rows = rd.need(root, "rows");
  if (!rows.IsSequence()) rd.fail("'rows' is not a list");
  for (const YAML::Node& row : rows) p.rows.push_back(read_row(rd, row));
  return p;
}

void store_reference(const Problem& problem, const std::string& partials_dir) {
  const auto& ref = problem.reference_trajectory;
  if (!ref || ref->file.empty() || !problem.reference) return;
  write_atomically((fs::path(partials_dir) / problem.name / ref->file).string(), problem.reference->stored_text(problem, *ref));
}

}  // namespace mbs
