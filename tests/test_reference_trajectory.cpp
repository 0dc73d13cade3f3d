// References that give positions in time: the sampler that reads every run at the same output
// times, the reference error of a row against an exact solution (at the method's order), and the
// converged reference: computed from two formulations, stored, read back, refused when stale.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <iterator>
#include <sstream>

#include "core/cancellation.hpp"
#include "references/converged.hpp"
#include "run/point_sampler.hpp"
#include "run/reference_setup.hpp"
#include "run/scoring.hpp"

namespace mbs {
namespace {

// A point moving on a cubic in time is read exactly (Hermite cubic), whatever the steps.
TEST(PointSampler, ReadsACubicMotionExactlyBetweenUnevenSteps) {
  Combo point;
  point.c = Combo::Small::Zero(2);
  point.add(0, 1.0);
  const double dt = 0.1, t_end = 1.05;
  PointSampler sampler({point}, 2, dt, t_end);
  ASSERT_EQ(sampler.samples(), 12);  // 0, 0.1, ..., 1.0, and 1.05
  auto x = [](double t) { return Eigen::Vector2d(1 + 2 * t - 3 * t * t + 0.5 * t * t * t, -t * t * t); };
  auto xd = [](double t) { return Eigen::Vector2d(2 - 6 * t + 1.5 * t * t, -3 * t * t); };
  std::vector<double> steps{0.0, 0.013, 0.31, 0.32, 0.7, 0.95, 1.05};
  std::vector<int> seen;
  for (double t : steps)
    sampler.on_step(t, x(t), xd(t), [&](int k, const Eigen::VectorXd& p) {
      seen.push_back(k);
      EXPECT_NEAR((p - x(sampler.time(k))).norm(), 0.0, 1e-14) << "sample " << k;
    });
  ASSERT_EQ(seen.size(), 12u);
  for (int k = 0; k < 12; ++k) EXPECT_EQ(seen[k], k);
  EXPECT_DOUBLE_EQ(sampler.time(11), 1.05);
}

Problem planar_pendulum() {
  Problem p = load_problem(MBS_SOURCE_DIR "/problems/planar_pendulum.yaml");
  attach_reference(p, ReferenceOptions{});
  return p;
}

Score run(const Problem& p, const std::string& formulation, const std::string& integrator, double setting) {
  ScoringObserver observer(p, false);
  const auto sim = Registry::instance().find(formulation)->create(p.model, integrator, setting);
  return score_run(p, *sim, observer);
}

// Against the exact solution, rk4's reference error falls as h^4 (interpolation included: it is
// O(h^4) too), and the final reference error is the final position error.
TEST(ReferenceError, ExactPendulumErrorFallsAtTheMethodsOrder) {
  const Problem p = planar_pendulum();
  ASSERT_TRUE(p.reference_trajectory);
  EXPECT_EQ(p.reference_trajectory->x.rows(), 1001);
  const Score coarse = run(p, "minimal", "rk4", 0.02), fine = run(p, "minimal", "rk4", 0.01);
  ASSERT_TRUE(coarse.completed && fine.completed);
  const double ratio = coarse.max_reference_error / fine.max_reference_error;
  EXPECT_GT(ratio, 16.0 / 1.5);
  EXPECT_LT(ratio, 16.0 * 1.5);
  EXPECT_NEAR(fine.final_reference_error, fine.final_position_error, 1e-12);
  EXPECT_GE(fine.max_reference_error, fine.final_reference_error);
}

// The planar pendulum under a converged reference instead of its exact solution: the two cases
// agree far below the rule, and the reference itself is within that uncertainty of the exact one.
std::string converged_pendulum_text() {
  std::ifstream in(MBS_SOURCE_DIR "/problems/planar_pendulum.yaml");
  std::stringstream ss;
  ss << in.rdbuf();
  std::string text = ss.str();
  const size_t at = text.find("\nreference:");
  EXPECT_NE(at, std::string::npos);
  text = text.substr(0, at + 1);
  const std::string energy_rule = "metric: max_energy_drift ", energy_below = "below: 5.0e-5 ";
  const size_t rule = text.find(energy_rule), below = text.find(energy_below);
  EXPECT_TRUE(rule != std::string::npos && below != std::string::npos);
  text.replace(below, energy_below.size(), "below: 1.0e-4 ");
  text.replace(rule, energy_rule.size(), "metric: max_reference_error ");
  return text + R"(reference:
  kind: converged
  cases:
    - {case: minimal/rk4, step: 1.0e-3}
    - {case: projection/fehlberg8-fixed, step: 2.0e-3}
)";
}

TEST(ConvergedReference, TwoFormulationsAgreeAndMatchTheExactSolution) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "mbs_test_reference";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string file = (dir / "converged_pendulum.yaml").string();
  std::ofstream(file) << converged_pendulum_text();
  Problem p = load_problem(file);
  ASSERT_EQ(p.measured_points.size(), 1u);
  const ReferenceSetup setup = attach_reference(p, ReferenceOptions{dir.string(), false});
  EXPECT_TRUE(setup.computed);
  const ReferenceTrajectory& ref = *p.reference_trajectory;
  // Small fixed steps: the cubic Hermite reading between steps is O(h^4) too (an adaptive
  // 8th-order method at tol 1e-12 takes 0.03 s steps, and its reading is off by ~3e-6 m).
  EXPECT_GT(ref.uncertainty, 0.0);
  EXPECT_LT(ref.uncertainty * kReferenceMargin, p.rule.below);
  const Problem exact = planar_pendulum();
  EXPECT_LT((ref.x - exact.reference_trajectory->x).cwiseAbs().maxCoeff(), 1e-8);

