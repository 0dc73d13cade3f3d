// Formulation "minimal" beyond the single pendulum: a planar three-link chain (dynamic-size path)
// agrees with the natural-coordinate alm-index3 at small steps, and its loop allocates nothing.
#include <gtest/gtest.h>

#include "core/formulation.hpp"
#include "core/natural_coordinates.hpp"
#include "support/alloc_counter.hpp"

namespace mbs {
namespace {

// Ground - A - B - C, unequal links and masses, released from rest off the vertical.
Model chain() {
  Model m;
  m.dim = 2;
  m.basis = Eigen::Matrix3d::Identity().leftCols(2);
  m.gravity = Eigen::Vector2d(0.0, -9.81);
  const double L[3] = {1.0, 0.7, 0.5}, mass[3] = {1.0, 0.6, 0.3}, angle[3] = {0.6, 1.1, -0.4};  // rad from -y
  Eigen::Vector2d r = Eigen::Vector2d::Zero();
  for (int i = 0; i < 3; ++i) {
    r += L[i] * Eigen::Vector2d(std::sin(angle[i]), -std::cos(angle[i]));
    m.points.push_back({std::string(1, 'A' + i), mass[i], r, Eigen::Vector2d::Zero()});
    m.rods.push_back({"rod" + std::to_string(i), i == 0 ? kGround : i - 1, i, Eigen::Vector2d::Zero(), L[i]});
  }
  return m;
}

class FinalState final : public StepObserver {
 public:
  void on_step(double, const Eigen::VectorXd& q, const Eigen::VectorXd& v) override {
    this->q = q;
    this->v = v;
  }
  Eigen::VectorXd q, v;
};

TEST(Minimal, ThreeLinkChainAgreesWithTheAugmentedLagrangian) {
  const Model m = chain();
  const NaturalCoordinates nat(m);
  FinalState a, b;
  // RK4 at 1e-4 s errs by ~1e-12 m over 1 s; the trapezoidal rule at 1e-4 s by ~1e-6 m (second order).
  Registry::instance().find("minimal")->create(m, "rk4", 1e-4)->run(1.0, &a);
  Registry::instance().find("alm-index3")->create(m, "trapezoidal", 1e-4)->run(1.0, &b);
  EXPECT_LT((a.q - b.q).cwiseAbs().maxCoeff(), 1e-4);
  // And RK4 conserves the chain's energy to its own order.
  EXPECT_NEAR(nat.energy(a.q, a.v), nat.energy(m.initial_q(), m.initial_v()), 1e-8);
}

TEST(Minimal, DynamicSizePathAllocatesNothing) {
  MBS_SKIP_WITHOUT_ALLOCATION_COUNTING();
  const Model m = chain();
  for (const char* integrator : {"rk4", "dopri5", "fehlberg8"}) {
    auto sim = Registry::instance().find("minimal")->create(m, integrator, std::string(integrator) == "rk4" ? 1e-3 : 1e-8);
    sim->run(1.0, nullptr);  // warm-up
    EXPECT_EQ(testing::allocations_during([&] { sim->run(1.0, nullptr); }), 0) << integrator;
  }
}

}  // namespace
}  // namespace mbs
