// The harness side of linearization problems: the problem file, the eigenvalue error as the spec
// defines it, and a row for every outcome (pass, fail, unsupported, error), with a stand-in
// formulation so that these hold whatever the registered formulations do.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <thread>

#include "core/cancellation.hpp"
#include "run/linearization_case.hpp"

namespace mbs {
namespace {

const Problem& problem() {
  static const Problem p = load_problem(MBS_SOURCE_DIR "/problems/pendulum_3d_linearization.yaml");
  return p;
}

const double kW = std::sqrt(9.81 / 1.0);

TEST(LinearizationHarness, ProblemFileAndExactSpectrum) {
  const Problem& p = problem();
  ASSERT_TRUE(p.analysis.has_value());
  EXPECT_EQ(p.analysis->repetitions, 10000);
  const auto exact = exact_pendulum_eigenvalues(p);
  ASSERT_EQ(exact.size(), 4u);  // +-i w, twice: two degrees of freedom
  for (const auto& s : exact) EXPECT_NEAR(std::abs(s.imag()), kW, 1e-15);
  // Off the equilibrium: rejected with the reason.
  std::string text = R"(name: off
space: spatial
gravity: [0.0, 0.0, -9.81]
bodies: [{name: P, kind: point_mass, mass: 1.0, position: [0.6, 0.0, -0.8]}]
joints: [{name: rod, kind: rod, a: {ground: [0.0, 0.0, 0.0]}, b: {body: P}}]
analysis: {kind: linearization}
score: {rule: {metric: eigenvalue_error, below: 1.0e-6}}
reference: {kind: pendulum_linear, point: P, pivot: [0.0, 0.0, 0.0]}
)";
  try {
    load_problem_text(text, "off.yaml");
    ADD_FAILURE() << "accepted a configuration off the equilibrium";
  } catch (const ProblemError& e) {
    EXPECT_STREQ(e.what(), "off.yaml:8:19: pendulum_linear needs P at rest straight below the pivot (the equilibrium)");
  }
}

TEST(LinearizationHarness, EigenvalueErrorIsTheNorm2OverTrueEigenvalues) {
  const auto exact = exact_pendulum_eigenvalues(problem());
  auto ev = [](double re, double im, bool is_true, bool finite = true) { return Eigenvalue{{re, im}, finite, is_true, ""}; };
  // Two true eigenvalues (theta, phi description), a conjugate pair off by 3e-3 + 4e-3 i each:
  // paired with the exact ones of their sign, norm-2 of both differences.
  EXPECT_NEAR(eigenvalue_error({ev(3e-3, kW + 4e-3, true), ev(3e-3, -kW - 4e-3, true), ev(0, 0, false, false)}, exact),
              std::sqrt(2.0) * 5e-3, 1e-15);
  // A true eigenvalue without its conjugate: the judgement split a pair, no score.
  EXPECT_TRUE(std::isinf(eigenvalue_error({ev(0, kW, true), ev(0, -kW, false)}, exact)));
  // Spurious ones do not count, however large.
  EXPECT_NEAR(eigenvalue_error({ev(0, kW, true), ev(0, -kW, true), ev(0, 3e4, false), ev(0, -3e4, false)}, exact), 0.0, 1e-15);
  // No true eigenvalue, more true ones than exact, or an infinite one judged true: no score.
  EXPECT_TRUE(std::isinf(eigenvalue_error({ev(0, 3e4, false)}, exact)));
  std::vector<Eigenvalue> five(5, ev(0, kW, true));
  EXPECT_TRUE(std::isinf(eigenvalue_error(five, exact)));
  EXPECT_TRUE(std::isinf(eigenvalue_error({ev(0, 0, true, false)}, exact)));
}

// A stand-in formulation whose linearization is given.
class Fixed final : public Linearizer {
 public:
  Fixed(Linearization l, bool fail, std::chrono::milliseconds delay) : l_(std::move(l)), fail_(fail), delay_(delay) {}
  const Linearization& linearize() override {
    if (fail_) throw SolverError("not an equilibrium");
    std::this_thread::sleep_for(delay_);
    return l_;
  }

