// The Bullet adapter (formulations/bullet): closed-form motions within the integrators' error, the
// state mapping's round trip (natural coordinates -> joint positions and speeds -> natural
// coordinates), the direct case against the world's, the cases and what the adapter refuses (the
// checks the fixed-step engines share: support/engine_suite.hpp). Without libbullet-dev, every
// model is `unsupported` with "engine not built".
#include <gtest/gtest.h>

#include "core/formulation.hpp"
#include "support/engine_suite.hpp"

namespace mbs {
namespace {

const Formulation& bullet() { return *Registry::instance().find("bullet"); }

#define MBS_NEED_BULLET() \
  if (!testing::engine_built(bullet())) GTEST_SKIP() << "libbullet-dev was not found when CMake configured"

// A free point (a floating base) thrown at 150 m/s: beyond Bullet's default clamp of every
// coordinate speed (100), and Bullet's default damping (0.04) would slow it, so this also checks
// that both are off. Exact for RK4; semi-implicit Euler's h g t / 2 offset with or without the world.
TEST(Bullet, FreeFallFollowsEachMethodsClosedForm) {
  MBS_NEED_BULLET();
  testing::expect_free_fall(bullet(), Eigen::Vector2d(150.0, 4.0), {"rk4"}, {"euler", "direct-euler"});
}

// |Phi| within 4 ulps of the rod's length: the point's position is composed from Bullet's
// quaternions and offsets.
TEST(Bullet, Rk4PendulumPeriodWithinItsPhaseError) {
  MBS_NEED_BULLET();
  testing::expect_rk4_pendulum_period(bullet(), "rk4", 4 * 2.2e-16);
}

// The direct case calls what the world calls for a tree (gravity, the articulated-body algorithm
// with v += h a, then the positions), so both take the same states, to the last bit but for the
// order of additions: 1e-14 after 1000 steps of a spatial rod (a spherical joint).
TEST(Bullet, DirectStepIsTheWorldsStep) {
  MBS_NEED_BULLET();
  const Problem p = testing::problem_file("pendulum_large_amplitude_spatial");
  Eigen::VectorXd q[2], v[2];
  int k = 0;
  for (const char* integrator : {"euler", "direct-euler"}) {
    auto sim = bullet().create(p.model, integrator, 1e-3);
    testing::Monitor mon(p.model);
    sim->run(1.0, &mon);
    EXPECT_EQ(sim->stats().steps, 1000) << integrator;
    q[k] = mon.q_final;
    v[k++] = mon.v_final;
  }
  EXPECT_LT((q[0] - q[1]).cwiseAbs().maxCoeff(), 1e-14);
  EXPECT_LT((v[0] - v[1]).cwiseAbs().maxCoeff(), 1e-13);
}

// Exact for every case: Bullet turns a floating base's quaternion by the exact rotation of
// omega h, and the gyroscopic term vanishes about a principal axis.
TEST(Bullet, SpinAboutAPrincipalAxisIsExact) {
  MBS_NEED_BULLET();
  testing::expect_exact_principal_spin(bullet(), {"euler", "rk4", "direct-euler"});
}

// Natural coordinates -> joint positions 0 (the initial configuration by construction) and speeds
// (least squares through the bodies' velocities) -> natural coordinates again: a rod is a revolute
// joint (planar) or a spherical one (spatial), a free rigid body a floating base.
TEST(Bullet, StateMappingRoundTripIsExact) {
  MBS_NEED_BULLET();
  testing::expect_round_trips(bullet(), "rk4");
}

// The ways Bullet 3.24 steps a btMultiBody, each a fixed-step case; the first-order two are
// controls on the benchmark's energy rules.
TEST(Bullet, CasesAreBulletsWaysToStep) {
  testing::expect_fixed_step_cases(bullet(), {"euler", "rk4", "direct-euler"}, "rk4");
}

// A loop would be a sequential-impulse constraint in Bullet.
TEST(Bullet, RefusalsSayWhy) {
  MBS_NEED_BULLET();
  testing::expect_refusals(bullet(), "sequential-impulse");
}

TEST(Bullet, EveryModelIsUnsupportedWhenTheEngineIsNotBuilt) {
  if (testing::engine_built(bullet())) GTEST_SKIP() << "the adapter is built";
  EXPECT_NE(bullet().unsupported_reason(testing::problem_file("bricard").model).find("engine not built"),
            std::string::npos);
}

}  // namespace
}  // namespace mbs
