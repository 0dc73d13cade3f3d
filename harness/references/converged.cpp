#include "references/converged.hpp"

#include <filesystem>
#include <cmath>
#include <fmt/format.h>
#include <fstream>
#include <sstream>

#include <iostream>

#include "core/cancellation.hpp"
#include "core/formulation.hpp"
#include "problem/yaml_reader.hpp"
#include "run/point_sampler.hpp"
#include "run/reference_setup.hpp"
#include "run/watchdog.hpp"

namespace mbs {
namespace {

std::vector<Combo> point_combos(const Problem& problem) {
  std::vector<Combo> points;
  for (const auto& [name, combo] : problem.measured_points) points.push_back(combo);
  return points;
}

// Records the measured points at the output times.
class Recorder final : public StepObserver {
 public:
  Recorder(const Problem& problem, Eigen::MatrixXd& x)
      : sampler_(point_combos(problem), problem.model.dim, problem.run.output_interval, problem.run.end_time), x_(x) {
    x_.setConstant(sampler_.samples(), sampler_.width(), std::numeric_limits<double>::quiet_NaN());
  }
  void on_step(double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v) override {
    sampler_.on_step(t, q, v, [this](int k, const Eigen::VectorXd& p) { x_.row(k) = p.transpose(); });
    t_last_ = t;
  }
  bool complete() const { return sampler_.next() == sampler_.samples(); }
  double last_time() const { return t_last_; }

