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
#include "support/round_trip.hpp"

namespace mbs {
namespace {

const Formulation& mujoco() { return *Registry::instance().find("mujoco"); }

Problem problem(const std::string& name) { return load_problem(MBS_SOURCE_DIR "/problems/" + name + ".yaml"); }

// Without libmujoco-dev the stub makes every model unsupported: the tests below need the adapter.
bool engine_built() {
  return mujoco().unsupported_reason(problem("planar_pendulum").model).find("engine not built") == std::string::npos;
}
#define MBS_NEED_MUJOCO() \
  if (!engine_built()) GTEST_SKIP() << "libmujoco-dev was not found when CMake configured"

// A model from its problem-file sections (bodies, joints), run to t_end (s); its rule is not used.
Problem inline_problem(const std::string& name, const std::string& space, const std::string& gravity,
                       const std::string& sections, double t_end) {
  const std::string text = "name: " + name + "\nspace: " + space + "\ngravity: " + gravity + "\n" + sections +
                           "run: {end_time: " + std::to_string(t_end) + "}\n" +
                           "score: {rule: {metric: max_energy_drift, below: 1.0}, objective: cpu_time}\n";
  return load_problem_text(text, name + ".yaml");
}

// A free point under gravity (two slide joints). RK4 integrates a constant acceleration exactly;
// semi-implicit Euler (v first, then q with the new v) lands h g t / 2 beyond the parabola,
// x_n = x0 + v0 t + g t^2 / 2 + g h t / 2, and so does the implicit integrator, which differs from it
// only by velocity-dependent forces (none here). Both to round-off.
TEST(Mujoco, FreeFallFollowsEachMethodsClosedForm) {
  MBS_NEED_MUJOCO();
  Model m = problem("planar_pendulum").model;
  m.elements.clear();  // the rod gone: a free point
  m.points[0].v0 = Eigen::Vector2d(1.5, 4.0);
  const double t = 1.25, h = 0.01;
  const Eigen::Vector2d r = m.points[0].r0 + m.points[0].v0 * t + 0.5 * m.gravity * t * t;
  const Eigen::Vector2d v = m.points[0].v0 + m.gravity * t;
  for (const char* integrator : {"euler", "rk4", "implicit"}) {
    auto sim = mujoco().create(m, integrator, h);
    testing::Monitor mon(m);
    sim->run(t, &mon);
    const Eigen::Vector2d r_exact = std::string(integrator) == "rk4" ? r : Eigen::Vector2d(r + 0.5 * m.gravity * h * t);
    EXPECT_EQ(sim->stats().steps, 125) << integrator;
    EXPECT_LT((mon.q_final - r_exact).norm(), 1e-13 * r.norm()) << integrator;
    EXPECT_LT((mon.v_final - v).norm(), 1e-13 * v.norm()) << integrator;
  }
}

// The planar pendulum released at 90 degrees, RK4 at h = 0.01 s: its period against the exact
// 4 sqrt(L/g) K(sin 45 deg), from the upward zero crossings of x. RK4's stability function on an
// oscillation of frequency w turns the phase by w h - (w h)^5 / 120 a step: a relative period error
// of (w h)^4 / 120, with w at most sqrt(g / L) along the swing (the linearization's g cos(theta) / L);
// twice that for the nonlinearity, plus the cubic Hermite interpolant's h^4 / 384 max|x''''| over
// the crossing speed sqrt(2 g L) (as the conformance suite's bound).
TEST(Mujoco, Rk4PendulumPeriodWithinItsPhaseError) {
  MBS_NEED_MUJOCO();
  const Problem p = problem("planar_pendulum");
  const double g = 9.81, L = 1.0, h = 0.01;
  auto sim = mujoco().create(p.model, "rk4", h);
  testing::Monitor mon(p.model, {true});
  sim->run(p.run.end_time, &mon);
  const std::vector<double> up = crossing_times(mon.samples(0), 0.0, Direction::kRising);
  ASSERT_GE(up.size(), 2u);
  const double T = (up.back() - up.front()) / (up.size() - 1);
  const double T_exact = 4 * std::sqrt(L / g) * std::comp_ellint_1(std::sin(M_PI / 4));
  const double wh = std::sqrt(g / L) * h;
  const double bound = 2 * std::pow(wh, 4) / 120 * T_exact + std::pow(h, 4) / 384 * 3 * g * g / std::sqrt(2 * g * L);
  EXPECT_NEAR(T, T_exact, bound);
  EXPECT_LT(mon.max_Phi, 1e-15);  // the rod's length holds by construction (a hinge)
}

// A rigid body spinning torque-free about a principal axis keeps its angular velocity, and its axes
// u_k turn at that constant rate: exact for every integrator (MuJoCo turns a free joint's
// quaternion by the exact rotation of omega h). Checks the rigid body's mapping (u_k, u_k') in motion.
TEST(Mujoco, SpinAboutAPrincipalAxisIsExact) {
  MBS_NEED_MUJOCO();
  const double t = 1.0, rate = 3.0;
  const Problem p = inline_problem("spinner", "spatial", "[0.0, 0.0, 0.0]", R"(
bodies:
  - {name: top, kind: rigid_body, mass: 2.0, inertia: [0.02, 0.025, 0.03], position: [0.1, 0.2, 0.3],
     velocity: [0.5, 0.0, -0.25], angular_velocity: [0.0, 3.0, 0.0]}
)",
                                   t);
  const Eigen::Matrix3d R = Eigen::AngleAxisd(rate * t, Eigen::Vector3d::UnitY()).toRotationMatrix();
  const Eigen::Vector3d omega(0.0, rate, 0.0);
  const Eigen::VectorXd q0 = p.model.initial_q();
  ASSERT_EQ(q0.size(), 12);  // r, u1, u2, u3
  for (const char* integrator : {"euler", "rk4", "implicit"}) {
    auto sim = mujoco().create(p.model, integrator, 0.01);
    testing::Monitor mon(p.model);
    sim->run(t, &mon);
    const Eigen::Vector3d r = q0.head<3>() + Eigen::Vector3d(0.5, 0.0, -0.25) * t;
    EXPECT_LT((mon.q_final.head<3>() - r).norm(), 1e-14) << integrator;
    for (int c = 1; c <= 3; ++c) {
      const Eigen::Vector3d u = R * q0.segment<3>(3 * c);
      EXPECT_LT((mon.q_final.segment<3>(3 * c) - u).norm(), 1e-13) << integrator << " u" << c;
      EXPECT_LT((mon.v_final.segment<3>(3 * c) - omega.cross(u)).norm(), 1e-13 * rate) << integrator << " u" << c << "'";
    }
  }
}

// Natural coordinates -> qpos0 (the initial configuration by construction) and qvel (least squares
// through the bodies' velocities) -> natural coordinates again, as the first state a run reports:
// exact to round-off on a planar rod (hinge), a spatial rod (ball), a hinge of two spherical joints,
// a planar chain of two rods and free rigid bodies (planar: two slides and a hinge; spatial: a free
// joint) moving off their axes.
TEST(Mujoco, StateMappingRoundTripIsExact) {
  MBS_NEED_MUJOCO();
  std::vector<Problem> problems;
  for (const char* name : {"planar_pendulum", "pendulum_large_amplitude_spatial", "pinned_bar"}) problems.push_back(problem(name));
  problems.push_back(inline_problem("chain", "planar", "[0.0, -9.81, 0.0]", R"(
bodies:
  - {name: P1, kind: point_mass, mass: 1.0, position: [0.6, -0.8, 0.0], velocity: [0.8, 0.6, 0.0]}
  - {name: P2, kind: point_mass, mass: 2.0, position: [1.6, -0.8, 0.0], velocity: [0.8, -1.4, 0.0]}
joints:
  - {name: rod1, kind: rod, a: {ground: [0.0, 0.0, 0.0]}, b: {body: P1}, length: 1.0}
  - {name: rod2, kind: rod, a: {body: P1}, b: {body: P2}, length: 1.0}
)",
                                     1.0));
  problems.push_back(inline_problem("free_bodies", "spatial", "[0.0, 0.0, -9.81]", R"(
bodies:
  - {name: top, kind: rigid_body, mass: 2.0, inertia: [0.02, 0.025, 0.03], position: [0.1, 0.2, 0.3],
     orientation: {axis: [1.0, 1.0, 0.0], angle_deg: 40.0}, velocity: [0.5, 0.1, -0.25],
     angular_velocity: [1.0, -2.0, 3.0]}
)",
                                     1.0));
  problems.push_back(inline_problem("free_lamina", "planar", "[0.0, -9.81, 0.0]", R"(
bodies:
  - {name: plate, kind: rigid_body, mass: 2.0, inertia: 0.05, position: [0.1, 0.2, 0.0],
     orientation: {angle_deg: 25.0}, velocity: [0.5, -0.25, 0.0], angular_velocity: 2.0}
)",
                                     1.0));
  for (const Problem& p : problems) testing::expect_first_state_is_initial(mujoco(), p.model, "rk4", 1e-3);
}

