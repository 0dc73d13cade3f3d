// The Simbody adapter (formulations/simbody): closed-form motions within the integrators' error,
// the state mapping's round trip (natural coordinates -> mobilizers -> natural coordinates), the
// cases (CPodes among them, beside SUNDIALS 6 in one process), what the adapter refuses, and the
// linearization from Simbody's M and differences of its dynamics (closed-form spectra, a
// non-equilibrium refused, loops and force elements unsupported). Without libsimbody-dev, every
// model is `unsupported` with "engine not built".
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include "core/formulation.hpp"
#include "elements/spring_damper.hpp"
#include "problem/problem.hpp"
#include "run/crossings.hpp"
#include "run/linearization_case.hpp"
#include "support/linearization_text.hpp"
#include "support/models.hpp"
#include "support/monitor.hpp"
#include "support/round_trip.hpp"
#include "support/tree_models.hpp"

namespace mbs {
namespace {

const Formulation& simbody() { return *Registry::instance().find("simbody"); }

Problem problem(const std::string& name) { return load_problem(MBS_SOURCE_DIR "/problems/" + name + ".yaml"); }

// Without libsimbody-dev the stub makes every model unsupported: the tests below need the adapter.
bool engine_built() {
  return simbody().unsupported_reason(problem("planar_pendulum").model).find("engine not built") == std::string::npos;
}
#define MBS_NEED_SIMBODY() \
  if (!engine_built()) GTEST_SKIP() << "libsimbody-dev was not found when CMake configured"


// Every explicit case that integrates a constant acceleration exactly (order >= 2, and velocity
// Verlet): a free point under gravity lands on its parabola to round-off at any accuracy.
TEST(Simbody, FreeFallIsExactForSecondOrderMethods) {
  MBS_NEED_SIMBODY();
  Model m = problem("planar_pendulum").model;
  m.elements.clear();  // the rod gone: a free point (a Translation mobilizer)
  m.points[0].v0 = Eigen::Vector2d(1.5, 4.0);
  const double t = 1.25;
  const Eigen::Vector2d r = m.points[0].r0 + m.points[0].v0 * t + 0.5 * m.gravity * t * t;
  for (const char* integrator : {"rk-merson", "rk-feldberg", "rk3", "verlet"}) {
    auto sim = simbody().create(m, integrator, 1e-4);
    testing::Monitor mon(m);
    sim->run(t, &mon);
    EXPECT_NEAR(mon.t_final, t, 1e-14);
    EXPECT_LT((mon.q_final - r).norm(), 1e-13 * r.norm()) << integrator;
    EXPECT_LT((mon.v_final - (m.points[0].v0 + m.gravity * t)).norm(), 1e-13 * 10) << integrator;
    EXPECT_LT(mon.max_drift, 1e-12 * 30) << integrator;  // |E| ~ m g h ~ 30 J
  }
}

// The planar pendulum released at 90 degrees: its period 4 sqrt(L/g) K(sin 45 deg), from the upward
// zero crossings of x. Bound: each step's local error is held below the accuracy (m, as L = 1 m),
// so the position error after n steps is below n tol, a time error of that over the crossing speed
// sqrt(2 g L); plus the cubic Hermite interpolant's h^4/384 max|x''''| between steps (conformance).
TEST(Simbody, PendulumPeriodWithinTheAccumulatedLocalError) {
  MBS_NEED_SIMBODY();
  const Problem p = problem("planar_pendulum");
  const double tol = 1e-8, g = 9.81;
  for (const char* integrator : {"rk-merson", "rk-feldberg", "rk3", "cpodes"}) {
    auto sim = simbody().create(p.model, integrator, tol);
    testing::Monitor mon(p.model, {true});
    sim->run(p.run.end_time, &mon);
    const std::vector<double> up = crossing_times(mon.samples(0), 0.0, Direction::kRising);
    ASSERT_GE(up.size(), 3u) << integrator;
    const double T = (up.back() - up.front()) / (up.size() - 1);
    const double T_exact = 4 * std::sqrt(1.0 / g) * std::comp_ellint_1(std::sin(M_PI / 4));
    const double h = mon.largest_step();
    const double bound = sim->stats().steps * tol / std::sqrt(2 * g) + std::pow(h, 4) / 384 * 3 * g * g / std::sqrt(2 * g);
    EXPECT_NEAR(T, T_exact, bound) << integrator << ": " << sim->stats().steps << " steps, largest " << h << " s";
    EXPECT_LT(mon.max_drift, sim->stats().steps * tol * g) << integrator;  // J: m g times the position bound
  }
}

// A model without gravity from its problem-file sections (bodies, joints, forces), run to t_end
// (s); its rule is not used by the tests below.
Problem weightless(const std::string& name, const std::string& space, const std::string& sections, double t_end) {
  const std::string text = "name: " + name + "\nspace: " + space + "\ngravity: [0.0, 0.0, 0.0]\n" + sections +
                           "run: {end_time: " + std::to_string(t_end) + "}\n" +
                           "score: {rule: {metric: max_energy_drift, below: 1.0}, objective: cpu_time}\n";
  return load_problem_text(text, name + ".yaml");
}

// A point on a spring-damper to the ground (the adapter's custom force on a point: Q(q, v) in
// natural coordinates), released from rest 0.5 m beyond its rest length: a damped oscillator along
// the spring, x = 1 + 0.5 e^(-zeta w t) (cos w_d t + zeta / sqrt(1 - zeta^2) sin w_d t), w = sqrt(k/m).
// Bound: as the pendulum's, each step's local error is held below the accuracy (m).
TEST(Simbody, DampedSpringFollowsItsClosedForm) {
  MBS_NEED_SIMBODY();
  const double k = 50.0, m = 2.0, c = 0.8, t = 2.0, tol = 1e-8;
  const Problem p = weightless("damped_spring", "planar", R"(
bodies:
  - {name: P, kind: point_mass, mass: 2.0, position: [1.5, 0.0, 0.0], velocity: [0.0, 0.0, 0.0]}
forces:
  - {name: spring, kind: spring_damper, a: {ground: [0.0, 0.0, 0.0]}, b: {body: P}, stiffness: 50.0, damping: 0.8,
     rest_length: 1.0}
)",
                               t);
  const double w = std::sqrt(k / m), zeta = c / (2 * std::sqrt(k * m)), wd = w * std::sqrt(1 - zeta * zeta);
  const double x = 1 + 0.5 * std::exp(-zeta * w * t) * (std::cos(wd * t) + zeta / std::sqrt(1 - zeta * zeta) * std::sin(wd * t));
  for (const char* integrator : {"rk-merson", "rk-feldberg", "rk3", "cpodes"}) {
    auto sim = simbody().create(p.model, integrator, tol);
    testing::Monitor mon(p.model);
    sim->run(t, &mon);
    const double bound = sim->stats().steps * tol;
    EXPECT_NEAR(mon.q_final[0], x, bound) << integrator << ": " << sim->stats().steps << " steps";
    EXPECT_NEAR(mon.q_final[1], 0.0, 1e-14) << integrator;  // the force stays along the spring
  }
}

// A rigid body on a hinge about its centroid's z axis, driven by a constant torque with components
// off the axis (the pin reacts them): the custom force's moment sum_k u_k x Q_uk must give the
// constant angular acceleration tau_z / I_z, which every case of order >= 2 (and velocity Verlet)
// integrates exactly: the body axes turn by theta = tau_z t^2 / (2 I_z) to round-off.
TEST(Simbody, TorqueTurnsAHingedBodyExactly) {
  MBS_NEED_SIMBODY();
  const double t = 1.25;
  const Problem p = weightless("driven_wheel", "spatial", R"(
bodies:
  - {name: wheel, kind: rigid_body, mass: 1.0, inertia: [0.02, 0.025, 0.03], position: [0.0, 0.0, 0.0]}
joints:
  - {name: hinge, kind: revolute, a: ground, b: wheel, at: [0.0, 0.0, 0.0], axis: [0.0, 0.0, 1.0]}
forces:
  - {name: motor, kind: torque, body: wheel, torque: [0.1, -0.2, 0.06]}
)",
                               t);
  const double theta = 0.06 * t * t / (2 * 0.03), rate = 0.06 * t / 0.03;
  const Eigen::Matrix3d R = Eigen::AngleAxisd(theta, Eigen::Vector3d::UnitZ()).toRotationMatrix();
  const Eigen::Vector3d omega(0.0, 0.0, rate);
  const Eigen::VectorXd q0 = p.model.initial_q();
  ASSERT_EQ(q0.size(), 12);  // r, u1, u2, u3
  for (const char* integrator : {"rk-merson", "rk-feldberg", "rk3", "verlet"}) {
    auto sim = simbody().create(p.model, integrator, 1e-4);
    testing::Monitor mon(p.model);
    sim->run(t, &mon);
    EXPECT_LT(mon.q_final.head<3>().norm(), 1e-14) << integrator;
    for (int c = 1; c <= 3; ++c) {
      const Eigen::Vector3d u = R * q0.segment<3>(3 * c);
      EXPECT_LT((mon.q_final.segment<3>(3 * c) - u).norm(), 1e-13) << integrator << " u" << c;
      EXPECT_LT((mon.v_final.segment<3>(3 * c) - omega.cross(u)).norm(), 1e-13 * rate) << integrator << " u" << c << "'";
    }
  }
}

