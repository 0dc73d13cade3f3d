// Formulation "rattle": the composition coefficients; the orders 2, 4, 6 measured on a pendulum
// against its exact motion; Phi and Phi_q v at round-off after long runs; bounded energy error
// (symplectic: no secular drift); redundant constraints (the pinned bar); what it refuses (dampers,
// contacts); and no allocation on the dynamic-size path (the pendulum's fixed-size path is in
// test_allocations.cpp with every case).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <tuple>
#include <utility>
#include <numeric>

#include "core/formulation.hpp"
#include "core/natural_coordinates.hpp"
#include "problem/problem.hpp"
#include "common/quadratic_rows.hpp"
#include "rattle/rattle.hpp"
#include "references/simple_pendulum.hpp"
#include "support/alloc_counter.hpp"
#include "support/models.hpp"
#include "support/monitor.hpp"

namespace mbs {
namespace {

const rattle::Composition& composition(const std::string& name) {
  for (const rattle::Composition& c : rattle::compositions())
    if (c.name == name) return c;
  throw std::runtime_error("no composition " + name);
}

// Symmetric, consistent (sum 1) and, for order p >= 4, sum gamma^3 = 0 (and gamma^5 for 6): the
// necessary conditions of HLW V.3.2; the order itself is measured below.
TEST(RattleCompositions, SymmetricWithVanishingOddMoments) {
  for (const rattle::Composition& c : rattle::compositions()) {
    SCOPED_TRACE(c.name);
    const size_t s = c.gamma.size();
    for (size_t i = 0; i < s; ++i) EXPECT_DOUBLE_EQ(c.gamma[i], c.gamma[s - 1 - i]);
    auto moment = [&](int k) {
      double sum = 0.0;
      for (double g : c.gamma) sum += std::pow(g, k);
      return sum;
    };
    EXPECT_NEAR(moment(1), 1.0, 1e-15);
    if (c.order >= 4) {
      EXPECT_NEAR(moment(3), 0.0, 1e-15);
    }
    if (c.order >= 6) {
      EXPECT_NEAR(moment(5), 0.0, 1e-15);
    }
  }
  EXPECT_EQ(composition("plain").gamma.size(), 1u);
  EXPECT_EQ(composition("suzuki4").gamma.size(), 5u);
  EXPECT_EQ(composition("kahan-li6").gamma.size(), 9u);
  // Suzuki: gamma_1 = 1 / (4 - 4^(1/3)) = 0.41449077179437...
  EXPECT_NEAR(composition("suzuki4").gamma[0], 0.4144907717943757, 1e-15);
}

// The fixed-size path's explicit quadratics (common/quadratic_rows.hpp): Phi and Phi_q equal
// NaturalCoordinates' at points off the constraints, and Phi_q is Phi's derivative (central
// differences, exact for a quadratic up to round-off).
TEST(RattleQuadraticRows, MatchNaturalCoordinatesAndFiniteDifferences) {
  const Model model = testing::chain_model(2, {{1.0, Eigen::Vector3d(0.6, -0.8, 0)}});
  const NaturalCoordinates nat(model);
  const QuadraticRows<2, 1> quad(nat);
  for (const Eigen::Vector2d& q : {Eigen::Vector2d(0.6, -0.8), Eigen::Vector2d(-1.7, 0.3), Eigen::Vector2d(2.5, 4.0)}) {
    EXPECT_TRUE(quad.matches(nat, q));
    Eigen::Matrix<double, 1, 1> phi, phi_nat, phi_p, phi_m;
    Eigen::Matrix<double, 1, 2> G, G_fd;
    quad.evaluate(q, phi, G);
    nat.Phi(q, phi_nat);
    EXPECT_NEAR(phi[0], phi_nat[0], 1e-14 * q.squaredNorm());
    const double d = 1e-4;
    for (int j = 0; j < 2; ++j) {
      Eigen::Matrix<double, 1, 2> unused;
      quad.evaluate(q + d * Eigen::Vector2d::Unit(j), phi_p, unused);
      quad.evaluate(q - d * Eigen::Vector2d::Unit(j), phi_m, unused);
      G_fd(0, j) = (phi_p[0] - phi_m[0]) / (2 * d);
    }
    EXPECT_LT((G - G_fd).cwiseAbs().maxCoeff(), 1e-10) << G << " vs " << G_fd;
  }
}

// The run's largest |Phi|, |Phi_q v| and energy error, the last over [0, t_early] too, and its last state.
testing::Monitor run(const Model& model, const std::string& integrator, double h, double t_end, double t_early = 0.0) {
  testing::Monitor rec(model, {false, t_early});
  Registry::instance().find("rattle")->create(model, integrator, h)->run(t_end, &rec);
  return rec;
}

Model pendulum() { return testing::chain_model(2, {{1.0, Eigen::Vector3d(1, 0, 0)}}); }

// A 1 m pendulum released horizontally, the mass's position at t = 1.5 s against the exact motion
// (Jacobi elliptic functions): halving h divides the error by 2^p, p = 2, 4, 6, within 25 %
// (the steps are chosen where the error is far above round-off and in the asymptotic range).
TEST(Rattle, ConvergenceOrders246AgainstTheExactPendulum) {
  const Model model = pendulum();
  const SimplePendulumExact exact(1.0, 9.81, M_PI / 2);
  const double t_end = 1.5;
  const Eigen::Vector2d r_exact(std::sin(exact.theta(t_end)), -std::cos(exact.theta(t_end)));
  struct Expect {
    const char* name;
    int order;
    double h;
  };
  for (const Expect& e : {Expect{"plain", 2, 1.5e-3}, Expect{"suzuki4", 4, 1.5e-2}, Expect{"kahan-li6", 6, 3e-2}}) {
    SCOPED_TRACE(e.name);
    const double err_h = (run(model, e.name, e.h, t_end).q_final - r_exact).norm();
    const double err_h2 = (run(model, e.name, e.h / 2, t_end).q_final - r_exact).norm();
    const double ratio = err_h / err_h2, expected = std::pow(2.0, e.order);
    EXPECT_GT(ratio, expected / 1.25) << err_h << " -> " << err_h2;
    EXPECT_LT(ratio, expected * 1.25) << err_h << " -> " << err_h2;
    EXPECT_GT(err_h2, 1e-11);  // above round-off: the ratio measures the method
  }
}

// 2000 s (about 850 periods) at the pendulum's rule-passing steps: the rod holds at both levels
// to round-off, and the energy error stays as large as over the first 20 s (a symplectic method's
// bounded oscillation, no secular drift), within its order's bound C h^p.
TEST(Rattle, LongRunConstraintsAtRoundOffAndNoEnergyDrift) {
  const Model model = pendulum();
  struct Expect {
    const char* name;
    double h, max_de;  // J: the energy error's bound at this h (measured ~0.6 of it)
  };
  for (const Expect& e : {Expect{"plain", 1e-3, 5e-5}, Expect{"suzuki4", 2e-2, 1e-5}, Expect{"kahan-li6", 5e-2, 1e-5}}) {
    SCOPED_TRACE(e.name);
    const testing::Monitor r = run(model, e.name, e.h, 2000.0, 20.0);
    EXPECT_LT(r.max_Phi, 1e-14);
    EXPECT_LT(r.max_Phi_dot, 1e-13);
    EXPECT_LT(r.max_drift, e.max_de);
    EXPECT_LT(r.max_drift, 1.1 * r.max_drift_early) << "energy drifts: " << r.max_drift_early << " in 20 s, " << r.max_drift << " in 2000 s";
  }
}

// Energy error of a symplectic method of order p: O(h^p). Halving h divides the largest energy
// error over a swing by ~2^p.
TEST(Rattle, EnergyErrorFallsWithTheOrder) {
  const Model model = pendulum();
  for (const auto& [name, order, h] : {std::tuple{"plain", 2, 4e-3}, std::tuple{"suzuki4", 4, 4e-2}, std::tuple{"kahan-li6", 6, 8e-2}}) {
    SCOPED_TRACE(name);
    const double coarse = run(model, name, h, 5.0).max_drift, fine = run(model, name, h / 2, 5.0).max_drift;
    EXPECT_GT(coarse / fine, std::pow(2.0, order) / 1.5) << coarse << " -> " << fine;
    EXPECT_LT(coarse / fine, std::pow(2.0, order) * 1.5) << coarse << " -> " << fine;
  }
}

// A 3D double pendulum (dynamic-size path, spatial rods): constraints at round-off, energy bounded.
TEST(Rattle, SpatialDoublePendulumHoldsItsRods) {
  const Model model = testing::chain_model(
      3, {{1.0, Eigen::Vector3d(1, 0, 0), Eigen::Vector3d(0, 0, 1)}, {0.5, Eigen::Vector3d(1, -1, 0), Eigen::Vector3d(0, 0, 1)}});
  for (const auto& [name, max_de] : {std::pair{"plain", 5e-4}, std::pair{"suzuki4", 1e-7}, std::pair{"kahan-li6", 1e-7}}) {
    SCOPED_TRACE(name);
    const testing::Monitor r = run(model, name, 1e-3, 20.0, 2.0);
    EXPECT_LT(r.max_Phi, 1e-13);
    EXPECT_LT(r.max_Phi_dot, 1e-12);
    EXPECT_LT(r.max_drift, max_de);
    std::printf("%s: max |Phi| %.3g m, |Phi_q v| %.3g m/s, energy error %.3g J\n", name, r.max_Phi, r.max_Phi_dot, r.max_drift);
  }
}

// Large steps on the dynamic-size path: the modified Newton (matrix kept at the stage's start)
// contracts slowly where the rods turn far in a stage, and full Newton takes over; either way the
// rods hold to round-off.
TEST(Rattle, LargeStepsOnTheDynamicPathStillHoldTheRods) {
  const Model model = testing::chain_model(
      3, {{1.0, Eigen::Vector3d(1, 0, 0), Eigen::Vector3d(0, 0, 3)}, {0.5, Eigen::Vector3d(1, -1, 0), Eigen::Vector3d(0, 0, 3)}});
  for (const double h : {0.05, 0.1}) {
    SCOPED_TRACE(h);
    const testing::Monitor r = run(model, "plain", h, 5.0);
    EXPECT_LT(r.max_Phi, 1e-13);
    EXPECT_LT(r.max_Phi_dot, 1e-12);
  }
}

// The pinned bar: two spherical joints on one hinge, rigid body rows; rank below the row count.
// The kept rows and the dropped ones hold to round-off, and the energy is conserved.
TEST(Rattle, RedundantConstraintsHold) {
  const Problem p = load_problem(MBS_SOURCE_DIR "/problems/pinned_bar.yaml");
  ASSERT_GT(p.model.nc(), 0);
  for (const char* name : {"plain", "suzuki4", "kahan-li6"}) {
    SCOPED_TRACE(name);
    const testing::Monitor r = run(p.model, name, 1e-3, 2.0);
    EXPECT_LT(r.max_Phi, 1e-13);
    EXPECT_LT(r.max_Phi_dot, 1e-12);
    EXPECT_LT(r.max_drift, 1e-5 * std::max(1.0, std::abs(r.e0)));
  }
}

// Refusals, each with its reason: a damper (velocity-dependent force), contacts, linearization.
TEST(Rattle, DeclaresWhatItCannotRun) {
  const Formulation* f = Registry::instance().find("rattle");
  ASSERT_NE(f, nullptr);
  const Problem flyball = load_problem(MBS_SOURCE_DIR "/problems/flyball_governor.yaml");
  EXPECT_NE(f->unsupported_reason(flyball.model).find("depends on the velocities"), std::string::npos)
      << f->unsupported_reason(flyball.model);
  const Problem wall = load_problem(MBS_SOURCE_DIR "/problems/double_pendulum_wall.yaml");
  EXPECT_NE(f->unsupported_reason(wall.model).find("does not support contact"), std::string::npos)
      << f->unsupported_reason(wall.model);
  // A spring without damping and a constant torque depend on q only: supported.
  const Problem andrews = load_problem(MBS_SOURCE_DIR "/problems/andrews.yaml");
  EXPECT_EQ(f->unsupported_reason(andrews.model), "");
  EXPECT_FALSE(f->linearization_unsupported_reason(pendulum()).empty());
  EXPECT_THROW(f->create(pendulum(), "rk4", 1e-2), SolverError);
  EXPECT_THROW(f->create(pendulum(), "plain", 0.0), SolverError);
}

// A Newton failure is a SolverError naming the stage and time: a step far too large for the
// constraints (the pendulum moving a whole rod length in one stage).
TEST(Rattle, NewtonFailureIsASolverError) {
  const Model model = testing::chain_model(2, {{1.0, Eigen::Vector3d(1, 0, 0), Eigen::Vector3d(0, -40, 0)}});
  try {
    run(model, "plain", 0.5, 1.0);
    ADD_FAILURE() << "expected a SolverError";
  } catch (const SolverError& e) {
    EXPECT_NE(std::string(e.what()).find("rattle: Newton"), std::string::npos) << e.what();
  }
}

// Bricard's mechanism (60 coordinates, redundant loop) takes the sparse path by default: it agrees
// with the dense one to round-off over 0.5 s and allocates nothing in run().
TEST(Rattle, SparseAgreesWithDenseOnBricard) {
  const Problem p = load_problem(MBS_SOURCE_DIR "/problems/bricard.yaml");
  ASSERT_TRUE(sparse_path(LinearAlgebra::kAuto, p.model));
  const std::vector<double>& gamma = composition("suzuki4").gamma;
  testing::Monitor dense(p.model), sparse(p.model);
  rattle::make_simulator(p.model, gamma, 0.01, LinearAlgebra::kDense)->run(0.5, &dense);
  auto sim = rattle::make_simulator(p.model, gamma, 0.01, LinearAlgebra::kSparse);
  sim->run(0.5, &sparse);
  EXPECT_LT((dense.q_final - sparse.q_final).cwiseAbs().maxCoeff(), 1e-11);
  EXPECT_LT((dense.v_final - sparse.v_final).cwiseAbs().maxCoeff(), 1e-10);
  EXPECT_LT(sparse.max_Phi, 1e-13);
  EXPECT_LT(sparse.max_Phi_dot, 1e-11);
  if (testing::allocation_counting_supported()) {
    EXPECT_EQ(testing::allocations_during([&] { sim->run(0.5, nullptr); }), 0);
  }
}

TEST(Rattle, DynamicSizePathAllocatesNothing) {
  MBS_SKIP_WITHOUT_ALLOCATION_COUNTING();
  const Problem p = load_problem(MBS_SOURCE_DIR "/problems/pinned_bar.yaml");
  for (const char* name : {"plain", "kahan-li6"}) {
    auto sim = Registry::instance().find("rattle")->create(p.model, name, 1e-2);
    sim->run(1.0, nullptr);  // warm-up
    EXPECT_EQ(testing::allocations_during([&] { sim->run(1.0, nullptr); }), 0) << name;
  }
}

}  // namespace
}  // namespace mbs
