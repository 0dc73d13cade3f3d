// Time histories and reference.txt (results/<problem>/histories/): rows on the output grid, read by
// the scoring's interpolation (PointSampler), every coordinate of every recorded point, the fields
// header a reader parses, and the reference on the same grid.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <sstream>
#include <unistd.h>

#include "core/natural_coordinates.hpp"
#include "references/simple_pendulum.hpp"
#include "report/report.hpp"
#include "results/files.hpp"
#include "results/partial.hpp"
#include "results/summary_json.hpp"
#include "run/point_sampler.hpp"
#include "run/reference_setup.hpp"
#include "run/scoring.hpp"

namespace mbs {
namespace {

// A history or reference file as a reader sees it: the '#' lines, the fields, the numbers.
struct Parsed {
  std::vector<std::string> comments;
  std::vector<std::string> fields;
  std::vector<std::vector<double>> rows;
};

Parsed parse(const std::string& text) {
  Parsed out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    std::istringstream words(line);
    if (line.rfind('#', 0) == 0) {
      out.comments.push_back(line);
      if (line.rfind("# fields:", 0) == 0) {
        words.ignore(9);
        for (std::string w; words >> w;) out.fields.push_back(w);
      }
      continue;
    }
    std::vector<double> row;
    for (double x; words >> x;) row.push_back(x);
    EXPECT_TRUE(words.eof()) << "not a number in: " << line;
    out.rows.push_back(row);
  }
  return out;
}

Problem with_reference(const std::string& name) {
  Problem p = load_problem(MBS_SOURCE_DIR "/problems/" + name + ".yaml");
  attach_reference(p, ReferenceOptions{});
  return p;
}

// Every state a run reports, seen beside the scoring observer.
struct State {
  double t;
  Eigen::VectorXd q, v;
};
class Recorder final : public StepObserver {
 public:
  explicit Recorder(StepObserver& inner) : inner_(inner) {}
  void on_step(double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v) override {
    inner_.on_step(t, q, v);
    states.push_back({t, q, v});
  }
  std::vector<State> states;

