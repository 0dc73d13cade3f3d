// Formulation "partitioned" (coordinate partitioning over natural coordinates): the partition rule
// on known Jacobians, redundant constraints, a closed loop, re-partitioning on the swinging
// pendulum, a spatial model, solver errors, and allocation-free runs on the dynamic-size path.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "common/partition.hpp"
#include "common/partition_keeper.hpp"
#include "core/formulation.hpp"
#include "elements/plane_contact.hpp"
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

const Problem& pendulum() {
  static const Problem p = load_problem(MBS_SOURCE_DIR "/problems/planar_pendulum.yaml");
  return p;
}

const Formulation& formulation() {
  const Formulation* f = Registry::instance().find("partitioned");
  EXPECT_NE(f, nullptr);
  return *f;
}

// Runs integrator at setting to t_end; returns the monitor and, optionally, the number of
// re-partitions and of steps.
Monitor run(const Model& model, const std::string& integrator, double setting, double t_end,
            long* repartitions = nullptr, long* steps = nullptr) {
  Monitor m(model);
  auto sim = formulation().create(model, integrator, setting);
  sim->run(t_end, &m);
  if (repartitions != nullptr) *repartitions = dynamic_cast<const PartitionedRun&>(*sim).repartitions();
  if (steps != nullptr) *steps = sim->stats().steps;
  return m;
}

using testing::four_bar;

// ---------------------------------------------------------------------------------------------
// The partition rule

TEST(Partition, FullPivotingPicksTheDependentCoordinatesOfAKnownJacobian) {
  // By hand: the largest entry, 4 at (1, 1), is the first pivot; eliminating it leaves row 0 as
  // [1, 0, -1.5, 0], whose largest entry -1.5 (column 2) is the second. So q_d = {1, 2},
  // q_i = {0, 3}, both rows kept, pivot ratio 1.5 / 4.
  Eigen::MatrixXd Phi_q(2, 4);
  Phi_q << 1, 2, 0, 0.5,  //
      0, 4, 3, 1;
  const Partition p = choose_partition(Phi_q);
  EXPECT_EQ(p.rank, 2);
  EXPECT_EQ(p.dependent, (std::vector<int>{1, 2}));
  EXPECT_EQ(p.independent, (std::vector<int>{0, 3}));
  EXPECT_EQ(p.rows, (std::vector<int>{0, 1}));
  EXPECT_DOUBLE_EQ(p.pivot_ratio, 1.5 / 4);
  EXPECT_EQ(p.ndof(), 2);
}

TEST(Partition, PendulumDependsOnTheCoordinateAlongTheRod) {
  // Phi_q = -(r_ground - r)^T / L = r^T / L for a pivot at the origin: at the horizontal the rod
  // fixes x and y is free; hanging down it fixes y.
  const Model& model = pendulum().model;
  const NaturalCoordinates nat(model);
  Eigen::MatrixXd Phi_q(1, 2);
  nat.Phi_q(Eigen::Vector2d(-1.0, 0.0), Phi_q);
  Partition p = choose_partition(Phi_q);
  EXPECT_EQ(p.dependent, std::vector<int>{0});
  EXPECT_EQ(p.independent, std::vector<int>{1});
  EXPECT_DOUBLE_EQ(p.pivot_ratio, 1.0);
  nat.Phi_q(Eigen::Vector2d(std::sin(0.3), -std::cos(0.3)), Phi_q);
  p = choose_partition(Phi_q);
  EXPECT_EQ(p.dependent, std::vector<int>{1});
  EXPECT_EQ(p.independent, std::vector<int>{0});
}

TEST(Partition, RedundantRowsAreDroppedAtTheRankThreshold) {
  // Row 2 = row 0 + row 1: rank 2, one row dropped, and the kept rows give an invertible Phi_d.
  Eigen::MatrixXd Phi_q(3, 4);
  Phi_q << 1, 2, 0, 0.5,  //
      0, 4, 3, 1,         //
      1, 6, 3, 1.5;
  Partition p = choose_partition(Phi_q);
  EXPECT_EQ(p.rank, 2);
  EXPECT_EQ(p.rows.size(), 2u);
  EXPECT_EQ(p.dependent, (std::vector<int>{1, 2}));
  EXPECT_EQ(p.independent, (std::vector<int>{0, 3}));
  Eigen::MatrixXd Phi_d(2, 2);
  for (int a = 0; a < 2; ++a)
    for (int b = 0; b < 2; ++b) Phi_d(a, b) = Phi_q(p.rows[a], p.dependent[b]);
  EXPECT_GT(std::abs(Phi_d.determinant()), 1.0);
  // A redundant row off by 1e-9 (a constraint violation the loader accepts) is still redundant;
  // off by 1e-5 (far above the 1e-7 threshold) it is a genuine constraint.
  Phi_q(2, 3) += 1e-9;
  EXPECT_EQ(choose_partition(Phi_q).rank, 2);
  Phi_q(2, 3) += 1e-5;
  EXPECT_EQ(choose_partition(Phi_q).rank, 3);
}