  // Stored and read back bit for bit; kept through a comment's edit, refused once a value changes.
  const std::string path = converged_reference_path(dir.string(), p.name);
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream(path) << converged_reference_csv(p, ref);
  std::string why;
  const auto back = read_converged_reference(p, path, &why);
  ASSERT_TRUE(back) << why;
  EXPECT_EQ(back->x, ref.x);
  EXPECT_EQ(back->uncertainty, std::stod(fmt::format("{:.6e}", ref.uncertainty)));
  Problem again = load_problem(file);
  EXPECT_FALSE(attach_reference(again, ReferenceOptions{dir.string(), false}).computed);
  std::ofstream(file, std::ios::app) << "# an edit\n";
  EXPECT_TRUE(read_converged_reference(load_problem(file), path, &why)) << why;
  std::string text;
  {
    std::ifstream in(file);
    text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  ASSERT_NE(text.find("mass: 1.0"), std::string::npos);
  text.replace(text.find("mass: 1.0"), 9, "mass: 2.0");
  std::ofstream(file) << text;
  Problem edited = load_problem(file);
  EXPECT_FALSE(read_converged_reference(edited, path, &why));
  EXPECT_NE(why.find("another version"), std::string::npos) << why;
  std::filesystem::remove_all(dir);
}

TEST(ConvergedReference, CasesThatDisagreeAreRefusedWithTheirNumbers) {
  std::string text = converged_pendulum_text();
  text.replace(text.find("step: 2.0e-3"), 12, "step: 0.2");
  Problem p = load_problem_text(text, "coarse.yaml");
  try {
    attach_reference(p, ReferenceOptions{"/nonexistent", false});
    FAIL() << "accepted";
  } catch (const ProblemError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("coarse.yaml:"), std::string::npos) << what;
    EXPECT_NE(what.find("minimal/rk4 and projection/fehlberg8-fixed disagree by"), std::string::npos) << what;
    EXPECT_NE(what.find("not 100x below the rule's 0.0001 m"), std::string::npos) << what;
  }
}

// --timeout bounds each reference case: one that would take minutes (1e-7 s steps) ends within about
// a step of the budget with PreparationTimedOut, naming the case, and leaves no cancellation behind.
TEST(ConvergedReference, ACaseOverTheTimeoutEndsTheRunNamingIt) {
  std::string text = converged_pendulum_text();
  text.replace(text.find("step: 1.0e-3"), 12, "step: 1.0e-7");
  Problem p = load_problem_text(text, "slow.yaml");
  const auto start = std::chrono::steady_clock::now();
  try {
    attach_reference(p, ReferenceOptions{"/nonexistent", false, 0.2});
    FAIL() << "finished";
  } catch (const PreparationTimedOut& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("slow.yaml: computing the converged reference: case minimal/rk4 at step 1e-07 s ran out of "
                        "--timeout 0.2 s"),
              std::string::npos)
        << what;
  }
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 5.0);
  EXPECT_FALSE(cancellation_requested());
}

std::string error_of(const std::string& text) {
  try {
    Problem p = load_problem_text(text, "bad.yaml");
    attach_reference(p, ReferenceOptions{"/nonexistent", false});
  } catch (const ProblemError& e) {
    return e.what();
  }
  return "(accepted)";
}

std::string with_cases(const std::string& cases) {
  std::string text = converged_pendulum_text();
  return text.substr(0, text.find("  cases:")) + cases;
}

TEST(ConvergedReference, LoaderAndRegistryMessages) {
  EXPECT_EQ(error_of(with_cases("  cases:\n    - {case: minimal/rk4, step: 1.0e-3}\n")),
            "bad.yaml:51:5: reference.cases must list at least two cases of different formulations: their agreement is the "
            "reference's uncertainty");
  EXPECT_EQ(error_of(with_cases("  cases:\n    - {case: minimal/rk4, step: 1.0e-3}\n    - {case: minimal/dopri5, tol: 1.0e-9}\n")),
            "bad.yaml:52:14: reference cases minimal/rk4 and minimal/dopri5 are the same formulation: a converged reference "
            "needs independent formulations, whose agreement bounds its error");
  EXPECT_EQ(error_of(with_cases("  cases:\n    - {case: minimal/rk4, step: 1.0e-3, tol: 1.0e-9}\n    - {case: penalty/trapezoidal, step: 1.0e-3}\n")),
            "bad.yaml:51:46: reference case minimal/rk4: give a step or a tol, not both");
  EXPECT_EQ(error_of(with_cases("  cases:\n    - {case: minimal}\n    - {case: penalty/trapezoidal, step: 1.0e-3}\n")),
            "bad.yaml:51:14: reference case 'minimal' must be formulation/integrator");
  EXPECT_EQ(error_of(with_cases("  cases:\n    - {case: nope/rk4, step: 1.0e-3}\n    - {case: penalty/trapezoidal, step: 1.0e-3}\n"))
                .rfind("bad.yaml:51:14: reference case nope/rk4: unknown formulation 'nope' (known: ", 0),
            0u);
  EXPECT_EQ(error_of(with_cases("  cases:\n    - {case: minimal/rk4, tol: 1.0e-9}\n    - {case: penalty/trapezoidal, step: 1.0e-3}\n")),
            "bad.yaml:51:14: reference case minimal/rk4 is fixed-step: give its setting as step (s)");
  std::string no_reference = converged_pendulum_text();
  no_reference = no_reference.substr(0, no_reference.find("reference:"));
  EXPECT_NE(error_of(no_reference).find("metric max_reference_error needs a reference that gives positions in time"),
            std::string::npos);
}

}  // namespace
}  // namespace mbs