// Natural coordinates -> mobilizer q, u (q = 0 by construction, u by least squares through the
// system Jacobian) -> natural coordinates again, as the first state a run reports: exact to round-off
// on trees of points (pins, a spatial rod's LineOrientation), a hinge (two spherical joints), and
// closed loops of planar and spatial revolutes (constraints, projected).
TEST(Simbody, StateMappingRoundTripIsExact) {
  MBS_NEED_SIMBODY();
  for (const char* name :
       {"planar_pendulum", "pendulum_large_amplitude_spatial", "pinned_bar", "andrews", "bricard", "n_four_bar"})
    testing::expect_first_state_is_initial(simbody(), problem(name).model, "rk-merson", 1e-6);
}

// Every integrator Simbody offers is a case, and the 4(5) pair and CPodes once more with the fixed
// constraint tolerance; a name that is none of them is refused.
TEST(Simbody, CasesAreSimbodysIntegrators) {
  MBS_NEED_SIMBODY();
  std::vector<std::string> names;
  for (const IntegratorInfo& i : simbody().integrators()) names.push_back(i.name);
  EXPECT_EQ(names, (std::vector<std::string>{"rk-merson", "rk-feldberg", "rk3", "verlet", "semi-explicit-euler2", "cpodes",
                                             "rk-merson-ctol1e-12", "rk-feldberg-ctol1e-12", "cpodes-ctol1e-12"}));
  EXPECT_THROW(simbody().create(problem("planar_pendulum").model, "cpodes-adams", 1e-6), SolverError);
}