TEST(Partition, ChoosingAllocatesNothing) {
  MBS_SKIP_WITHOUT_ALLOCATION_COUNTING();
  Eigen::MatrixXd Phi_q = Eigen::MatrixXd::Random(3, 5);
  Partitioner partitioner(3, 5);
  Partition p = partitioner.reserved();
  partitioner.choose(Phi_q, p);  // warm-up
  Phi_q(0, 0) += 1.0;
  EXPECT_EQ(testing::allocations_during([&] { partitioner.choose(Phi_q, p); }), 0);
  EXPECT_EQ(p.rank, 3);
}

// ---------------------------------------------------------------------------------------------
// Redundant constraints and closed loops

TEST(Partitioned, DuplicatedRodGivesTheMotionOfTheSingleRod) {
  // A double pendulum, then the same with its second rod twice: Phi_q is 3 x 4 of rank 2, one row
  // is dropped, and the motion is that of the non-redundant model to round-off (same partition,
  // same arithmetic on the kept rows), for every integrator.
  const Model single = testing::chain_model(2, {{1.0, {0.6, -0.8, 0.0}}, {0.5, {1.3, -0.4, 0.0}}});
  Model redundant = single;
  redundant.elements.push_back(redundant.elements[1]);
  ASSERT_EQ(formulation().unsupported_reason(redundant), "");
  for (const char* integrator : {"rk4", "dopri5", "fehlberg8"}) {
    const double setting = std::string(integrator) == "rk4" ? 1e-3 : 1e-9;
    const Monitor one = run(single, integrator, setting, 2.0), both = run(redundant, integrator, setting, 2.0);
    EXPECT_LT((both.q_final - one.q_final).cwiseAbs().maxCoeff(), 1e-12) << integrator;
    EXPECT_LT(both.max_Phi, 1e-11) << integrator;  // both copies of the rod hold
    EXPECT_NEAR(both.max_drift, one.max_drift, 1e-12) << integrator;
  }
  auto sim = formulation().create(redundant, "rk4", 1e-3);
  const Partition& p = dynamic_cast<const PartitionedRun&>(*sim).partition();
  sim->run(0.1, nullptr);
  EXPECT_EQ(p.rank, 2);
  EXPECT_EQ(p.rows.size(), 2u);
}

TEST(Partitioned, FourBarConservesEnergyToTheMethodsOrder) {
  const Model model = four_bar();  // E = 14.2 J; the partition changes 12 times in 2 s
  const double t_end = 2.0;
  // RK4: the energy error is O(h^4), so halving h divides it by ~16 (measured 8.2e-7 J at
  // h = 1.25e-3 s, 14.8 times less than at 2.5e-3 s).
  long repartitions = 0;
  const Monitor coarse = run(model, "rk4", 0.0025, t_end), fine = run(model, "rk4", 0.00125, t_end, &repartitions);
  EXPECT_GT(coarse.max_drift / fine.max_drift, 10.0);
  EXPECT_LT(coarse.max_drift / fine.max_drift, 24.0);
  EXPECT_LT(fine.max_drift, 2e-6);  // J
  EXPECT_GT(repartitions, 0);
  // The loop closes at every step: positions by Newton-Raphson (|Phi| <= 1e-12 L), velocities in
  // the null space of Phi_q (to round-off).
  EXPECT_LT(fine.max_Phi, 1e-11);
  EXPECT_LT(fine.max_Phi_dot, 1e-12);
  // Against an independent formulation: the augmented Lagrangian at h = 1e-4 s, whose O(h^2)
  // error is ~5e-7 m here (RK4's at 1.25e-3 s, ~2e-8 m).
  Monitor alm(model);
  Registry::instance().find("alm-index3")->create(model, "trapezoidal", 1e-4)->run(t_end, &alm);
  EXPECT_LT((fine.q_final - alm.q_final).cwiseAbs().maxCoeff(), 2e-6);
  // The adaptive pairs at tol = 1e-10 agree with RK4 (both errors ~1e-8 m) and keep the energy
  // to ~tol x E x steps.
  for (const char* integrator : {"dopri5", "fehlberg8"}) {
    const Monitor m = run(model, integrator, 1e-10, t_end);
    EXPECT_LT((m.q_final - fine.q_final).cwiseAbs().maxCoeff(), 1e-7) << integrator;
    EXPECT_LT(m.max_drift, 1e-7) << integrator;
  }
}

