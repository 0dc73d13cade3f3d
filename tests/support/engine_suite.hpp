// What the suites of the engine adapters that step a fixed step (tests/test_mujoco.cpp,
// tests/test_bullet.cpp) check alike: closed-form motions within each method's error, the state
// mapping's round trip on the same models, the cases' kinds, and the refusals' reasons.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "core/formulation.hpp"
#include "problem/problem.hpp"
#include "run/crossings.hpp"
#include "support/monitor.hpp"
#include "support/round_trip.hpp"

namespace mbs::testing {

inline Problem problem_file(const std::string& name) {
  return load_problem(MBS_SOURCE_DIR "/problems/" + name + ".yaml");
}

// Without the engine's package the stub makes every model unsupported: the tests need the adapter.
inline bool engine_built(const Formulation& engine) {
  return engine.unsupported_reason(problem_file("planar_pendulum").model).find("engine not built") == std::string::npos;
}

// A model from its problem-file sections (bodies, joints), run to t_end (s); its rule is not used.
inline Problem inline_problem(const std::string& name, const std::string& space, const std::string& gravity,
                              const std::string& sections, double t_end) {
  const std::string text = "name: " + name + "\nspace: " + space + "\ngravity: " + gravity + "\n" + sections +
                           "run: {end_time: " + std::to_string(t_end) + "}\n" +
                           "score: {rule: {metric: max_energy_drift, below: 1.0}, objective: cpu_time}\n";
  return load_problem_text(text, name + ".yaml");
}

// A free point thrown at v0 under gravity (the planar pendulum without its rod), 1.25 s at
// h = 0.01 s. The `exact` cases (RK4) integrate a constant acceleration exactly; the
// `semi_implicit` ones (v first, then q with the new v) land h g t / 2 beyond the parabola,
// x_n = x0 + v0 t + g t^2 / 2 + g h t / 2. Both to round-off.
inline void expect_free_fall(const Formulation& engine, const Eigen::Vector2d& v0,
                             std::initializer_list<const char*> exact,
                             std::initializer_list<const char*> semi_implicit) {
  Model m = problem_file("planar_pendulum").model;
  m.elements.clear();  // the rod gone: a free point
  m.points[0].v0 = v0;
  const double t = 1.25, h = 0.01;
  const Eigen::Vector2d r = m.points[0].r0 + m.points[0].v0 * t + 0.5 * m.gravity * t * t;
  const Eigen::Vector2d v = m.points[0].v0 + m.gravity * t;
  for (const auto& [cases, offset] : {std::pair{exact, 0.0}, std::pair{semi_implicit, 0.5 * h * t}}) {
    for (const char* integrator : cases) {
      auto sim = engine.create(m, integrator, h);
      Monitor mon(m);
      sim->run(t, &mon);
      const Eigen::Vector2d r_exact = r + offset * m.gravity;
      EXPECT_EQ(sim->stats().steps, 125) << integrator;
      EXPECT_LT((mon.q_final - r_exact).norm(), 1e-13 * r.norm()) << integrator;
      EXPECT_LT((mon.v_final - v).norm(), 1e-13 * v.norm()) << integrator;
    }
  }
}

// The planar pendulum released at 90 degrees, RK4 at h = 0.01 s: its period against the exact
// 4 sqrt(L/g) K(sin 45 deg), from the upward zero crossings of x. RK4's stability function on an
// oscillation of frequency w turns the phase by w h - (w h)^5 / 120 a step: a relative period error
// of (w h)^4 / 120, with w at most sqrt(g / L) along the swing (the linearization's g cos(theta) / L);
// twice that for the nonlinearity, plus the cubic Hermite interpolant's h^4 / 384 max|x''''| over
// the crossing speed sqrt(2 g L) (as the conformance suite's bound). The rod's length holds by
// construction (a joint): |Phi| below `max_Phi`, the engine's round-off.
inline void expect_rk4_pendulum_period(const Formulation& engine, const char* integrator, double max_Phi) {
  const Problem p = problem_file("planar_pendulum");
  const double g = 9.81, L = 1.0, h = 0.01;
  auto sim = engine.create(p.model, integrator, h);
  Monitor mon(p.model, {true});
  sim->run(p.run.end_time, &mon);
  const std::vector<double> up = crossing_times(mon.samples(0), 0.0, Direction::kRising);
  ASSERT_GE(up.size(), 2u);
  const double T = (up.back() - up.front()) / (up.size() - 1);
  const double T_exact = 4 * std::sqrt(L / g) * std::comp_ellint_1(std::sin(M_PI / 4));
  const double wh = std::sqrt(g / L) * h;
  const double bound = 2 * std::pow(wh, 4) / 120 * T_exact + std::pow(h, 4) / 384 * 3 * g * g / std::sqrt(2 * g * L);
  EXPECT_NEAR(T, T_exact, bound);
  EXPECT_LT(mon.max_Phi, max_Phi);
}

// A rigid body spinning torque-free about a principal axis keeps its angular velocity, and its axes
// u_k turn at that constant rate; `integrators` are the cases for which this is exact (to
// round-off). Checks the rigid body's mapping (u_k, u_k') in motion.
inline void expect_exact_principal_spin(const Formulation& engine, std::initializer_list<const char*> integrators) {
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
  for (const char* integrator : integrators) {
    auto sim = engine.create(p.model, integrator, 0.01);
    Monitor mon(p.model);
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

// The state mapping's round trip (expect_first_state_is_initial) on a planar rod, a spatial rod, a
// hinge of two spherical joints, a planar chain of two rods and free rigid bodies (spatial and
// planar) moving off their axes.
inline void expect_round_trips(const Formulation& engine, const char* integrator) {
  std::vector<Problem> problems;
  for (const char* name : {"planar_pendulum", "pendulum_large_amplitude_spatial", "pinned_bar"})
    problems.push_back(problem_file(name));
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
  for (const Problem& p : problems) expect_first_state_is_initial(engine, p.model, integrator, 1e-3);
}

// The engine's cases, in order, every one at a fixed step; all but `passing` are controls.
inline void expect_fixed_step_cases(const Formulation& engine, const std::vector<std::string>& expected,
                                    const std::string& passing) {
  std::vector<std::string> names;
  for (const IntegratorInfo& i : engine.integrators()) {
    names.push_back(i.name);
    EXPECT_EQ(i.kind, SettingKind::kFixedStep) << i.name;
    EXPECT_EQ(i.expected_failure.empty(), i.name == passing) << i.name;
  }
  EXPECT_EQ(names, expected);
  EXPECT_EQ(engine.origin(), FormulationOrigin::kEngine);
}

// What an adapter that maps no loop, no force element and no point turned about itself says: a
// loop (bricard) with `loop_word` in its reason, a point mass on a spherical joint at itself (no
// inertia there), force elements (andrews).
inline void expect_refusals(const Formulation& engine, const char* loop_word) {
  const std::string loop = engine.unsupported_reason(problem_file("bricard").model);
  EXPECT_NE(loop.find("closes a loop"), std::string::npos) << loop;
  EXPECT_NE(loop.find(loop_word), std::string::npos) << loop;
  const Problem ball = inline_problem("point_on_ball", "spatial", "[0.0, 0.0, -9.81]", R"(
bodies:
  - {name: P, kind: point_mass, mass: 1.0, position: [1.0, 0.0, 0.0], velocity: [0.0, 0.0, 0.0]}
joints:
  - {name: ball, kind: spherical, a: {ground: [1.0, 0.0, 0.0]}, b: {body: P}}
)",
                                      1.0);
  const std::string why = engine.unsupported_reason(ball.model);
  EXPECT_NE(why.find("no inertia"), std::string::npos) << why;
  EXPECT_NE(engine.unsupported_reason(problem_file("andrews").model).find("force elements"), std::string::npos);
}

}  // namespace mbs::testing
