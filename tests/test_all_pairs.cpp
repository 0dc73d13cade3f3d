// Every (problem, case) pair ends in a row with a status and, unless it passed, a reason: never a
// crash. Each problem file in problems/ is run by every registered case at the case's loosest
// setting and at a second one (no tuning: that is the regression tests' job): the setting at which
// the committed results (results/<problem>/summary.json) show the case passing, where no solver may
// stop, else a moderate one (not for an engine's cases, below). Linearization problems run through
// their linearizer. Where a regression test (tests/CMakeLists.txt) re-runs the committed settings in
// the same ctest stage, the committed pass is left to it (MBS_COMMITTED_PASSES_RERUN); the sanitized
// stage, which skips the regression tests, runs it here.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>

#include "core/natural_coordinates.hpp"
#include "run/bench_case.hpp"
#include "run/linearization_case.hpp"
#include "support/cases.hpp"

namespace mbs {
namespace {

std::vector<std::string> problem_files() {
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(MBS_SOURCE_DIR "/problems"))
    if (e.path().extension() == ".yaml") files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  return files;
}

TEST(ProblemFiles, TheSeedsAndTheIFToMMProblemsAreThere) {
  EXPECT_GE(problem_files().size(), 6u);  // the five seeds and the IFToMM problems added to them
}

// The settings at which the committed results show a case passing ("formulation/integrator").
std::map<std::string, double> committed_passing_settings(const std::string& problem) {
  std::map<std::string, double> out;
  const std::string file = MBS_SOURCE_DIR "/results/" + problem + "/summary.json";
  if (!std::filesystem::exists(file)) return out;
  for (const YAML::Node& r : YAML::LoadFile(file)["rows"])  // JSON is a subset of YAML
    if (r["status"].as<std::string>() == "pass" && (!r["run"] || r["run"].as<std::string>() == "tuned") &&
        r["setting"] && !r["setting"].IsNull())
      out[r["formulation"].as<std::string>() + "/" + r["integrator"].as<std::string>()] = r["setting"].as<double>();
  return out;
}

// 1/s: the fastest rate of the force elements at the initial state, max over coordinates of
// |dQ/dv|_ii / M_ii (damping) and sqrt(|dQ/dq|_ii / M_ii) (stiffness); 0 without force elements.
double fastest_force_rate(const Model& model) {
  const NaturalCoordinates nat(model);
  if (!nat.has_force_elements()) return 0.0;
  const Eigen::VectorXd q = model.initial_q(), v = model.initial_v();
  Eigen::MatrixXd dQ_dq = Eigen::MatrixXd::Zero(nat.nq(), nat.nq()), dQ_dv = dQ_dq;
  nat.add_Q_jacobians(q, v, dQ_dq, dQ_dv);
  double rate = 0.0;
  for (int i = 0; i < nat.nq(); ++i)
    rate = std::max({rate, std::abs(dQ_dv(i, i)) / nat.M_diag()(i), std::sqrt(std::abs(dQ_dq(i, i)) / nat.M_diag()(i))});
  return rate;
}

// s: wall-clock budget of a run that only has to end in a status (the slow ones, such as a large
// model's moderate setting over its whole run, then end as `error` for the budget, with that reason).
constexpr double kStatusOnlyBudget = 1.0;

// One test per problem file: ctest runs them in parallel, each under its own time limit, and a
// failure names its problem.
class AllPairs : public ::testing::TestWithParam<std::string> {};

TEST_P(AllPairs, EveryCaseEndsInAStatusWithItsReason) {
  Problem p = load_problem(GetParam());
  // A stiff problem's explicit runs take as many steps as its fastest time scale fits into the run
  // (stability, not accuracy): the run is cut to 1e4 of those, enough for its stiff transient.
  if (const double rate = fastest_force_rate(p.model); rate * p.run.end_time > 1e4) p.run.end_time = 1e4 / rate;
  const std::map<std::string, double> passing = committed_passing_settings(p.name);
  for (const testing::Case& c : testing::all_cases()) {
    SCOPED_TRACE(p.name + " " + c.name());
    if (p.analysis) {
      Problem quick = p;
      quick.analysis->repetitions = 10;
      const CaseResult row = run_linearization_case(quick, *c.formulation);
      EXPECT_TRUE(row.status == CaseStatus::kPass || !row.message.empty()) << row.status;
      continue;
    }
    // Without a committed pass, a moderate setting: a fixed step no longer than a hundredth of the run.
    const auto committed = passing.find(c.name());
    double second = std::sqrt(c.info.loosest * c.info.tightest) * 10;
    if (c.info.kind == SettingKind::kFixedStep) second = std::min(second, p.run.end_time / 100);
    if (committed != passing.end()) second = committed->second;
#ifdef MBS_COMMITTED_PASSES_RERUN
    bool second_run = committed == passing.end();
#else
    bool second_run = true;
#endif
    // An engine's adapter takes one path at every setting (the model mapped, the engine's run, its
    // failures as statuses); the moderate setting would only exercise the engine's own solvers,
    // which the committed results judge. Its cases run at the loosest setting and a committed pass.
    if (c.engine() && committed == passing.end()) second_run = false;
    for (double setting : {c.info.loosest, second}) {
      if (setting == second && !second_run) continue;
      const bool must_run = setting == second && committed != passing.end();
      CaseOptions o;
      o.timed = false;  // statuses, not speed: the ten runs of a timing would add nothing
      // A run that only has to end in a status may also end for its budget (a status with its reason).
      if (!must_run) o.timeout_s = kStatusOnlyBudget;
      (c.info.kind == SettingKind::kFixedStep ? o.step : o.tolerance) = setting;
      const CaseResult row = run_case(p, *c.formulation, c.info, o);
      EXPECT_TRUE(row.status == CaseStatus::kPass || !row.message.empty()) << row.status;
      // Where the committed results passed, no solver may stop: an error there is a bug.
      if (must_run) {
        EXPECT_NE(row.status, CaseStatus::kError) << "at " << setting << ": " << row.message;
      }
    }
  }
}

std::string problem_name(const ::testing::TestParamInfo<std::string>& info) {
  return std::filesystem::path(info.param).stem().string();
}

INSTANTIATE_TEST_SUITE_P(Problems, AllPairs, ::testing::ValuesIn(problem_files()), problem_name);

}  // namespace
}  // namespace mbs
