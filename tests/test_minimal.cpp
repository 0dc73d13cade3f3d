// Formulation "minimal" beyond the single pendulum: a planar three-link chain (dynamic-size path)
// agrees with the natural-coordinate alm-index3 at small steps, and its loop allocates nothing.
#include <gtest/gtest.h>

#include "core/formulation.hpp"
#include "core/natural_coordinates.hpp"
#include "support/alloc_counter.hpp"
#include "support/models.hpp"

namespace mbs {
namespace {

// Ground - A - B - C, unequal links and masses, released from rest off the vertical.
Model chain() {
  const double L[3] = {1.0, 0.7, 0.5}, mass[3] = {1.0, 0.6, 0.3}, angle[3] = {0.6, 1.1, -0.4};  // rad from -y
  std::vector<testing::ChainLink> links;
  Eigen::Vector3d r = Eigen::Vector3d::Zero();
  for (int i = 0; i < 3; ++i) {
    r += L[i] * Eigen::Vector3d(std::sin(angle[i]), -std::cos(angle[i]), 0.0);
    links.push_back({mass[i], r});
  }
  return testing::chain_model(2, links);
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