// ---------------------------------------------------------------------------------------------
// Re-partitioning

TEST(Partitioned, PendulumRepartitionsAtEveryCrossingOfTheDiagonalAndStaysFourthOrder) {
  // Released at the horizontal, x is dependent; the partition changes each time the rod crosses
  // 45 degrees from the vertical (|x| = |y|), within the 1% band of kRepartitionFactor.
  const Problem& p = pendulum();
  const SimplePendulumExact exact = SimplePendulumExact::from_problem(p);
  const double t_end = p.run.end_time;
  int crossings = 0;
  for (double t = 0.0, prev = exact.theta(0.0); t < t_end; t += 1e-4) {
    const double th = exact.theta(t + 1e-4);
    if ((std::abs(prev) - M_PI / 4) * (std::abs(th) - M_PI / 4) < 0) ++crossings;
    prev = th;
  }
  EXPECT_EQ(crossings, 17);  // 4 per period (2.37 s) over 10 s
  long n = 0;
  const Monitor m = run(p.model, "rk4", 1e-3, t_end, &n);
  EXPECT_EQ(n, crossings);
  EXPECT_LT(m.max_Phi, 1e-11);  // m

  // RK4's global error is O(h^4) through the re-partitions (the state is consistent whole at each):
  // 1.5e-6 m at h = 0.01 s, 18 times less at 0.005 s.
  auto error = [&](const std::string& integrator, double setting, long* count = nullptr, long* steps = nullptr) {
    return (run(p.model, integrator, setting, t_end, count, steps).q_final - exact.position(t_end)).norm();
  };
  const double e1 = error("rk4", 0.01), e2 = error("rk4", 0.005);
  EXPECT_GT(e1 / e2, 10.0);
  EXPECT_LT(e1 / e2, 24.0);
  EXPECT_LT(e2, 1e-6);  // m
  // The adaptive pairs re-partition at the same crossings (Dormand-Prince restarting at each), and
  // their global error stays below the sum of the local tolerances, steps x tol x (1 + max|y|),
  // with |y| <= sqrt(2 g L) = 4.4 m/s (measured at tol = 1e-10: 1.1e-8 m in 1133 steps, 5.5e-8 m
  // in 190).
  const double tol = 1e-10, y_max = std::sqrt(2 * 9.81 * 1.0);
  for (const char* integrator : {"dopri5", "fehlberg8"}) {
    long count = 0, steps = 0;
    const double e = error(integrator, tol, &count, &steps);
    EXPECT_LT(e, steps * tol * (1 + y_max)) << integrator;
    EXPECT_EQ(count, crossings) << integrator;
  }
}

// ---------------------------------------------------------------------------------------------
// Spatial model, failures, allocations

TEST(Partitioned, ConicalPendulumKeepsItsCircle) {
  // Spatial pendulum (2 degrees of freedom, dynamic sizes) on a horizontal circle: rod at alpha =
  // 30 degrees from the vertical, angular rate w^2 = g / (L cos alpha). Height and radius stay put
  // and the azimuth advances at w. RK4: 7.5e-7 m at h = 0.02 s, 16 times less at 0.01 s.
  const double L = 1.0, alpha = M_PI / 6, g = 9.81, w = std::sqrt(g / (L * std::cos(alpha)));
  const double radius = L * std::sin(alpha);
  Model model = testing::chain_model(3, {{1.0, {radius, -L * std::cos(alpha), 0.0}, {0.0, 0.0, w * radius}}});
  const double t_end = 2.0;
  auto error = [&](double h) {
    const Monitor m = run(model, "rk4", h, t_end);
    const Eigen::Vector3d exact(radius * std::cos(w * t_end), -L * std::cos(alpha), radius * std::sin(w * t_end));
    return (m.q_final - exact).norm();
  };
  const double e1 = error(0.02), e2 = error(0.01);
  EXPECT_GT(e1 / e2, 10.0);
  EXPECT_LT(e1 / e2, 24.0);
  EXPECT_LT(e2, 2e-7);  // m
}