// CPodes and SUNDIALS 6 in one process. libSimTKmath carries its own copy of SUNDIALS' N_Vector
// functions under SUNDIALS 6's names; were SUNDIALS 6's exported, CPodes would call them and abort
// in CPodeInit. The build hides them (CMakeLists.txt), so IDA, then CPodes, then IDA again on the
// pendulum: IDA's two runs agree exactly, and CPodes lands within its accumulated local error (each
// step's below the accuracy, in m as L = 1 m) of a Merson run at 1e-13.
TEST(Simbody, CpodesRunsBesideSundials6) {
  MBS_NEED_SIMBODY();
  const Problem p = problem("planar_pendulum");
  const Formulation& ida = *Registry::instance().find("ida-index3");
  const double tol = 1e-8, t = 1.0;
  struct Final {
    Eigen::VectorXd q;
    long steps;
  };
  auto run = [&](const Formulation& f, const char* integrator, double accuracy) {
    auto sim = f.create(p.model, integrator, accuracy);
    testing::Monitor mon(p.model);
    sim->run(t, &mon);
    return Final{mon.q_final, sim->stats().steps};
  };
  const Final before = run(ida, "bdf", tol), cpodes = run(simbody(), "cpodes", tol), after = run(ida, "bdf", tol),
              exact = run(simbody(), "rk-merson", 1e-13);
  EXPECT_EQ(before.q, after.q);
  EXPECT_LT((cpodes.q - exact.q).cwiseAbs().maxCoeff(), cpodes.steps * tol) << cpodes.steps << " steps";
}