 private:
  PointSampler sampler_;
  Eigen::MatrixXd& x_;
  double t_last_ = 0.0;
};

std::string setting_text(const ConvergedCase& c) {
  return c.fixed_step ? fmt::format("step {:g} s", c.setting) : fmt::format("tol {:g}", c.setting);
}

}  // namespace

std::vector<std::string> reference_columns(const Problem& problem) {
  static const char* axes[] = {"x", "y", "z"};
  std::vector<std::string> cols;
  for (const auto& [name, combo] : problem.measured_points)
    for (int a = 0; a < problem.model.dim; ++a) cols.push_back(fmt::format("{}.{}", name, axes[a]));
  return cols;
}

std::shared_ptr<const ReferenceTrajectory> compute_converged_reference(const Problem& problem,
                                                                       void (*progress)(const std::string&), double timeout) {
  const Reader rd(problem.file);
  const ConvergedReference* converged = reference_as<ConvergedReference>(problem);
  if (!converged) throw ProblemError(fmt::format("{}: the problem has no converged reference", problem.file));
  const ConvergedReference& spec = *converged;
  std::vector<Eigen::MatrixXd> runs(spec.cases.size());
  std::vector<std::string> done;
  for (size_t i = 0; i < spec.cases.size(); ++i) {
    const ConvergedCase& c = spec.cases[i];
    const Formulation* f = Registry::instance().find(c.formulation);
    if (!f) {
      std::vector<std::string> known;
      for (const Formulation* g : Registry::instance().all()) known.push_back(g->name());
      rd.fail_at(c.mark, fmt::format("reference case {}: unknown formulation '{}' (known: {})", c.name(), c.formulation,
                                     fmt::join(known, ", ")));
    }
    // integrators() returns by value: keep the list alive while `info` points into it.
    const std::vector<IntegratorInfo> integrators = f->integrators();
    const IntegratorInfo* info = nullptr;
    std::vector<std::string> known;
    for (const IntegratorInfo& in : integrators) {
      known.push_back(in.name);
      if (in.name == c.integrator) info = &in;
    }
    if (!info)
      rd.fail_at(c.mark, fmt::format("reference case {}: {} has no integrator '{}' (known: {})", c.name(), c.formulation,
                                     c.integrator, fmt::join(known, ", ")));
    if ((info->kind == SettingKind::kFixedStep) != c.fixed_step)
      rd.fail_at(c.mark, fmt::format("reference case {} is {}: give its setting as {}", c.name(),
                                     c.fixed_step ? "adaptive" : "fixed-step", c.fixed_step ? "tol" : "step (s)"));
    if (const std::string why = f->unsupported_reason(problem.model); !why.empty())
      rd.fail_at(c.mark, fmt::format("reference case {} cannot run this problem: {}", c.name(), why));
    if (progress) progress(fmt::format("reference case {} at {} ...", c.name(), setting_text(c)));
    const Watchdog watchdog(timeout);  // the case's set-up and run; lifted when the iteration ends
    try {
      const double setting = c.fixed_step ? fixed_step(problem.run.end_time, c.setting) : c.setting;
      const std::unique_ptr<Simulator> sim = f->create(problem.model, c.integrator, setting);
      Recorder recorder(problem, runs[i]);
      const RunStats stats = sim->run(problem.run.end_time, &recorder);
      if (!recorder.complete())
        rd.fail_at(c.mark, fmt::format("reference case {} stopped at t = {:g} s, before the end time", c.name(), recorder.last_time()));
      done.push_back(fmt::format("{} at {} ({} steps, {:.1f} s)", c.name(), setting_text(c), stats.steps, watchdog.elapsed_s()));
    } catch (const Cancelled&) {
      throw PreparationTimedOut(fmt::format(
          "{}: computing the converged reference: case {} at {} ran out of --timeout {:g} s after {:.1f} s; nothing was run "
          "(the reference is stored once computed: compute it with a larger --timeout, or none)",
          problem.file, c.name(), setting_text(c), timeout, watchdog.elapsed_s()));
    } catch (const SolverError& e) {
      rd.fail_at(c.mark, fmt::format("reference case {} at {} failed: {}", c.name(), setting_text(c), e.what()));
    }
    if (!runs[i].allFinite()) rd.fail_at(c.mark, fmt::format("reference case {} gave non-finite positions", c.name()));
  }

  // Uncertainty: the largest distance of any case's points from the first case's, over output times.
  const int d = problem.model.dim, n_points = static_cast<int>(problem.measured_points.size());
  double worst = 0.0, t_worst = 0.0;
  size_t worst_case = 1;
  const double dt = problem.run.output_interval, t_end = problem.run.end_time;
  for (size_t i = 1; i < runs.size(); ++i)
    for (Eigen::Index k = 0; k < runs[0].rows(); ++k)
      for (int p = 0; p < n_points; ++p) {
        const double e = (runs[i].row(k).segment(d * p, d) - runs[0].row(k).segment(d * p, d)).norm();
        if (e > worst) worst = e, t_worst = std::min(static_cast<double>(k) * dt, t_end), worst_case = i;
      }
  if (is_reference_metric(problem.rule.metric) && !(worst * kReferenceMargin <= problem.rule.below))
    rd.fail_at(spec.mark(), fmt::format("converged reference: {} and {} disagree by {:.3g} m (at t = {:g} s), not {:g}x below the "
                                      "rule's {:g} m; tighten the reference cases' settings",
                                      spec.cases[0].name(), spec.cases[worst_case].name(), worst, t_worst, kReferenceMargin,
                                      problem.rule.below));

  auto ref = std::make_shared<ReferenceTrajectory>();
  ref->kind = "converged";
  ref->file = kConvergedReferenceFile;
  ref->dim = d;
  ref->dt = dt;
  ref->t_end = t_end;
  ref->x = std::move(runs[0]);
  ref->uncertainty = worst;
  ref->provenance = fmt::format("{}; the first is the reference", fmt::join(done, "; "));
  return ref;
}

std::string converged_reference_csv(const Problem& problem, const ReferenceTrajectory& reference) {
  std::string out = fmt::format("# mbsbench converged reference of {}\n", problem.name);
  out += fmt::format("# problem_hash: {}\n", problem_key(problem));
  out += fmt::format("# provenance: {}\n", reference.provenance);
  out += fmt::format("# uncertainty_m: {:.6e}\n", reference.uncertainty);
  out += "# (the largest distance between the cases' measured points over the output times)\n";
  return out + reference_csv_samples(problem, reference);
}

std::string reference_csv_samples(const Problem& problem, const ReferenceTrajectory& reference) {
  std::string out;
  out += fmt::format("# dim: {}\n# output_interval_s: {:.17g}\n# end_time_s: {:.17g}\n", reference.dim, reference.dt, reference.t_end);
  out += fmt::format("# columns: t (s), then each measured point's coordinates (m, {})\n",
                     problem.model.dim == 2 ? "in-plane along plane.e1, plane.e2" : "world x, y, z");
  out += "t," + fmt::format("{}", fmt::join(reference_columns(problem), ",")) + "\n";
  for (Eigen::Index k = 0; k < reference.x.rows(); ++k) {
    out += fmt::format("{:.17g}", std::min(static_cast<double>(k) * reference.dt, reference.t_end));
    for (Eigen::Index c = 0; c < reference.x.cols(); ++c) out += fmt::format(",{:.17g}", reference.x(k, c));
    out += "\n";
  }
  return out;
}

std::shared_ptr<const ReferenceTrajectory> read_converged_reference(const Problem& problem, const std::string& path,
                                                                    std::string* why) {
  auto no = [&](const std::string& reason) -> std::shared_ptr<const ReferenceTrajectory> {
    if (why) *why = reason;
    return nullptr;
  };
  std::ifstream in(path);
  if (!in) return no(fmt::format("no stored reference at {}", path));
  auto ref = std::make_shared<ReferenceTrajectory>();
  ref->kind = "converged";
  ref->file = kConvergedReferenceFile;
  std::string line, hash, head;
  while (std::getline(in, line) && !line.empty() && line[0] == '#') {
    auto value = [&](const char* key) -> std::optional<std::string> {
      const std::string k = fmt::format("# {}: ", key);
      if (line.rfind(k, 0) != 0) return std::nullopt;
      return line.substr(k.size());
    };
    try {
      if (auto v = value("problem_hash")) hash = *v;
      if (auto v = value("provenance")) ref->provenance = *v;
      if (auto v = value("uncertainty_m")) ref->uncertainty = std::stod(*v);
      if (auto v = value("dim")) ref->dim = std::stoi(*v);
      if (auto v = value("output_interval_s")) ref->dt = std::stod(*v);
      if (auto v = value("end_time_s")) ref->t_end = std::stod(*v);
    } catch (const std::exception&) {
      return no(fmt::format("{}: unreadable header line '{}'", path, line));
    }
  }
  if (const std::string key = problem_key(problem); hash != key)
    return no(fmt::format("{} was computed from another version of {} (hash {}, now {})", path, problem.file, hash, key));
  const std::string expected = "t," + fmt::format("{}", fmt::join(reference_columns(problem), ","));
  if (line != expected) return no(fmt::format("{}: columns '{}', expected '{}'", path, line, expected));
  const int samples = static_cast<int>(std::ceil(problem.run.end_time / problem.run.output_interval - 1e-9)) + 1;
  const Eigen::Index width = static_cast<Eigen::Index>(reference_columns(problem).size());
  if (ref->dim != problem.model.dim || ref->dt != problem.run.output_interval || ref->t_end != problem.run.end_time)
    return no(fmt::format("{}: sizes do not match the problem", path));
  ref->x.resize(samples, width);
  for (int k = 0; k < samples; ++k) {
    if (!std::getline(in, line)) return no(fmt::format("{}: {} rows, expected {}", path, k, samples));
    std::stringstream ss(line);
    std::string cell;
    std::getline(ss, cell, ',');  // t
    for (Eigen::Index c = 0; c < width; ++c) {
      if (!std::getline(ss, cell, ',')) return no(fmt::format("{}: row {} is short", path, k + 1));
      try {
        ref->x(k, c) = std::stod(cell);
      } catch (const std::exception&) {
        return no(fmt::format("{}: row {} has '{}', not a number", path, k + 1, cell));
      }
    }
  }
  return ref;
}

namespace {
void to_stderr(const std::string& line) { std::cerr << "bench: " << line << "\n"; }

// The stored file as the results folder's own name sees it (results/<problem>/reference/...): the
// note is committed with the results, so it carries no path of the machine that wrote it.
std::string shown_path(const std::string& path, const std::string& results_dir) {
  std::filesystem::path results = std::filesystem::path(results_dir).lexically_normal();
  if (!results.has_filename()) results = results.parent_path();  // "results/" as "results"
  const std::filesystem::path base = results.parent_path();
  return base.empty() ? path : std::filesystem::path(path).lexically_relative(base).string();
}
}  // namespace

std::shared_ptr<const ReferenceTrajectory> ConvergedReference::trajectory(const Problem& problem, const ReferenceOptions& options,
                                                                         ReferenceSetup& setup) const {
  const std::string path = converged_reference_path(options.results_dir, problem.name);
  std::string why;
  if (!options.rebuild) {
    if (auto stored = read_converged_reference(problem, path, &why)) {
      setup.note = fmt::format("converged reference read from {} (uncertainty {:.3g} m)", shown_path(path, options.results_dir),
                               stored->uncertainty);
      return stored;
    }
  } else {
    why = "--rebuild-reference";
  }
  to_stderr(fmt::format("{}: computing the converged reference ({})", problem.name, why));
  auto computed = compute_converged_reference(problem, to_stderr, options.timeout);
  setup.computed = true;
  setup.note = fmt::format("converged reference computed: {}; uncertainty {:.3g} m", computed->provenance, computed->uncertainty);
  to_stderr(fmt::format("{}: {}", problem.name, setup.note));
  return computed;
}

void read_reference_points(const Reader& rd, const yaml::Node& ref, Problem& p) {
  p.measured_points = {{p.history_name, p.history_point}};
  if (const yaml::Node points = ref["points"]) {
    if (!points.IsSequence() || points.size() == 0) rd.fail(points, "reference.points must be a non-empty list of points (NAME or BODY.POINT)");
    p.measured_points.clear();
    for (const yaml::Node& n : points)
      p.measured_points.emplace_back(rd.text(n, "reference.points"), measured_point(rd, n, p.model, "reference.points"));
  }
}

std::string ConvergedReference::stored_text(const Problem& problem, const ReferenceTrajectory& trajectory) const {
  return converged_reference_csv(problem, trajectory);
}

namespace {

std::shared_ptr<const Reference> read_converged(const ReadContext& ctx, const yaml::Node& ref, Problem& p);

const ReferenceKindInfo kConverged{
    "converged",
    "computed by the harness: two or more formulations at tight settings agree on the measured points in time",
    /*analysis=*/false, /*exact=*/false, /*positions_in_time=*/true, /*final_position=*/false,
    /*check_quantities=*/{}, read_converged};
MBS_REGISTER_REFERENCE_KIND(converged, kConverged);

// The case names are checked against the formulation registry when the reference is computed, with
// these marks.
std::shared_ptr<const Reference> read_converged(const ReadContext& ctx, const yaml::Node& ref, Problem& p) {
  const Reader& rd = ctx.rd;
  rd.expect_map(ref, "reference", {"kind", "points", "cases"});
  auto r = std::make_shared<ConvergedReference>(kConverged, ctx.mark(ref));
  read_reference_points(rd, ref, p);
  const yaml::Node cases = rd.required(ref, "cases", "reference (converged)");
  if (!cases.IsSequence() || cases.size() < 2)
    rd.fail(cases, "reference.cases must list at least two cases of different formulations: their agreement is the reference's uncertainty");
  for (const yaml::Node& c : cases) {
    rd.expect_map(c, "a reference case", {"case", "step", "tol"});
    ConvergedCase cc;
    const yaml::Node name = rd.required(c, "case", "a reference case (formulation/integrator)");
    const std::string text = rd.text(name, "reference case");
    const size_t slash = text.find('/');
    if (slash == std::string::npos || slash == 0 || slash + 1 == text.size())
      rd.fail(name, fmt::format("reference case '{}' must be formulation/integrator", text));
    cc.formulation = text.substr(0, slash);
    cc.integrator = text.substr(slash + 1);
    cc.mark = ctx.mark(name);
    if (c["step"] && c["tol"]) rd.fail(c["tol"], fmt::format("reference case {}: give a step or a tol, not both", text));
    if (!c["step"] && !c["tol"]) rd.fail(c, fmt::format("reference case {} needs its setting: step (s) or tol", text));
    cc.fixed_step = static_cast<bool>(c["step"]);
    cc.setting = rd.positive(c[cc.fixed_step ? "step" : "tol"], cc.fixed_step ? "reference case step" : "reference case tol");
    for (const ConvergedCase& other : r->cases)
      if (other.formulation == cc.formulation)
        rd.fail(name, fmt::format("reference cases {} and {} are the same formulation: a converged reference needs independent "
                                  "formulations, whose agreement bounds its error", other.name(), cc.name()));
    r->cases.push_back(cc);
  }
  return r;
}

}  // namespace

}  // namespace mbs