TEST(Partitioned, FreePointWithoutConstraintsFallsOnItsParabola) {
  // No rods: rank 0, every coordinate independent. The motion is quadratic in t, which RK4
  // integrates exactly, so only round-off is left.
  Model model = pendulum().model;
  model.elements.clear();
  model.points[0].v0 << 1.0, 2.0;
  EXPECT_EQ(formulation().unsupported_reason(model), "");
  const double t_end = 1.0, g = 9.81;
  for (const char* integrator : {"rk4", "dopri5"}) {
    const Monitor m = run(model, integrator, std::string(integrator) == "rk4" ? 0.1 : 1e-8, t_end);
    EXPECT_NEAR(m.q_final[0], -1.0 + t_end, 1e-13) << integrator;
    EXPECT_NEAR(m.q_final[1], 2.0 * t_end - 0.5 * g * t_end * t_end, 1e-12) << integrator;
  }
}

TEST(Partitioned, RefusesBadSettingsAndReportsNewtonFailure) {
  const Model& model = pendulum().model;
  EXPECT_EQ(formulation().unsupported_reason(model), "");
  EXPECT_THROW(formulation().create(model, "rk4", 0.0), SolverError);
  EXPECT_THROW(formulation().create(model, "rk4", std::nan("")), SolverError);
  EXPECT_THROW(formulation().create(model, "trapezoidal", 1e-3), SolverError);
  // Contacts are not constraints of NaturalCoordinates (impacts need events): said so, not run.
  Model wall = model;
  wall.elements.push_back(std::make_shared<PlaneContact>("wall", 0, Eigen::Vector2d(0.0, -2.0), Eigen::Vector2d(0.0, 1.0), 0.5));
  EXPECT_NE(formulation().unsupported_reason(wall).find("contacts"), std::string::npos);
  // A step of 1 s on a 2.4 s period throws a stage's independent coordinate off the circle
  // (|y| > L): no q_d satisfies the rod, and Newton-Raphson says so.
  auto sim = formulation().create(model, "rk4", 1.0);
  try {
    sim->run(10.0, nullptr);
    ADD_FAILURE() << "no SolverError";
  } catch (const SolverError& e) {
    EXPECT_NE(std::string(e.what()).find("partitioned: Newton-Raphson on the dependent coordinates did not converge"),
              std::string::npos)
        << e.what();
  }
}

TEST(Partitioned, DoublePendulumAndDynamicSizePathsAllocateNothing) {
  MBS_SKIP_WITHOUT_ALLOCATION_COUNTING();
  // The fixed-size double pendulum (re-partitioning: it starts outstretched), the four-bar and the
  // redundant four-bar on the dynamic-size path.
  const Model double_pendulum = testing::chain_model(2, {{1.0, {1.0, 0.0, 0.0}}, {0.5, {1.7, 0.0, 0.0}}});
  Model redundant = four_bar();
  redundant.elements.push_back(redundant.elements[1]);
  for (const Model& model : {double_pendulum, four_bar(), redundant}) {
    for (const char* integrator : {"rk4", "dopri5", "fehlberg8"}) {
      auto sim = formulation().create(model, integrator, std::string(integrator) == "rk4" ? 1e-3 : 1e-8);
      sim->run(2.0, nullptr);  // warm-up
      EXPECT_EQ(testing::allocations_during([&] { sim->run(2.0, nullptr); }), 0) << integrator;
    }
  }
}

TEST(Partitioned, LinearizesTheSpatialPendulumInItsIndependentCoordinatesXY) {
  // The spec's x, y description: M_q = m I, K_q = (m g / l) I, eigenvalues +-i sqrt(g/l) twice.
  const Problem p = load_problem(MBS_SOURCE_DIR "/problems/pendulum_3d_linearization.yaml");
  const Formulation* f = Registry::instance().find("partitioned");
  ASSERT_NE(f, nullptr);
  ASSERT_EQ(f->linearization_unsupported_reason(p.model), "");
  auto lin = f->create_linearizer(p.model);
  const Linearization& l = lin->linearize();
  EXPECT_NE(l.coordinates.find("x(P), y(P)"), std::string::npos) << l.coordinates;
  ASSERT_EQ(l.terms[0].second.rows(), 2);
  EXPECT_LT((l.terms[0].second - Eigen::Matrix2d::Identity()).norm(), 1e-15);         // M_r (kg)
  EXPECT_LT((l.terms[1].second - 9.81 * Eigen::Matrix2d::Identity()).norm(), 1e-13);  // K_r (N/m)
  ASSERT_EQ(l.eigenvalues.size(), 4u);
  for (const Eigenvalue& e : l.eigenvalues) {
    EXPECT_TRUE(e.is_true) << e.why;
    EXPECT_NEAR(std::abs(e.s.imag()), std::sqrt(9.81), 1e-12);
    EXPECT_NEAR(e.s.real(), 0.0, 1e-12);
  }
}

}  // namespace
}  // namespace mbs
