// Formulation "penalty" (natural coordinates, trapezoidal rule with Newton on accelerations): on the
// IFToMM planar pendulum, energy drift, constraint violations and error against the exact solution;
// on a double pendulum, fixed- and dynamic-size code paths agree and the energy error is O(h^2);
// no heap allocation inside run().
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <vector>

#include "core/formulation.hpp"
#include "core/natural_coordinates.hpp"
#include "problem/problem.hpp"
#include "references/simple_pendulum.hpp"
#include "support/alloc_counter.hpp"
#include "support/models.hpp"
#include "support/monitor.hpp"

namespace mbs {
namespace {


class PenaltyPendulum : public ::testing::Test {
 protected:
  void SetUp() override {
    problem_ = load_problem(MBS_SOURCE_DIR "/problems/planar_pendulum.yaml");
    formulation_ = Registry::instance().find("penalty");
    ASSERT_NE(formulation_, nullptr);
  }
  std::unique_ptr<Simulator> create(double h) const { return formulation_->create(problem_.model, "trapezoidal", h); }
  // |P1(t_end) - exact| (m).
  double position_error(const testing::Monitor& monitor) const {
    const int dim = problem_.model.dim, point = reference_as<SimplePendulumReference>(problem_)->point;
    const Eigen::VectorXd exact = SimplePendulumExact::from_problem(problem_).position(monitor.t_final);
    return (monitor.q_final.segment(dim * point, dim) - exact).norm();
  }
  Problem problem_;
  const Formulation* formulation_ = nullptr;
};

TEST_F(PenaltyPendulum, DescribesItself) {
  const auto integrators = formulation_->integrators();
  ASSERT_EQ(integrators.size(), 1u);
  EXPECT_EQ(integrators[0].name, "trapezoidal");
  EXPECT_EQ(integrators[0].kind, SettingKind::kFixedStep);
  EXPECT_EQ(formulation_->unsupported_reason(problem_.model), "");
}

// The largest step passing the 5e-5 J rule is 3.34e-4 s (drift 4.96e-5 J; 3.3e-4 s: 4.84e-5 J);
// 3.2e-4 s gives 4.55e-5 J, a margin of 9%.
TEST_F(PenaltyPendulum, EnergyDriftConstraintsAndExactSolution) {
  const double h = 3.2e-4, t_end = problem_.run.end_time;
  auto sim = create(h);
  testing::Monitor monitor(problem_.model);
  const RunStats& stats = sim->run(t_end, &monitor);

  EXPECT_EQ(stats.steps, std::lround(std::ceil(t_end / h - 1e-9)));
  EXPECT_DOUBLE_EQ(monitor.t_final, t_end);
  EXPECT_LT(monitor.max_drift, 5e-5);  // J, the benchmark's rule
  // Penalty violation ~ lambda / (alpha omega^2) with lambda <= 3 m g: a few 1e-8 m.
  EXPECT_LT(monitor.max_Phi, 1e-6);       // m
  EXPECT_LT(monitor.max_Phi_dot, 1e-5);   // m/s
  EXPECT_LT(position_error(monitor), 1e-3);  // m, against the elliptic-function solution
  // Modified Newton from extrapolated q'': two iterations per step at this h, on the step's one
  // tangent (the second correction contracts far more than by half).
  EXPECT_LE(stats.newton_iterations, 5 * stats.steps / 2);
  EXPECT_EQ(stats.jacobian_evals, stats.steps + 1);  // +1: initial accelerations
  EXPECT_EQ(stats.failures, 0);
}

// No allocation in run() on the pendulum: tests/test_allocations.cpp checks every case.

// A non-positive step or an unknown integrator is refused at creation; a non-finite state in run().
TEST_F(PenaltyPendulum, RefusesBadSettingsAndNonFiniteStates) {
  EXPECT_THROW(create(0.0), SolverError);
  EXPECT_THROW(formulation_->create(problem_.model, "rk4", 1e-3), SolverError);
  Model model = problem_.model;
  model.points[0].v0[0] = std::numeric_limits<double>::quiet_NaN();
  auto sim = formulation_->create(model, "trapezoidal", 1e-3);
  EXPECT_THROW(sim->run(1.0, nullptr), SolverError);
}

// Planar double pendulum, released from rest with both rods horizontal, in dim = 2 or 3 (then it
// stays in z = 0). dim = 2 runs the fixed-size (4, 2) simulator, dim = 3 the dynamic-size one.
Model double_pendulum(int dim) {
  return testing::chain_model(dim, {{1.0, {1.0, 0.0, 0.0}}, {0.5, {1.7, 0.0, 0.0}}});
}

TEST(PenaltyDoublePendulum, FixedAndDynamicSizesAgreeAndEnergyErrorIsSecondOrder) {
  const Formulation* formulation = Registry::instance().find("penalty");
  ASSERT_NE(formulation, nullptr);
  const double h = 1e-3, t_end = 2.0;
  const Model planar = double_pendulum(2), spatial = double_pendulum(3);
  auto sim2 = formulation->create(planar, "trapezoidal", h);
  auto sim3 = formulation->create(spatial, "trapezoidal", h);
  auto sim2_half = formulation->create(planar, "trapezoidal", h / 2);
  testing::Monitor mon2(planar), mon3(spatial), mon2_half(planar);
  sim2->run(t_end, &mon2);
  sim3->run(t_end, &mon3);
  sim2_half->run(t_end, &mon2_half);

  // The same method in both code paths, and nothing leaves the plane. The fixed-size path inverts
  // its 4 x 4 tangent in closed form where the dynamic one factors it by LU: they differ by the
  // round-off of a tangent whose penalty alpha / m = 1e8 sets its condition number (measured
  // 4e-12 m and 2e-11 J after 2000 steps; bounds 25x that).
  for (int point = 0; point < 2; ++point)  // m
    EXPECT_LT((mon2.q_final.segment(2 * point, 2) - mon3.q_final.segment(3 * point, 2)).norm(), 1e-10);
  EXPECT_EQ(mon3.q_final[2], 0.0);
  EXPECT_EQ(mon3.q_final[5], 0.0);
  EXPECT_NEAR(mon3.max_drift, mon2.max_drift, 5e-10);

  // Trapezoidal rule: drift 2.9e-4 J at h = 1e-3 s (energy ~18 J), a quarter of it at h / 2.
  EXPECT_LT(mon2.max_drift, 5e-4);  // J
  EXPECT_NEAR(mon2.max_drift / mon2_half.max_drift, 4.0, 0.3);
  EXPECT_LT(mon2.max_Phi, 1e-5);  // m

  // Neither code path allocates (the runs above were the warm-up).
  EXPECT_EQ(testing::allocations_during([&] { sim2->run(t_end, nullptr); }), 0);
  EXPECT_EQ(testing::allocations_during([&] { sim3->run(t_end, nullptr); }), 0);
}

}  // namespace
}  // namespace mbs
