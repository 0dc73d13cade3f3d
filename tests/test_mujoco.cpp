// The MuJoCo adapter (formulations/mujoco): closed-form motions within the integrators' error, the
// state mapping's round trip (natural coordinates -> qpos, qvel -> natural coordinates), the cases
// and what the adapter refuses (the checks the fixed-step engines share: support/engine_suite.hpp).
// Without libmujoco-dev, every model is `unsupported` with "engine not built".
#include <gtest/gtest.h>

#include "core/formulation.hpp"
#include "support/engine_suite.hpp"

namespace mbs {
namespace {

const Formulation& mujoco() { return *Registry::instance().find("mujoco"); }

#define MBS_NEED_MUJOCO() \
  if (!testing::engine_built(mujoco())) GTEST_SKIP() << "libmujoco-dev was not found when CMake configured"

// A free point under gravity (two slide joints): exact for RK4; semi-implicit Euler's h g t / 2
// offset for euler and for the implicit integrator, which differs from it only by velocity-dependent
// forces (none here).
TEST(Mujoco, FreeFallFollowsEachMethodsClosedForm) {
  MBS_NEED_MUJOCO();
  testing::expect_free_fall(mujoco(), Eigen::Vector2d(1.5, 4.0), {"rk4"}, {"euler", "implicit"});
}

TEST(Mujoco, Rk4PendulumPeriodWithinItsPhaseError) {
  MBS_NEED_MUJOCO();
  testing::expect_rk4_pendulum_period(mujoco(), "rk4", 1e-15);
}

// Exact for every integrator: MuJoCo turns a free joint's quaternion by the exact rotation of
// omega h.
TEST(Mujoco, SpinAboutAPrincipalAxisIsExact) {
  MBS_NEED_MUJOCO();
  testing::expect_exact_principal_spin(mujoco(), {"euler", "rk4", "implicit"});
}

// Natural coordinates -> qpos0 (the initial configuration by construction) and qvel (least squares
// through the bodies' velocities) -> natural coordinates again: a rod is a hinge (planar) or a ball
// (spatial), a free rigid body two slides and a hinge (planar) or a free joint (spatial).
TEST(Mujoco, StateMappingRoundTripIsExact) {
  MBS_NEED_MUJOCO();
  testing::expect_round_trips(mujoco(), "rk4");
}

// MuJoCo 2.2.2's integrators (mjtIntegrator), each a fixed-step case; the first-order two are
// controls on the benchmark's energy rules.
TEST(Mujoco, CasesAreMujocosIntegrators) {
  testing::expect_fixed_step_cases(mujoco(), {"euler", "rk4", "implicit"}, "rk4");
}

// A loop would be a soft constraint in MuJoCo.
TEST(Mujoco, RefusalsSayWhy) {
  MBS_NEED_MUJOCO();
  testing::expect_refusals(mujoco(), "soft");
}

TEST(Mujoco, EveryModelIsUnsupportedWhenTheEngineIsNotBuilt) {
  if (testing::engine_built(mujoco())) GTEST_SKIP() << "the adapter is built";
  EXPECT_NE(mujoco().unsupported_reason(testing::problem_file("bricard").model).find("engine not built"),
            std::string::npos);
}

}  // namespace
}  // namespace mbs
