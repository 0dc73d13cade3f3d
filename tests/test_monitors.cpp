// Quantities reported beside the rule: the angular momentum about an axis (from the natural
// coordinates, the same for every formulation) and the energy's rise above its running minimum.
#include <gtest/gtest.h>

#include "core/natural_coordinates.hpp"
#include "problem/problem.hpp"
#include "support/load_error.hpp"
#include "run/scoring.hpp"

namespace mbs {
namespace {

const std::string kSpinning = R"(name: spinning
space: spatial
gravity: [0.0, 0.0, 0.0]
bodies:
  - {name: box, kind: rigid_body, shape: {box: [0.2, 0.4, 0.6]}, density: 100.0, position: [1.0, 0.0, 0.0],
     velocity: [0.0, 2.0, 0.0], angular_velocity: [0.5, -1.0, 3.0]}
run: {end_time: 1.0}
score:
  rule: {metric: max_energy_drift, below: 1.0e-6}
  angular_momentum_about: {point: [0.0, 0.0, 0.0], axis: [0.0, 0.0, 2.0]}
  report: [max_angular_momentum_drift, max_energy_rise]
)";

std::string error_of(const std::string& text) { return testing::load_error(text); }

// H = m r x v + I omega for a box: the orbital and the spin parts, each in closed form.
TEST(AngularMomentum, ClosedFormForATranslatingSpinningBox) {
  const Problem p = load_problem_text(kSpinning, "spinning.yaml");
  ASSERT_TRUE(p.momentum_axis);
  EXPECT_EQ(p.momentum_axis->axis, Eigen::Vector3d::UnitZ());
  const NaturalCoordinates nat(p.model);
  const Eigen::VectorXd q = p.model.initial_q(), v = p.model.initial_v();
  const double m = 100.0 * 0.2 * 0.4 * 0.6;
  const Eigen::Vector3d I(m * (0.16 + 0.36) / 12, m * (0.04 + 0.36) / 12, m * (0.04 + 0.16) / 12);
  const Eigen::Vector3d w(0.5, -1.0, 3.0);
  const Eigen::Vector3d expected = m * Eigen::Vector3d(1, 0, 0).cross(Eigen::Vector3d(0, 2, 0)) + I.cwiseProduct(w);
  EXPECT_NEAR((nat.angular_momentum(q, v, Eigen::Vector3d::Zero()) - expected).norm(), 0.0, 1e-14);
  // About the centroid: the spin only.
  EXPECT_NEAR((nat.angular_momentum(q, v, Eigen::Vector3d(1, 0, 0)) - I.cwiseProduct(w)).norm(), 0.0, 1e-14);
}

TEST(AngularMomentum, LoaderMessages) {
  std::string t = kSpinning;
  t.replace(t.find("max_energy_rise"), 15, "max_energy_rice");
  EXPECT_EQ(error_of(t).rfind("bad.yaml:11:40: score.report: 'max_energy_rice' is not a metric (known: ", 0), 0u) << error_of(t);
  t = kSpinning;
  t.replace(t.find("  angular_momentum_about"), t.find("  report") - t.find("  angular_momentum_about"), "");
  EXPECT_EQ(error_of(t), "bad.yaml:10:12: metric max_angular_momentum_drift needs score.angular_momentum_about");
  t = kSpinning;
  t.replace(t.find("axis: [0.0, 0.0, 2.0]"), 21, "axis: [0.0, 0.0, 0.0]");
  EXPECT_EQ(error_of(t), "bad.yaml:10:58: score.angular_momentum_about.axis must not be zero");
}

}  // namespace
}  // namespace mbs

namespace mbs {
namespace {

// A bar hinged at its end, driven by a constant torque without gravity: theta(t) = theta0 +
// tau t^2 / (2 I_O). Over several turns the final angle is unwrapped along the run, and a relative
// angle to a body that turns with it is its constant offset.
const std::string kDriven = R"(name: driven
space: planar
gravity: [0.0, 0.0, 0.0]
bodies:
  - {name: bar, kind: rigid_body, mass: 2.0, inertia: 0.5, position: [0.5, 0.0, 0.0], points: {O: [-0.5, 0.0]}}
  - {name: tip, kind: rigid_body, mass: 1.0, inertia: 0.1, position: [1.5, 0.0, 0.0], points: {A: [-0.5, 0.0]}}
joints:
  - {name: pin, kind: revolute, a: ground, b: bar.O, at: [0.0, 0.0, 0.0]}
  - {name: weld, kind: fixed, a: bar, b: tip.A, at: [1.0, 0.0, 0.0]}
forces:
  - {name: motor, kind: torque, body: bar, torque: 3.0}
run:
  end_time: 4.0
  final_angles:
    - {name: beta, body: bar, initial: 0.25, published: 0.0}
    - {name: rel, body: tip, relative_to: bar, initial: 1.0, published: 1.0}
score:
  rule: {metric: max_energy_drift, below: 1.0e-6}
)";

TEST(FinalAngles, UnwrappedOverSeveralTurnsAgainstTheClosedForm) {
  const Problem p = load_problem_text(kDriven, "driven.yaml");
  ASSERT_EQ(p.run.final_angles.size(), 2u);
  // I_O: the bar (0.5 + 2 * 0.5^2) and the welded tip (0.1 + 1 * 1.5^2).
  const double I_O = 0.5 + 2.0 * 0.25 + 0.1 + 1.0 * 2.25, theta = 0.25 + 3.0 * 16.0 / (2 * I_O);
  ASSERT_GT(theta, 2 * M_PI);  // more than a turn: the unwrapping is exercised
  ScoringObserver observer(p, false);
  const auto sim = Registry::instance().find("projection")->create(p.model, "rk4", 1e-3);
  const Score s = score_run(p, *sim, observer);
  ASSERT_TRUE(s.completed) << s.error;
  ASSERT_EQ(s.final_angles.size(), 2u);
  EXPECT_NEAR(s.final_angles[0], theta, 1e-9);  // the motion is quadratic in t: rk4 is exact but for round-off
  EXPECT_NEAR(s.final_angles[1], 1.0, 1e-9);
}

TEST(FinalAngles, LoaderMessages) {
  std::string t = kDriven;
  t.replace(t.find("relative_to: bar"), 16, "relative_to: baz");
  EXPECT_EQ(error_of(t), "bad.yaml:16:43: final angle rel: 'baz' is not a rigid body");
  t = kSpinning;
  t.replace(t.find("run: {end_time: 1.0}"), 20, "run: {end_time: 1.0, final_angles: []}");
  EXPECT_EQ(error_of(t), "bad.yaml:7:36: run.final_angles are for planar problems (an angle about the plane's normal)");
}

}  // namespace
}  // namespace mbs