 private:
  StepObserver& inner_;
};

struct Recorded {
  Score score;
  History history;
  std::vector<State> states;
};

// One verification run, as run_case makes it (score_run on a recording observer), states kept.
Recorded record(const Problem& p, const std::string& formulation, const std::string& integrator, double setting) {
  ScoringObserver observer(p, true);
  observer.reset();
  Recorder recorder(observer);
  const auto sim = Registry::instance().find(formulation)->create(p.model, integrator, setting);
  Recorded r;
  r.score.stats = sim->run(p.run.end_time, &recorder);
  r.score.completed = true;
  observer.finish(r.score);
  r.history = observer.history();
  r.states = std::move(recorder.states);
  return r;
}

int grid_rows(const Problem& p) { return static_cast<int>(std::ceil(p.run.end_time / p.run.output_interval - 1e-9)) + 1; }
double grid_time(const Problem& p, int k) { return std::min(k * p.run.output_interval, p.run.end_time); }

// Linear interpolation of f(state) between the reported states around t.
template <class F>
double between_states(const std::vector<State>& s, double t, F&& f) {
  size_t i = 1;
  while (i + 1 < s.size() && s[i].t < t) ++i;
  const double u = std::clamp((t - s[i - 1].t) / (s[i].t - s[i - 1].t), 0.0, 1.0);
  return (1 - u) * f(s[i - 1]) + u * f(s[i]);
}

// Scalars ride along linearly (the Hermite formula with the secant as rate) while the points keep
// their cubic reading.
TEST(PointSampler, ScalarValuesAreReadLinearlyBesideTheCubicPoints) {
  Combo point;
  point.c = Combo::Small::Zero(2);
  point.add(0, 1.0);
  const double dt = 0.1, t_end = 1.05;
  PointSampler sampler({point}, 2, dt, t_end, 2);
  ASSERT_EQ(sampler.width(), 2);
  ASSERT_EQ(sampler.size(), 4);
  auto x = [](double t) { return Eigen::Vector2d(1 + 2 * t - 3 * t * t + 0.5 * t * t * t, -t * t * t); };
  auto xd = [](double t) { return Eigen::Vector2d(2 - 6 * t + 1.5 * t * t, -3 * t * t); };
  auto values = [](double t) { return Eigen::Vector2d(t * t, std::sin(3 * t)); };
  const std::vector<double> steps{0.0, 0.013, 0.31, 0.32, 0.32, 0.7, 0.95, 1.05};  // 0.32 twice: h = 0
  int seen = 0;
  for (size_t i = 0; i < steps.size(); ++i) {
    const double t = steps[i];
    sampler.on_step(t, x(t), xd(t), values(t), [&](int k, const Eigen::VectorXd& s) {
      EXPECT_EQ(k, seen++);
      const double tk = sampler.time(k);
      EXPECT_NEAR((s.head(2) - x(tk)).norm(), 0.0, 1e-14) << "sample " << k;
      const double t0 = i ? steps[i - 1] : t, u = t > t0 ? (tk - t0) / (t - t0) : 1.0;
      EXPECT_NEAR((s.tail(2) - ((1 - u) * values(t0) + u * values(t))).norm(), 0.0, 1e-15) << "sample " << k;
    });
  }
  EXPECT_EQ(seen, 12);
}

// An adaptive case's steps do not land on the grid; its history has one row per output time, and
// those rows are the scoring's reading: the largest distance of its point from reference.txt's is
// the row's max_reference_error.
TEST(Histories, AdaptiveRunHasOneRowPerOutputTimeReadAsTheScoringReadsIt) {
  const Problem p = with_reference("planar_pendulum");
  ASSERT_TRUE(p.reference_trajectory);
  ASSERT_EQ(p.measured_points.size(), 1u);
  ASSERT_EQ(p.measured_points[0].first, p.history_name);  // the reference measures the history point
  const Recorded r = record(p, "recursive", "aba-dopri5", 5.6e-7);
  const int K1 = grid_rows(p);
  ASSERT_EQ(K1, 1001);
  EXPECT_LT(r.score.stats.steps, K1 / 2) << "the case must step past several output times at once";
  const std::vector<std::string> fields{"t", "P1.x", "P1.y", "dE", "Phi", "Phi_qv"};
  EXPECT_EQ(history_fields(p), fields);
  ASSERT_EQ(r.history.columns, 6);
  ASSERT_EQ(r.history.rows(), static_cast<size_t>(K1));
  for (int k = 0; k < K1; ++k) EXPECT_EQ(r.history.row(k)[0], grid_time(p, k)) << "row " << k;
  EXPECT_EQ(r.history.row(K1 - 1)[0], p.run.end_time);

  // The points: a PointSampler fed the same states gives the same numbers, bit for bit.
  PointSampler sampler({p.history_point}, p.model.dim, p.run.output_interval, p.run.end_time);
  int matched = 0;
  for (const State& s : r.states)
    sampler.on_step(s.t, s.q, s.v, [&](int k, const Eigen::VectorXd& x) {
      matched += x[0] == r.history.row(k)[1] && x[1] == r.history.row(k)[2];
    });
  EXPECT_EQ(matched, K1);

  // Against the reference on the same grid: the scoring's figure, recomputed from the rows.
  const ReferenceTrajectory& ref = *p.reference_trajectory;
  double worst = 0.0;
  for (int k = 0; k < K1; ++k)
    worst = std::max(worst, std::hypot(r.history.row(k)[1] - ref.x(k, 0), r.history.row(k)[2] - ref.x(k, 1)));
  EXPECT_EQ(worst, r.score.max_reference_error);
  EXPECT_GT(worst, 0.0);

  // dE, |Phi|, |Phi_q v|: linear between the states around each output time, never beyond the
  // run's maxima over its steps.
  NaturalCoordinates nat(p.model);
  const double e0 = nat.energy(r.states.front().q, r.states.front().v);
  Eigen::VectorXd phi(nat.nc());
  auto drift = [&](const State& s) { return nat.energy(s.q, s.v) - e0; };
  auto phi_norm = [&](const State& s) { return nat.Phi(s.q, phi), phi.norm(); };
  auto phi_v_norm = [&](const State& s) { return nat.Phi_q_times(s.q, s.v, phi), phi.norm(); };
  for (int k = 0; k < K1; ++k) {
    const double t = grid_time(p, k), *h = r.history.row(k);
    EXPECT_NEAR(h[3], between_states(r.states, t, drift), 1e-12 * r.score.max_energy_drift) << "t = " << t;
    EXPECT_NEAR(h[4], between_states(r.states, t, phi_norm), 1e-12 * r.score.max_position_violation + 1e-300) << "t = " << t;
    EXPECT_NEAR(h[5], between_states(r.states, t, phi_v_norm), 1e-12 * r.score.max_velocity_violation + 1e-300) << "t = " << t;
    EXPECT_LE(std::abs(h[3]), r.score.max_energy_drift);
  }
}

// The fields header parses; the text holds the rows to its printed digits; a sweep's partial
// carries the history bit for bit.
TEST(Histories, TextAndPartialRoundTrip) {
  const Problem p = with_reference("planar_pendulum");
  CaseOptions options;
  options.tolerance = 5.6e-7;
  options.timed = false;
  BenchReport report;
  report.problem = &p;
  const Formulation& recursive = *Registry::instance().find("recursive");
  const std::vector<IntegratorInfo> integrators = recursive.integrators();
  const auto aba = std::find_if(integrators.begin(), integrators.end(), [](const IntegratorInfo& i) { return i.name == "aba-dopri5"; });
  ASSERT_NE(aba, integrators.end());
  report.rows.push_back(run_case(p, recursive, *aba, options));
  const CaseResult& row = report.rows.front();
  ASSERT_EQ(row.status, CaseStatus::kPass) << row.message;
  ASSERT_EQ(row.history.rows(), static_cast<size_t>(grid_rows(p)));

  const Parsed text = parse(history_text(report, row));
  EXPECT_EQ(text.fields, history_fields(p));
  EXPECT_NE(std::find(text.comments.begin(), text.comments.end(), "# units: s m m J m m/s"), text.comments.end());
  EXPECT_EQ(text.comments.front(), "# planar_pendulum recursive/aba-dopri5 @given tol 5.6e-07");
  ASSERT_EQ(text.rows.size(), row.history.rows());
  for (size_t i = 0; i < text.rows.size(); ++i) {
    ASSERT_EQ(text.rows[i].size(), text.fields.size()) << "row " << i;
    for (size_t c = 0; c < 3; ++c) EXPECT_NEAR(text.rows[i][c], row.history.row(i)[c], 1e-12) << "row " << i;  // m, s
    for (size_t c = 3; c < 6; ++c)  // 7 significant digits
      EXPECT_NEAR(text.rows[i][c], row.history.row(i)[c], 5e-7 * std::abs(row.history.row(i)[c])) << "row " << i;
  }

  namespace fs = std::filesystem;
  const fs::path file = fs::temp_directory_path() / ("mbs_history_partial_" + std::to_string(::getpid()) + ".yaml");
  write_partial(report, row.case_name(), SweepFingerprint{}, file.string());
  const Partial back = read_partial(file.string());
  fs::remove(file);
  ASSERT_EQ(back.rows.size(), 1u);
  EXPECT_EQ(back.rows[0].history.columns, row.history.columns);
  EXPECT_EQ(back.rows[0].history.values, row.history.values);
}

// Spatial histories carry z: the flyball governor's slider moves along the shaft (world z), its
// x and y stay on the axis.
TEST(Histories, SpatialProblemRecordsZ) {
  Problem p = load_problem(MBS_SOURCE_DIR "/problems/flyball_governor.yaml");
  p.run.end_time = 1.0;  // s: the slider's first rise
  const std::vector<std::string> fields{"t", "slider.x", "slider.y", "slider.z", "rod_AC.C.x", "rod_AC.C.y", "rod_AC.C.z",
                                        "dE", "Phi", "Phi_qv"};
  ASSERT_EQ(history_fields(p), fields);
  const Recorded r = record(p, "recursive", "crba-dopri5", 1e-8);
  ASSERT_EQ(r.history.rows(), static_cast<size_t>(grid_rows(p)));
  const Eigen::Vector3d axis_point = p.history_point.eval(p.model.initial_q());
  double off_axis = 0.0, rise = 0.0;
  for (size_t i = 0; i < r.history.rows(); ++i) {
    const double* h = r.history.row(i);
    off_axis = std::max(off_axis, std::hypot(h[1] - axis_point.x(), h[2] - axis_point.y()));
    rise = std::max(rise, std::abs(h[3] - axis_point.z()));
  }
  EXPECT_LT(off_axis, 1e-9);  // m
  EXPECT_GT(rise, 1e6 * off_axis);
  // The last row is the last state's point (t_end is reached by a step).
  const Eigen::Vector3d last = p.history_point.eval(r.states.back().q);
  const double* h = r.history.row(r.history.rows() - 1);
  EXPECT_EQ(h[0], p.run.end_time);
  EXPECT_NEAR(h[3], last.z(), 1e-14);
}

// reference.txt: the exact solution at the output times, to round-off, on the histories' grid.
TEST(Histories, ReferenceFileIsTheExactSolutionOnTheGrid) {
  for (const char* name : {"planar_pendulum", "pendulum_large_amplitude_spatial"}) {
    SCOPED_TRACE(name);
    const Problem p = with_reference(name);
    const Parsed ref = parse(reference_text(p));
    ASSERT_GE(ref.comments.size(), 2u);
    EXPECT_EQ(ref.comments[1].rfind("# reference: exact  simple_pendulum_exact: ", 0), 0u) << ref.comments[1];
    const std::string P = p.measured_points.front().first;
    std::vector<std::string> fields{"t", P + ".x", P + ".y"};
    if (p.model.dim == 3) fields.push_back(P + ".z");
    EXPECT_EQ(ref.fields, fields);
    const SimplePendulumExact exact = SimplePendulumExact::from_problem(p);
    ASSERT_EQ(ref.rows.size(), static_cast<size_t>(grid_rows(p)));
    for (size_t k = 0; k < ref.rows.size(); ++k) {
      ASSERT_EQ(ref.rows[k].size(), fields.size());
      EXPECT_NEAR(ref.rows[k][0], grid_time(p, static_cast<int>(k)), 1e-12 * p.run.end_time);  // printed with 12 digits
      const Eigen::VectorXd x = exact.position(grid_time(p, static_cast<int>(k)));
      for (int c = 0; c < p.model.dim; ++c) EXPECT_NEAR(ref.rows[k][1 + c], x[c], 1e-15) << "t = " << ref.rows[k][0];
    }
  }
}

// A converged reference says so, with its uncertainty.
TEST(Histories, ReferenceFileNamesAConvergedReference) {
  Problem p = load_problem(MBS_SOURCE_DIR "/problems/bricard.yaml");
  auto ref = std::make_shared<ReferenceTrajectory>();
  ref->kind = "converged";
  ref->dim = 3;
  ref->dt = 0.5;
  ref->t_end = 1.2;
  ref->x = Eigen::MatrixXd::Random(4, 3);
  ref->uncertainty = 2.5e-7;
  ref->provenance = "two cases";
  p.reference_trajectory = ref;
  const Parsed text = parse(reference_text(p));
  EXPECT_EQ(text.comments[1], "# reference: converged  converged: two cases");
  EXPECT_EQ(text.fields, (std::vector<std::string>{"t", "rod2.P3.x", "rod2.P3.y", "rod2.P3.z"}));
  ASSERT_EQ(text.rows.size(), 4u);
  EXPECT_EQ(text.rows[3][0], 1.2);  // t_end, off the grid
  for (int k = 0; k < 4; ++k)
    for (int c = 0; c < 3; ++c) EXPECT_EQ(text.rows[k][1 + c], ref->x(k, c));  // 17 digits: every bit
}

// Contacts: the total energy column lets a reader see the drift between impacts that the rule
// judges, read off the rows outside the steps that hold an impact.
TEST(Histories, TotalEnergyShowsTheDriftBetweenImpacts) {
  const Problem p = load_problem(MBS_SOURCE_DIR "/problems/double_pendulum_wall.yaml");
  ASSERT_EQ(history_fields(p).back(), "E");
  const Recorded r = record(p, "minimal", "dopri5", 1e-6);
  ASSERT_GE(r.score.impacts.size(), 2u);
  ASSERT_EQ(r.history.rows(), static_cast<size_t>(grid_rows(p)));
  NaturalCoordinates nat(p.model);
  const double e0 = nat.energy(r.states.front().q, r.states.front().v) - p.energy_datum;
  const int E = r.history.columns - 1;
  double seen = 0.0;
  for (size_t i = 0; i < r.history.rows(); ++i) {
    const double t = r.history.row(i)[0];
    double e_ref = e0, impact_step_start = -1.0;
    for (const Impact& im : r.score.impacts) {
      if (im.t <= t) e_ref = im.energy_after;
      for (size_t s = 1; s < r.states.size(); ++s)  // the step that ends at the impact
        if (r.states[s].t == im.t && r.states[s - 1].t < t && t < im.t) impact_step_start = r.states[s - 1].t;
    }
    if (impact_step_start >= 0.0) continue;
    seen = std::max(seen, std::abs(r.history.row(i)[E] - e_ref));
  }
  const double rule = r.score.max_energy_drift_between_impacts;
  EXPECT_LE(seen, rule * (1 + 1e-12));
  // Output times are close enough together for the rows to show most of it.
  EXPECT_GT(seen, 0.5 * rule) << "drift between impacts " << rule << " J, on the rows " << seen << " J";
}

// Linearization problems: the exact spectrum in summary.json, +-i sqrt(g/l) for each transverse
// direction.
TEST(Histories, SummaryCarriesTheExactEigenvalues) {
  const Problem p = load_problem(MBS_SOURCE_DIR "/problems/pendulum_3d_linearization.yaml");
  BenchReport report;
  report.problem = &p;
  const YAML::Node j = YAML::Load(to_json(report));
  const YAML::Node ev = j["reference_eigenvalues"];
  ASSERT_TRUE(ev && ev.IsSequence());
  ASSERT_EQ(ev.size(), 4u);
  const double l = p.history_point.eval(p.model.initial_q()).norm();  // pivot at the origin
  const double w = std::sqrt(p.model.gravity.norm() / l);
  int up = 0;
  for (const YAML::Node& e : ev) {
    ASSERT_EQ(e.size(), 2u);
    EXPECT_EQ(e[0].as<double>(), 0.0);
    EXPECT_NEAR(std::abs(e[1].as<double>()), w, 1e-15);
    up += e[1].as<double>() > 0;
  }
  EXPECT_EQ(up, 2);
  // Time-integration problems have none.
  const Problem q = load_problem(MBS_SOURCE_DIR "/problems/planar_pendulum.yaml");
  report.problem = &q;
  EXPECT_FALSE(YAML::Load(to_json(report))["reference_eigenvalues"]);
}

}  // namespace
}  // namespace mbs