// The constraint tolerance is the cases' second knob: Andrews' squeezer (closed loops) at a loose
// accuracy keeps |Phi| (m) near the accuracy under Simbody's default and near round-off with the
// tolerance fixed at 1e-12; the two motions agree within ten times the accuracy.
TEST(Simbody, FixedConstraintToleranceHoldsTheLoopsAtAnyAccuracy) {
  MBS_NEED_SIMBODY();
  const Problem p = problem("andrews");
  const double accuracy = 1e-4, t = 0.003;
  auto tied = simbody().create(p.model, "rk-merson", accuracy);
  auto fixed = simbody().create(p.model, "rk-merson-ctol1e-12", accuracy);
  testing::Monitor tied_mon(p.model), fixed_mon(p.model);
  tied->run(t, &tied_mon);
  fixed->run(t, &fixed_mon);
  EXPECT_GT(tied_mon.max_Phi, 1e-9);
  EXPECT_LT(tied_mon.max_Phi, 10 * accuracy);
  EXPECT_LT(fixed_mon.max_Phi, 1e-10);
  EXPECT_LT((fixed_mon.q_final - tied_mon.q_final).cwiseAbs().maxCoeff(), 10 * accuracy);
}

// The rows are an engine's: the harness and the suites tell them apart by this declaration.
TEST(Simbody, IsDeclaredAnEngine) {
  EXPECT_EQ(simbody().origin(), FormulationOrigin::kEngine);
  EXPECT_EQ(Registry::instance().find("minimal")->origin(), FormulationOrigin::kOwn);
}

// A point mass turned about itself by a joint has no inertia there: Simbody's mass matrix would be
// singular, and the adapter says so instead of building it.
TEST(Simbody, PointMassOnASphericalJointIsRefused) {
  MBS_NEED_SIMBODY();
  const Problem p = load_problem_text(R"(
name: point_on_ball
space: spatial
gravity: [0.0, 0.0, -9.81]
bodies:
  - {name: P, kind: point_mass, mass: 1.0, position: [1.0, 0.0, 0.0], velocity: [0.0, 0.0, 0.0]}
joints:
  - {name: ball, kind: spherical, a: {ground: [1.0, 0.0, 0.0]}, b: {body: P}}
run: {end_time: 1.0, output_interval: 0.1, history_point: P}
score: {rule: {metric: max_energy_drift, below: 1.0e-6}, objective: cpu_time}
)",
                                      "point_on_ball.yaml");
  const std::string why = simbody().unsupported_reason(p.model);
  EXPECT_NE(why.find("no inertia"), std::string::npos) << why;
  EXPECT_NE(why.find("ball"), std::string::npos) << why;
}

// --- Linearization (M by calcM, K by centered differences of Simbody's udot) ---------------------

// The error the linearization has by construction (formulations/simbody/simbody_model.cpp): K off by
// its differences' truncation eps^2 / 6 and rounding u / eps relative (eps = 1e-5; u = 1e-15, a few
// ulps of udot), and omega = sqrt(K / M) by half that: no step, no spurious coordinate.
double difference_bound(double omega) {
  const double eps = 1e-5, u = 1e-15;
  return 0.5 * omega * (eps * eps / 6 + u / eps);
}

