// Quantities reported beside the rule: the angular momentum about an axis (from the natural
// coordinates, the same for every formulation) and the energy's rise above its running minimum.
#include <gtest/gtest.h>

#include "core/natural_coordinates.hpp"
#include "problem/problem.hpp"
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
  auto error_of = [](const std::string& text) {
    try {
      load_problem_text(text, "bad.yaml");
    } catch (const ProblemError& e) {
      return std::string(e.what());
    }
    return std::string("(accepted)");
  };
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
