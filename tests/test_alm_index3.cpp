// Formulation "alm-index3" (natural coordinates, index-3 augmented Lagrangian with mass-orthogonal
// projections, trapezoidal rule) on the IFToMM planar pendulum: energy drift, constraint violations,
// error against the exact solution, Newton work per step, and no heap allocation inside run().
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "core/formulation.hpp"
#include "elements/rod.hpp"
#include "core/natural_coordinates.hpp"
#include "problem/problem.hpp"
#include "references/simple_pendulum.hpp"
#include "support/alloc_counter.hpp"
#include "support/models.hpp"
#include "support/monitor.hpp"

namespace mbs {
namespace {

using testing::Monitor;


class AlmIndex3Pendulum : public ::testing::Test {
 protected:
  void SetUp() override {
    problem_ = load_problem(MBS_SOURCE_DIR "/problems/planar_pendulum.yaml");
    formulation_ = Registry::instance().find("alm-index3");
    ASSERT_NE(formulation_, nullptr);
  }
  std::unique_ptr<Simulator> create(double h) const { return formulation_->create(problem_.model, "trapezoidal", h); }
  double position_error(const Monitor& m) const {
    const Eigen::VectorXd exact = SimplePendulumExact::from_problem(problem_).position(m.t_final);
    const int p = reference_as<SimplePendulumReference>(problem_)->point, dim = problem_.model.dim;
    return (m.q_final.segment(dim * p, dim) - exact).norm();
  }