// The problem file's 3D pendulum: a LineOrientation (2 coordinates, 4 eigenvalues, no spin), +-i
// sqrt(g/l) twice, all true, and the row passes the rule.
TEST(SimbodyLinearization, Pendulum3dProblemWithinItsDifferencesError) {
  MBS_NEED_SIMBODY();
  const Problem p = problem("pendulum_3d_linearization");
  ASSERT_EQ(simbody().linearization_unsupported_reason(p.model), "");
  auto lin = simbody().create_linearizer(p.model);
  const Linearization& r = lin->linearize();
  SCOPED_TRACE(testing::dump(r));
  ASSERT_EQ(r.eigenvalues.size(), 4u);
  for (const Eigenvalue& e : r.eigenvalues) EXPECT_TRUE(e.is_true) << e.why;
  const double error = eigenvalue_error(r.eigenvalues, exact_pendulum_eigenvalues(p));
  EXPECT_LE(error, 2 * difference_bound(std::sqrt(9.81)));  // the norm-2 of 4 errors
  std::printf("simbody on pendulum_3d_linearization: eigenvalue error (2-norm) %.3g\n", error);
  // M = m L^2 I and K = m g L I in the two rotations normal to the rod.
  ASSERT_EQ(r.terms.size(), 3u);
  EXPECT_LE((r.terms[0].second - Eigen::Matrix2d::Identity()).norm(), 1e-14);
  EXPECT_LE((r.terms[1].second - 9.81 * Eigen::Matrix2d::Identity()).norm(), 1e-8);
  const CaseResult row = run_linearization_case(p, simbody(), false);
  EXPECT_EQ(row.status, CaseStatus::kPass) << row.message;
}

// Two point masses on rods hanging along -y (spatial): omega^2 are the roots of
//   m1 l1 l2 w^4 - (m1 + m2) g (l1 + l2) w^2 + (m1 + m2) g^2 = 0,
// twice: 8 eigenvalues, all true, each within difference_bound of its omega.
TEST(SimbodyLinearization, SpatialDoublePendulumClosedForm) {
  MBS_NEED_SIMBODY();
  testing::expect_double_pendulum(simbody(), 8, 8, difference_bound);
}

// Off the equilibrium by an angle a, |M udot| / (|Q| |R|) = sin(a) / sqrt(2): 30 degrees and 1e-6
// rad throw, 1e-10 rad does not. A loop or a force element is unsupported, named.
TEST(SimbodyLinearization, NotAnEquilibriumThrowsLoopsAndForcesUnsupported) {
  MBS_NEED_SIMBODY();
  testing::expect_equilibrium_checked(simbody());
  const std::string loop = simbody().linearization_unsupported_reason(testing::four_bar());
  EXPECT_NE(loop.find("closed loop"), std::string::npos) << loop;
  Model sprung = testing::pendulum_3d();
  auto spring = std::make_shared<SpringDamper>();
  spring->name = "spring";
  spring->a = testing::ground({0, 0, 0});
  spring->b = testing::point(0);
  spring->k = 10.0;
  spring->rest_length = 1.0;
  spring->bind(sprung);
  sprung.elements.push_back(spring);
  const std::string force = simbody().linearization_unsupported_reason(sprung);
  EXPECT_NE(force.find("spring"), std::string::npos) << force;
}

TEST(SimbodyLinearization, Repeatable) {
  MBS_NEED_SIMBODY();
  const Problem p = problem("pendulum_3d_linearization");  // outlives the linearizer
  auto lin = simbody().create_linearizer(p.model);
  const Linearization first = lin->linearize();  // a copy
  testing::expect_identical(first, lin->linearize());
}

TEST(Simbody, EveryModelIsUnsupportedWhenTheEngineIsNotBuilt) {
  if (engine_built()) GTEST_SKIP() << "the adapter is built";
  EXPECT_NE(simbody().unsupported_reason(problem("andrews").model).find("engine not built"), std::string::npos);
  EXPECT_NE(simbody().linearization_unsupported_reason(problem("pendulum_3d_linearization").model).find("engine not built"),
            std::string::npos);
}

}  // namespace
}  // namespace mbs
