// Formulation "joint-partitioned" (coordinate partitioning in a spanning tree's joint coordinates,
// formulations/joint_partitioned/): a parallelogram four-bar follows its exact pendulum motion at
// RK4's order, the slider-crank keeps its energy to the methods' orders, the partition leaves as
// many independent coordinates as the mechanism has degrees of freedom, a tree runs as recursive's
// ODE and quaternion coordinates are refused with the reason, and run() allocates nothing.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "common/partition.hpp"
#include "common/partition_keeper.hpp"
#include "core/formulation.hpp"
#include "problem/problem.hpp"
#include "support/alloc_counter.hpp"
#include "support/monitor.hpp"
#include "support/n_four_bar.hpp"

namespace mbs {
namespace {

const Formulation& jp() {
  const Formulation* f = Registry::instance().find("joint-partitioned");
  EXPECT_NE(f, nullptr);
  return *f;
}

const Problem& slider_crank() {
  static const Problem p = load_problem(MBS_SOURCE_DIR "/problems/slider_crank.yaml");
  return p;
}

// The N-four-bar with N = 1: two cranks and a coupler, a parallelogram, which moves as one inverted
// pendulum (tests/support/n_four_bar.hpp): J theta'' = g c sin theta from theta = 0, theta' = 1 rad/s.
// In 0.5 s theta reaches ~0.8 rad, short of the singular position (cranks horizontal) at pi/2.
Problem parallelogram(double end_time) {
  return load_problem_text(testing::n_four_bar_yaml(1, end_time), "n_four_bar.yaml");
}

testing::Monitor run(const Model& model, const std::string& integrator, double setting, double t_end,
                     long* repartitions = nullptr) {
  testing::Monitor m(model);
  auto sim = jp().create(model, integrator, setting);
  sim->run(t_end, &m);
  if (repartitions != nullptr) *repartitions = dynamic_cast<const PartitionedRun&>(*sim).repartitions();
  return m;
}

TEST(JointPartitioned, ParallelogramFourBarFollowsItsPendulumAtFourthOrder) {
  const double T = 0.5;
  const Problem p = parallelogram(T);
  const Eigen::Vector2d exact = testing::n_four_bar_reduced(1, T);  // ~1e-13 rad
  ASSERT_LT(exact[0], 1.2);
  const int b0 = p.model.position_offset("crank0");  // the centroid: (sin theta, cos theta) / 2
  const Eigen::Vector2d c_exact = 0.5 * Eigen::Vector2d(std::sin(exact[0]), std::cos(exact[0]));
  double err[2];
  for (int k = 0; k < 2; ++k) {
    const double h = 1e-2 / (1 << k);
    const testing::Monitor m = run(p.model, "rk4", h, T);
    ASSERT_NEAR(m.t_final, T, 1e-12);
    err[k] = (Eigen::Vector2d(m.q_final.segment(b0, 2)) - c_exact).norm();
    // The dependent coordinates by Newton (|Phi| <= 1e-12 of the 1 m scale), the velocities in G's
    // null space to round-off.
    EXPECT_LT(m.max_Phi, 1e-11) << "h = " << h;
    EXPECT_LT(m.max_Phi_dot, 1e-12) << "h = " << h;
  }
  // Order 4: halving h divides the error by 16 asymptotically; the next term of the error, O(h^5),
  // moves the ratio by a share of order h / T here, so 10..24 allowed (as the recursive loops' test).
  EXPECT_GT(err[0] / err[1], 10.0) << err[0] << " " << err[1];
  EXPECT_LT(err[0] / err[1], 24.0) << err[0] << " " << err[1];
  // The adaptive pairs at tol = 1e-10 land within ~tol x 10 of the exact motion (local errors ~tol
  // a step over a few tens of steps, grown by the inverted pendulum's instability).
  for (const char* integrator : {"dopri5", "fehlberg8"}) {
    const testing::Monitor m = run(p.model, integrator, 1e-10, T);
    EXPECT_LT((Eigen::Vector2d(m.q_final.segment(b0, 2)) - c_exact).norm(), 1e-9) << integrator;
  }
}

// The free slider-crank conserves its energy E0 = 3.46 J through 2.77 turns and 11 dead centres.
TEST(JointPartitioned, SliderCrankConservesEnergyToTheMethodsOrder) {
  const Model& model = slider_crank().model;
  const double T = 2.0;
  // RK4: the energy error is O(h^4), halving h divides it by ~16 (10..24 as above).
  long repartitions = 0;
  const testing::Monitor coarse = run(model, "rk4", 2e-3, T), fine = run(model, "rk4", 1e-3, T, &repartitions);
  EXPECT_GT(coarse.max_drift / fine.max_drift, 10.0) << coarse.max_drift << " " << fine.max_drift;
  EXPECT_LT(coarse.max_drift / fine.max_drift, 24.0) << coarse.max_drift << " " << fine.max_drift;
  EXPECT_LT(fine.max_drift, 3.46e-7);  // 1e-7 of E0
  EXPECT_LT(fine.max_Phi, 1e-11);
  EXPECT_LT(fine.max_Phi_dot, 1e-12);
  // The crank turns, so no one joint coordinate stays a good independent one: the partition changes.
  EXPECT_GT(repartitions, 0);
  // The adaptive pairs at tol = 1e-10: local energy errors ~tol x E0 a step, largely cancelling
  // over a turn, so a few tens of tol x E0; their positions differ from RK4's by RK4's own O(h^4)
  // error at h = 1e-3 s.
  for (const char* integrator : {"dopri5", "fehlberg8"}) {
    const testing::Monitor m = run(model, integrator, 1e-10, T);
    EXPECT_LT(m.max_drift, 30 * 1e-10 * 3.46) << integrator;
    EXPECT_LT((m.q_final - fine.q_final).cwiseAbs().maxCoeff(), 2e-7) << integrator;
  }
}

// One independent coordinate on the 1-DOF mechanisms: the slider-crank's 4 joint coordinates (3 pins
// and the slide, one pin cut: 2 rows) and the parallelogram's 3 (4 pins, one cut).
TEST(JointPartitioned, IndependentCoordinatesAreTheDegreesOfFreedom) {
  const Problem four_bar = parallelogram(0.1);
  for (const Model* model : {&slider_crank().model, &four_bar.model}) {
    auto sim = jp().create(*model, "rk4", 1e-3);
    sim->run(0.05, nullptr);
    const Partition& p = dynamic_cast<const PartitionedRun&>(*sim).partition();
    EXPECT_EQ(p.ndof(), 1);
    EXPECT_EQ(p.rank, 2);
    EXPECT_EQ(p.rows.size(), 2u);
  }
}

// A tree has no dependent coordinate: every joint coordinate is independent and the ODE is
// recursive/aba-*'s, so the same steps give the same motion to round-off. A tree with quaternion
// coordinates is refused with its reason.
TEST(JointPartitioned, TreeRunsAsRecursiveAndQuaternionsAreRefused) {
  const Problem p = load_problem(MBS_SOURCE_DIR "/problems/planar_pendulum.yaml");
  ASSERT_EQ(jp().unsupported_reason(p.model), "");
  auto sim = jp().create(p.model, "rk4", 1e-2);
  testing::Monitor m(p.model), r(p.model);
  sim->run(2.0, &m);
  EXPECT_EQ(dynamic_cast<const PartitionedRun&>(*sim).partition().rank, 0);
  Registry::instance().find("recursive")->create(p.model, "aba-rk4", 1e-2)->run(2.0, &r);
  EXPECT_LT((m.q_final - r.q_final).cwiseAbs().maxCoeff(), 1e-13);
  EXPECT_LT((m.v_final - r.v_final).cwiseAbs().maxCoeff(), 1e-13);

  const Problem spatial = load_problem(MBS_SOURCE_DIR "/problems/pendulum_large_amplitude_spatial.yaml");
  EXPECT_NE(jp().unsupported_reason(spatial.model).find("quaternion coordinates are not partitioned"), std::string::npos)
      << jp().unsupported_reason(spatial.model);
  EXPECT_THROW(jp().create(spatial.model, "rk4", 1e-3), SolverError);
}

TEST(JointPartitioned, RunAllocatesNothing) {
  MBS_SKIP_WITHOUT_ALLOCATION_COUNTING();
  for (const char* integrator : {"rk4", "dopri5", "fehlberg8"}) {
    const bool fixed = std::string(integrator) == "rk4";
    auto sim = jp().create(slider_crank().model, integrator, fixed ? 1e-3 : 1e-8);
    sim->run(0.5, nullptr);  // warm-up
    EXPECT_EQ(testing::allocations_during([&] { sim->run(0.5, nullptr); }), 0) << integrator;
  }
}

}  // namespace
}  // namespace mbs