  Problem problem_;
  const Formulation* formulation_ = nullptr;
};

TEST_F(AlmIndex3Pendulum, DescribesItself) {
  EXPECT_EQ(formulation_->name(), "alm-index3");
  const auto integrators = formulation_->integrators();
  ASSERT_EQ(integrators.size(), 1u);
  EXPECT_EQ(integrators[0].name, "trapezoidal");
  EXPECT_EQ(integrators[0].kind, SettingKind::kFixedStep);
  EXPECT_EQ(formulation_->unsupported_reason(problem_.model), "");
  EXPECT_THROW(create(0.0), SolverError);
  EXPECT_THROW(create(std::nan("")), SolverError);
  EXPECT_THROW(formulation_->create(problem_.model, "rk4", 1e-3), SolverError);
}

// The energy error is the trapezoidal rule's, O(h^2): 4.97e-5 J at h = 1e-3 s (1e4 steps, the
// largest passing step, 0.7% under the rule; 1.013e-3 s fails), 4.0e-5 J at the 9e-4 s used here.
TEST_F(AlmIndex3Pendulum, PassesEnergyRuleAndMatchesExactSolution) {
  const double t_end = problem_.run.end_time;  // 10 s
  auto sim = create(9e-4);
  Monitor monitor(problem_.model);
  const RunStats& stats = sim->run(t_end, &monitor);
  const double steps = std::ceil(t_end / 9e-4 - 1e-9);
  EXPECT_EQ(stats.steps, static_cast<long>(steps));
  EXPECT_EQ(monitor.reports, stats.steps + 1);
  EXPECT_DOUBLE_EQ(monitor.t_final, t_end);
  EXPECT_LT(monitor.max_drift, problem_.rule.below);  // 5e-5 J
  // Position: Newton stops at |dq| <= 1e-10 m and the next correction would be ~1/250 of that (the
  // multiplier error shrinks by 1 + h^2 alpha / 4m per iteration), so |Phi| sits at round-off.
  EXPECT_LT(monitor.max_Phi, 1e-11);  // m
  // Velocity: the penalized projection leaves 1 / (1 + h^2 alpha / 4m) ~ 1/200 of the trapezoidal
  // rule's own violation of Phi_q q' = 0, which is O(h^2) and ~1e-5 m/s here (measured 5e-8 m/s).
  EXPECT_LT(monitor.max_Phi_dot, 1e-6);  // m/s
  EXPECT_LT(position_error(monitor), 1e-3);  // m, against the elliptic-function solution
  // 2 iterations a step (the multiplier error shrinks ~200-fold per iteration).
  EXPECT_GE(stats.newton_iterations, 1.5 * stats.steps);
  EXPECT_LE(stats.newton_iterations, 4 * stats.steps);
  // + the initial-acceleration iterations (at least one) and their single factorization.
  EXPECT_GE(stats.rhs_evals, stats.newton_iterations + 1);
  EXPECT_LE(stats.rhs_evals, stats.newton_iterations + 20);
  EXPECT_EQ(stats.jacobian_evals, stats.newton_iterations + 1);
  EXPECT_EQ(stats.failures, 0);
}

// A second run reproduces the first exactly: run() re-initializes everything, lambda included.
TEST_F(AlmIndex3Pendulum, RunIsRepeatable) {
  auto sim = create(1e-3);
  Monitor first(problem_.model), second(problem_.model);
  sim->run(1.0, &first);
  sim->run(1.0, &second);
  EXPECT_EQ(first.q_final, second.q_final);
  EXPECT_EQ(first.max_drift, second.max_drift);
}

// No allocation in run() on the pendulum: tests/test_allocations.cpp checks every case.

// Spatial double pendulum: dynamic sizes (nq = 6), two rods, and a duplicated rod that makes the
// constraints redundant (rank-deficient Phi_q).
Model spatial_double_pendulum(bool redundant) {
  // B moves with A at first, so the initial velocities satisfy both rods.
  Model m = testing::chain_model(3, {{1.0, {1.0, 0.0, 0.0}, {0.0, 0.0, 0.5}}, {0.5, {1.0, -0.6, 0.8}, {0.0, 0.0, 0.5}}});
  if (redundant) m.elements.push_back(std::make_shared<Rod>("r2bis", 0, 1, Eigen::VectorXd(), 1.0));
  return m;
}

TEST(AlmIndex3Spatial, DoublePendulumWithRedundantRod) {
  const Formulation* f = Registry::instance().find("alm-index3");
  ASSERT_NE(f, nullptr);
  const Model plain = spatial_double_pendulum(false), redundant = spatial_double_pendulum(true);
  Monitor m_plain(plain), m_redundant(redundant);
  // Faster than the single pendulum, so h = 5e-4 s for the same energy error (O(h^2): 1.5e-4 J at
  // 1e-3 s, 3.7e-5 J at 5e-4 s over these 2 s).
  const RunStats s_plain = f->create(plain, "trapezoidal", 5e-4)->run(2.0, &m_plain);
  const RunStats s_redundant = f->create(redundant, "trapezoidal", 5e-4)->run(2.0, &m_redundant);
  EXPECT_LT(m_plain.max_drift, 5e-5);
  EXPECT_LT(m_redundant.max_drift, 5e-5);
  EXPECT_LT(m_plain.max_Phi, 1e-11);
  EXPECT_LT(m_redundant.max_Phi, 1e-11);
  EXPECT_LT(m_plain.max_Phi_dot, 1e-6);
  EXPECT_LT(m_redundant.max_Phi_dot, 1e-6);
  // The duplicate rod changes nothing but how the (non-unique) multipliers split; the runs differ
  // only by the Newton tolerance's worth, amplified by 2 s of a chaotic motion.
  EXPECT_LT((m_plain.q_final - m_redundant.q_final).cwiseAbs().maxCoeff(), 1e-7);
  EXPECT_LE(s_plain.newton_iterations, 4 * s_plain.steps);
  EXPECT_LE(s_redundant.newton_iterations, 4 * s_redundant.steps);
  auto sim = f->create(redundant, "trapezoidal", 1e-3);
  sim->run(0.1, nullptr);
  EXPECT_EQ(testing::allocations_during([&] { sim->run(0.1, nullptr); }), 0);
}

// Planar double pendulum, and the same motion as a spatial model (z = 0): the first runs on the
// fixed-size 4x4 path (closed-form inverse), the second on the dynamic path (LDLT).
Model double_pendulum(int dim) {
  return testing::chain_model(dim, {{1.0, {1.0, 0.0, 0.0}}, {2.0, {1.6, -0.8, 0.0}}});
}

TEST(AlmIndex3DoublePendulum, FixedAndDynamicSizesAgree) {
  const Formulation* f = Registry::instance().find("alm-index3");
  ASSERT_NE(f, nullptr);
  const Model planar = double_pendulum(2), spatial = double_pendulum(3);
  Monitor m_planar(planar), m_spatial(spatial);
  auto sim = f->create(planar, "trapezoidal", 5e-4);
  const RunStats s_planar = sim->run(2.0, &m_planar);
  f->create(spatial, "trapezoidal", 5e-4)->run(2.0, &m_spatial);
  // The trapezoidal rule's O(h^2) energy error: 1.9e-4 J here, the heavy lower mass whipping round.
  EXPECT_LT(m_planar.max_drift, 3e-4);
  EXPECT_LT(m_planar.max_Phi, 1e-11);
  EXPECT_LT(m_planar.max_Phi_dot, 1e-6);
  EXPECT_LE(s_planar.newton_iterations, 4 * s_planar.steps);
  EXPECT_NEAR(m_planar.max_drift, m_spatial.max_drift, 1e-8);
  for (int p = 0; p < 2; ++p)
    for (int c = 0; c < 2; ++c) EXPECT_NEAR(m_planar.q_final[2 * p + c], m_spatial.q_final[3 * p + c], 1e-8);
  EXPECT_EQ(testing::allocations_during([&] { sim->run(0.1, nullptr); }), 0);
}

}  // namespace
}  // namespace mbs
