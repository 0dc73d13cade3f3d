// The harness side of linearization problems: the problem file, the eigenvalue error as the spec
// defines it, and a row for every outcome (pass, fail, unsupported, error), with a stand-in
// formulation so that these hold whatever the registered formulations do.
#include <gtest/gtest.h>

#include <cmath>

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
  explicit Fixed(Linearization l, bool fail) : l_(std::move(l)), fail_(fail) {}
  const Linearization& linearize() override {
    if (fail_) throw SolverError("not an equilibrium");
    return l_;
  }

 private:
  Linearization l_;
  bool fail_;
};

class StandIn final : public Formulation {
 public:
  StandIn(double im, std::string why, bool fail) : im_(im), why_(std::move(why)), fail_(fail) {}
  std::string name() const override { return "stand-in"; }
  std::string description() const override { return "test"; }
  std::vector<IntegratorInfo> integrators() const override { return {}; }
  Accepts accepts() const override { return {{ElementRole::kJoint}, {}}; }
  std::unique_ptr<Simulator> create(const Model&, const std::string&, double) const override { return nullptr; }
  std::string linearization_unsupported_reason(const Model&) const override { return why_; }
  std::unique_ptr<Linearizer> create_linearizer(const Model&) const override {
    Linearization l;
    l.coordinates = "x, y";
    l.rule = "given";
    l.eigenvalues = {{{0, im_}, true, true, ""}, {{0, -im_}, true, true, ""}, {{0, 0}, false, false, "infinite"}};
    return std::make_unique<Fixed>(l, fail_);
  }

 private:
  double im_;
  std::string why_;
  bool fail_;
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

}  // namespace
}  // namespace mbs