 private:
  Linearization l_;
  bool fail_;
  std::chrono::milliseconds delay_;
};

class StandIn final : public Formulation {
 public:
  // delay: each linearization's duration; endless_setup: a set-up that only the budget ends.
  StandIn(double im, std::string why, bool fail, std::chrono::milliseconds delay = {}, bool endless_setup = false)
      : im_(im), why_(std::move(why)), fail_(fail), delay_(delay), endless_setup_(endless_setup) {}
  std::string name() const override { return "stand-in"; }
  std::string description() const override { return "test"; }
  std::vector<IntegratorInfo> integrators() const override { return {}; }
  Accepts accepts() const override { return {{ElementRole::kJoint}, {}}; }
  std::unique_ptr<Simulator> create(const Model&, const std::string&, double) const override { return nullptr; }
  std::string linearization_unsupported_reason(const Model&) const override { return why_; }
  std::unique_ptr<Linearizer> create_linearizer(const Model&) const override {
    while (endless_setup_) {
      throw_if_cancelled("set-up");
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    Linearization l;
    l.coordinates = "x, y";
    l.rule = "given";
    l.eigenvalues = {{{0, im_}, true, true, ""}, {{0, -im_}, true, true, ""}, {{0, 0}, false, false, "infinite"}};
    return std::make_unique<Fixed>(l, fail_, delay_);
  }

 private:
  double im_;
  std::string why_;
  bool fail_;
  std::chrono::milliseconds delay_;
  bool endless_setup_;
};

TEST(LinearizationHarness, EveryOutcomeIsARow) {
  Problem p = problem();
  p.analysis->repetitions = 10;  // timing is not under test
  CaseResult pass = run_linearization_case(p, StandIn(kW, "", false));
  EXPECT_EQ(pass.status, CaseStatus::kPass) << pass.message;
  EXPECT_NEAR(pass.score.eigenvalue_error, 0.0, 1e-15);
  ASSERT_TRUE(pass.timing.has_value());
  EXPECT_GT(pass.timing->median_s, 0.0);
  EXPECT_EQ(pass.timing->calls_per_sample, 10);
  // bench --no-timing: the same row, scored once and not timed.
  CaseResult untimed = run_linearization_case(p, StandIn(kW, "", false), false);
  EXPECT_EQ(untimed.status, CaseStatus::kPass);
  EXPECT_EQ(untimed.score.eigenvalue_error, pass.score.eigenvalue_error);
  EXPECT_FALSE(untimed.timing.has_value());
  CaseResult fail = run_linearization_case(p, StandIn(kW + 1e-3, "", false));
  EXPECT_EQ(fail.status, CaseStatus::kFail);
  EXPECT_NEAR(fail.score.eigenvalue_error, std::sqrt(2.0) * 1e-3, 1e-12);
  CaseResult unsupported = run_linearization_case(p, StandIn(kW, "no angles for closed loops", false));
  EXPECT_EQ(unsupported.status, CaseStatus::kUnsupported);
  EXPECT_EQ(unsupported.message, "no angles for closed loops");
  CaseResult error = run_linearization_case(p, StandIn(kW, "", true));
  EXPECT_EQ(error.status, CaseStatus::kError);
  EXPECT_EQ(error.message, "not an equilibrium");
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// --timeout bounds a linearization row as it does a simulation row: a set-up that would never end,
// and a timing that would take 5 x 1000 x 2 ms = 10 s, end at the budget with the phase named.
TEST(LinearizationHarness, TimeoutBoundsSetUpAndTimingAndNamesThePhase) {
  Problem p = problem();
  p.analysis->repetitions = 1000;
  auto t0 = std::chrono::steady_clock::now();
  const CaseResult setup = run_linearization_case(p, StandIn(kW, "", false, {}, true), true, 0.3);
  EXPECT_LT(seconds_since(t0), 3.0);
  EXPECT_EQ(setup.status, CaseStatus::kError);
  EXPECT_EQ(setup.message.rfind("timed out in set-up after", 0), 0u) << setup.message;
  EXPECT_NE(setup.message.find("(--timeout 0.3)"), std::string::npos) << setup.message;

  t0 = std::chrono::steady_clock::now();
  const CaseResult timing = run_linearization_case(p, StandIn(kW, "", false, std::chrono::milliseconds(2)), true, 0.5);
  EXPECT_LT(seconds_since(t0), 4.0);
  EXPECT_EQ(timing.status, CaseStatus::kError);
  EXPECT_EQ(timing.message.rfind("timed out in timing after", 0), 0u) << timing.message;
  EXPECT_FALSE(timing.timing.has_value());
  EXPECT_FALSE(cancellation_requested());  // lifted for the next case

  // Within its budget the same row passes and is timed.
  p.analysis->repetitions = 2;
  const CaseResult within = run_linearization_case(p, StandIn(kW, "", false, std::chrono::milliseconds(1)), true, 30.0);
  EXPECT_EQ(within.status, CaseStatus::kPass) << within.message;
  EXPECT_TRUE(within.timing.has_value());
}

}  // namespace
}  // namespace mbs