// MuJoCo 2.2.2's integrators (mjtIntegrator), each a fixed-step case; the first-order two are
// controls on the benchmark's energy rules.
TEST(Mujoco, CasesAreMujocosIntegrators) {
  std::vector<std::string> names;
  for (const IntegratorInfo& i : mujoco().integrators()) {
    names.push_back(i.name);
    EXPECT_EQ(i.kind, SettingKind::kFixedStep) << i.name;
    EXPECT_EQ(i.expected_failure.empty(), i.name == "rk4") << i.name;
  }
  EXPECT_EQ(names, (std::vector<std::string>{"euler", "rk4", "implicit"}));
  EXPECT_EQ(mujoco().origin(), FormulationOrigin::kEngine);
}

// What the adapter does not map says why: a loop (MuJoCo's would be a soft constraint), a point
// mass turned about itself (no inertia there), force elements (not mapped yet).
TEST(Mujoco, RefusalsSayWhy) {
  MBS_NEED_MUJOCO();
  const std::string loop = mujoco().unsupported_reason(problem("bricard").model);
  EXPECT_NE(loop.find("closes a loop"), std::string::npos) << loop;
  EXPECT_NE(loop.find("soft"), std::string::npos) << loop;
  const Problem ball = inline_problem("point_on_ball", "spatial", "[0.0, 0.0, -9.81]", R"(
bodies:
  - {name: P, kind: point_mass, mass: 1.0, position: [1.0, 0.0, 0.0], velocity: [0.0, 0.0, 0.0]}
joints:
  - {name: ball, kind: spherical, a: {ground: [1.0, 0.0, 0.0]}, b: {body: P}}
)",
                                      1.0);
  const std::string why = mujoco().unsupported_reason(ball.model);
  EXPECT_NE(why.find("no inertia"), std::string::npos) << why;
  EXPECT_NE(mujoco().unsupported_reason(problem("andrews").model).find("force elements"), std::string::npos);
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
  const Problem p = problem("pendulum_3d_linearization");
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
  auto lin = mujoco().create_linearizer(problem("pendulum_3d_linearization").model);
  const Linearization first = lin->linearize();  // a copy
  testing::expect_identical(first, lin->linearize());
  if (testing::allocation_counting_supported()) {
    EXPECT_EQ(testing::allocations_during([&] { lin->linearize(); }), 0);
  }
}

TEST(Mujoco, EveryModelIsUnsupportedWhenTheEngineIsNotBuilt) {
  if (engine_built()) GTEST_SKIP() << "the adapter is built";
  EXPECT_NE(mujoco().unsupported_reason(problem("bricard").model).find("engine not built"), std::string::npos);
  EXPECT_NE(mujoco().linearization_unsupported_reason(problem("pendulum_3d_linearization").model).find("engine not built"),
            std::string::npos);
}

}  // namespace
}  // namespace mbs
