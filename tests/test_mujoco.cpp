// The MuJoCo adapter (formulations/mujoco): closed-form motions within the integrators' error, the
// state mapping's round trip (natural coordinates -> qpos, qvel -> natural coordinates), the cases,
// what the adapter refuses, and the linearization by mjd_transitionFD (closed-form spectra, the
// spins judged spurious, a non-equilibrium refused). Without libmujoco-dev, every model is
// `unsupported` with "engine not built".
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include "core/formulation.hpp"
#include "problem/problem.hpp"
#include "run/crossings.hpp"
#include "run/linearization_case.hpp"
#include "support/alloc_counter.hpp"
#include "support/linearization_text.hpp"
#include "support/models.hpp"
#include "support/monitor.hpp"
#include "support/engine_suite.hpp"
#include "support/round_trip.hpp"

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

// --- Linearization (mjd_transitionFD, semi-implicit Euler, s = (mu^1/2 - mu^-1/2) / h) -----------

// The error the adapter's linearization has by construction (formulations/mujoco/mujoco_model.cpp):
// no truncation in s (the inversion is exact for its integrator), the point inertia kPointInertia =
// 1e-9 m L^2 lowering each pendulum frequency omega by 5e-10 relative, and the centered differences
// (eps = 1e-6): omega^2 eps^2 / 6 from their truncation plus, at most, omega u / eps from rounding
// where positions of order 1 cancel (u = 1e-15, a few ulps).
double fd_bound(double omega) {
  const double eps = 1e-6, u = 1e-15;
  return 0.5e-9 * omega + omega * omega * eps * eps / 6 + omega * u / eps;
}

// The problem file's 3D pendulum: a ball joint (3 velocity coordinates, 6 eigenvalues), +-i sqrt(g/l)
// twice true within fd_bound each, the spin about the rod spurious, and the row passes the rule.
TEST(MujocoLinearization, Pendulum3dProblemWithinItsDifferencesError) {
  MBS_NEED_MUJOCO();
  const Problem p = testing::problem_file("pendulum_3d_linearization");
  ASSERT_EQ(mujoco().linearization_unsupported_reason(p.model), "");
  auto lin = mujoco().create_linearizer(p.model);
  const Linearization& r = lin->linearize();
  SCOPED_TRACE(testing::dump(r));
  ASSERT_EQ(r.eigenvalues.size(), 6u);
  int n_true = 0;
  for (const Eigenvalue& e : r.eigenvalues) n_true += e.is_true;
  EXPECT_EQ(n_true, 4);
  const double omega = std::sqrt(9.81 / 1.0);
  const double error = eigenvalue_error(r.eigenvalues, exact_pendulum_eigenvalues(p));
  EXPECT_LE(error, 2 * fd_bound(omega));  // the norm-2 of 4 errors
  std::printf("mujoco on pendulum_3d_linearization: eigenvalue error (2-norm) %.3g\n", error);
  // The spin: no stiffness, so at 0 but for the differences' error, far below the pendulum's.
  for (const Eigenvalue& e : r.eigenvalues) {
    if (!e.is_true) {
      EXPECT_LT(std::abs(e.s), 1e-2 * omega) << e.s;
    }
  }
  // M = m L^2 (1 + 1e-9) on the two rotations normal to the rod, 1e-9 m L^2 about it (ball axes along
  // the model's, the rod along z).
  ASSERT_EQ(r.terms.size(), 2u);
  EXPECT_EQ(r.terms[0].first, "A");
  EXPECT_EQ(r.terms[0].second.rows(), 6);
  EXPECT_EQ(r.terms[1].first, "M");
  EXPECT_NEAR(r.terms[1].second(0, 0), 1.0, 2e-9);
  EXPECT_NEAR(r.terms[1].second(1, 1), 1.0, 2e-9);
  EXPECT_NEAR(r.terms[1].second(2, 2), 1e-9, 1e-15);
  const CaseResult row = run_linearization_case(p, mujoco(), false);
  EXPECT_EQ(row.status, CaseStatus::kPass) << row.message;
}

// Two point masses on rods hanging along -y (spatial): omega^2 are the roots of
//   m1 l1 l2 w^4 - (m1 + m2) g (l1 + l2) w^2 + (m1 + m2) g^2 = 0,
// twice (two horizontal directions): 8 true eigenvalues, each within fd_bound of its omega, and the
// two spins (12 - 8) spurious.
TEST(MujocoLinearization, SpatialDoublePendulumClosedForm) {
  MBS_NEED_MUJOCO();
  testing::expect_double_pendulum(mujoco(), 12, 8, fd_bound);
}

// Off the equilibrium by an angle a the gravity force's residual is sin(a) / sqrt(2) of |g| |J_m|:
// 30 degrees and 1e-6 rad throw, 1e-10 rad (inside NaturalEquilibrium's 1e-8) does not.
TEST(MujocoLinearization, NotAnEquilibriumThrows) {
  MBS_NEED_MUJOCO();
  testing::expect_equilibrium_checked(mujoco());
}

// The harness times 10,000 calls: each starts from the initial configuration (mj_resetData), so a
// second call gives the first's result to the bit, and none allocates (all is sized at setup; MuJoCo
// differences on mjData's own stack).
TEST(MujocoLinearization, RepeatableAndAllocatesNothing) {
  MBS_NEED_MUJOCO();
  const Problem p = testing::problem_file("pendulum_3d_linearization");  // outlives the linearizer
  auto lin = mujoco().create_linearizer(p.model);
  const Linearization first = lin->linearize();  // a copy
  testing::expect_identical(first, lin->linearize());
  if (testing::allocation_counting_supported()) {
    EXPECT_EQ(testing::allocations_during([&] { lin->linearize(); }), 0);
  }
}

TEST(Mujoco, EveryModelIsUnsupportedWhenTheEngineIsNotBuilt) {
  if (testing::engine_built(mujoco())) GTEST_SKIP() << "the adapter is built";
  EXPECT_NE(mujoco().unsupported_reason(testing::problem_file("bricard").model).find("engine not built"), std::string::npos);
  EXPECT_NE(mujoco()
                .linearization_unsupported_reason(testing::problem_file("pendulum_3d_linearization").model)
                .find("engine not built"),
            std::string::npos);
}

}  // namespace
}  // namespace mbs
