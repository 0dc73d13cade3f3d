// Formulation "ida-index3": residual Jacobian against finite differences, consistent initial
// conditions, and the planar pendulum's energy drift and exact final position.
#include <gtest/gtest.h>

#include <cmath>

#include "core/formulation.hpp"
#include "core/natural_coordinates.hpp"
#include "ida_index3/ida_residual.hpp"
#include "problem/problem.hpp"
#include "references/simple_pendulum.hpp"
#include "support/ida_dae.hpp"
#include "support/monitor.hpp"

namespace mbs {
namespace {

const char* const kPendulum = testing::kIdaPendulum;
using testing::two_rod_chain;

// Every rtol at or below a threshold meets the energy rule on the pendulum (looser ones pass or
// fail by chance; benchmarks/study_ida_error_test.cpp, docs/formulations.md, Method notes); the test runs
// slightly tighter.
constexpr double kPassingRtol = 1e-11;

class IdaIndex3Dae : public ::testing::TestWithParam<int> {};

TEST_P(IdaIndex3Dae, AnalyticJacobianMatchesFiniteDifferences) {
  const Model model = two_rod_chain(GetParam());
  ida_index3::Index3Dae dae(model);
  const int n = dae.size();
  // An arbitrary state, off the constraint manifold, with nonzero lambda.
  Eigen::VectorXd y = Eigen::VectorXd::LinSpaced(n, -0.9, 1.3);
  Eigen::VectorXd yp = Eigen::VectorXd::LinSpaced(n, 0.7, -0.4);
  y.tail(dae.nc()) << 12.0, -5.0;
  const double cj = 37.0;

  Eigen::MatrixXd J(n, n);
  dae.jacobian(cj, y, J);
  const Eigen::MatrixXd J_fd = testing::finite_difference_iteration_matrix(dae, cj, y, yp);
  EXPECT_LT((J - J_fd).cwiseAbs().maxCoeff(), 1e-7) << "J =\n" << J << "\nJ_fd =\n" << J_fd;
}

TEST_P(IdaIndex3Dae, ConsistentInitialConditionsSatisfyAllConstraintLevels) {
  const Model model = two_rod_chain(GetParam());
  ida_index3::Index3Dae dae(model);
  const NaturalCoordinates& nat = dae.nat();
  const int n = dae.size(), nq = dae.nq(), nc = dae.nc();
  Eigen::VectorXd y(n), yp(n), F(n);
  dae.consistent_initial_conditions(y, yp);
  const auto q = y.head(nq), v = y.segment(nq, nq);

  testing::expect_constraint_levels_met(nat, y, yp);
  // And the residual vanishes, so every block (kinematics, dynamics) is consistent too.
  dae.residual(y, yp, F);
  EXPECT_LT(F.cwiseAbs().maxCoeff(), 1e-13);

  // The projection is mass-orthogonal: v0 - v is in the range of M^-1 Phi_q^T, i.e.
  // M (v0 - v) = Phi_q^T mu for some mu.
  Eigen::MatrixXd Phi_q(nc, nq);
  nat.Phi_q(q, Phi_q);
  const Eigen::VectorXd dp = nat.M_diag().cwiseProduct(model.initial_v() - v);
  const Eigen::VectorXd mu = Phi_q.transpose().colPivHouseholderQr().solve(dp);
  EXPECT_LT((Phi_q.transpose() * mu - dp).norm(), 1e-12);
  EXPECT_GT(dp.norm(), 0.1);  // the chain's v0 was not admissible
}

TEST(IdaIndex3, RedundantConstraintIsRemovedAndTheMotionIsUnchanged) {
  // The pendulum's rod twice: Phi_q has rank 1 of 2. The duplicate row is dropped at setup (its
  // iteration matrix would be singular), the initial conditions are consistent, and the run gives
  // the motion of the single-rod model to round-off.
  const testing::RedundantPendulum pendulum = testing::redundant_pendulum();
  const Model& single = pendulum.single;  // off horizontal, so the rod tension is not zero
  const Model& model = pendulum.twice;
  ida_index3::Index3Dae dae(model);
  EXPECT_EQ(dae.dropped_constraints(), 1);
  EXPECT_EQ(dae.nc(), 1);
  Eigen::VectorXd y(dae.size()), yp(dae.size()), F(dae.size());
  y.setConstant(std::nan(""));
  dae.consistent_initial_conditions(y, yp);
  dae.residual(y, yp, F);
  EXPECT_LT(F.cwiseAbs().maxCoeff(), 1e-13);
  // The kept rod's lambda is the whole rod tension (N), m g cos(theta0) at rest, cos(theta0) = 0.8.
  const double m = single.points[0].mass, g = single.gravity.norm();
  EXPECT_NEAR(std::abs(y[dae.size() - 1]), m * g * 0.8, 1e-12 * m * g);

  testing::Monitor both(model), one(single);
  ida_index3::make_simulator(model, 1e-8)->run(1.0, &both);
  ida_index3::make_simulator(single, 1e-8)->run(1.0, &one);
  EXPECT_LT((both.q_final - one.q_final).norm(), 1e-12);
}

INSTANTIATE_TEST_SUITE_P(PlanarAndSpatial, IdaIndex3Dae, ::testing::Values(2, 3));

// Spatial rigid bodies released from rest at tight tolerances (bricard: five rods on six revolutes,
// one redundant row dropped). The weights of v and lambda before the first step are scaled by the
// first step IDA tries, which is ours: before, they took h = 1 and every first step failed Newton's
// test on lambda at tight rtols, down to IDA_CONV_FAIL at t = 0. And a second run repeats the first
// exactly: before, its first weights took the previous run's last step, so runs differed
// (docs/formulations.md, Method notes).
TEST(IdaIndex3, SpatialRigidBodiesStartFromRestAtTightTolerancesAndRerunExactly) {
  const Problem problem = load_problem(MBS_SOURCE_DIR "/problems/bricard.yaml");
  for (const double rtol : {1e-9, 1e-10, 1e-12}) {
    SCOPED_TRACE(rtol);
    auto sim = ida_index3::make_simulator(problem.model, rtol);
    testing::Monitor first(problem.model), second(problem.model);
    try {
      sim->run(2.0, &first);
    } catch (const SolverError& e) {
      FAIL() << e.what();
    }
    EXPECT_DOUBLE_EQ(first.t_final, 2.0);
    EXPECT_LT(first.max_Phi, 10 * rtol);  // m: Phi = 0 is met to the Newton tolerance
    EXPECT_LT(first.max_drift, 1e-3);  // J, of 4.6 J kinetic energy at most
    const long steps = sim->stats().steps;
    sim->run(2.0, &second);
    EXPECT_EQ(sim->stats().steps, steps);
    EXPECT_EQ(second.q_final, first.q_final);
  }
}


TEST(IdaIndex3, PendulumMeetsEnergyRuleAndExactSolution) {
  const Problem problem = load_problem(kPendulum);
  const Formulation* f = Registry::instance().find("ida-index3");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->unsupported_reason(problem.model), "");
  auto sim = f->create(problem.model, "bdf", kPassingRtol);
  testing::Monitor obs(problem.model);
  const RunStats& stats = sim->run(problem.run.end_time, &obs);

  EXPECT_DOUBLE_EQ(obs.t_final, 10.0);
  EXPECT_LT(obs.max_drift, problem.rule.below);  // 5e-5 J
  EXPECT_LT(obs.max_Phi, 1e-9);                  // m; Phi = 0 is a residual block, met to the Newton tolerance
  EXPECT_LT(obs.max_Phi_dot, 1e-5);              // m/s; only implied by the index-3 equations
  const Eigen::VectorXd exact = SimplePendulumExact::from_problem(problem).position(10.0);
  const int p1 = problem.model.find_point("P1");
  const Eigen::VectorXd r = obs.q_final.segment(problem.model.dim * p1, problem.model.dim);
  EXPECT_LT((r - exact).norm(), 1e-3);
  EXPECT_GT(stats.steps, 0);
  EXPECT_GT(stats.jacobian_evals, 0);
  EXPECT_GE(stats.newton_iterations, stats.steps);
  RecordProperty("steps", static_cast<int>(stats.steps));

  // A second run re-initializes from the model and reproduces the first.
  testing::Monitor again(problem.model);
  const long steps = stats.steps;
  sim->run(problem.run.end_time, &again);
  EXPECT_EQ(sim->stats().steps, steps);
  EXPECT_EQ(again.q_final, obs.q_final);
}

TEST(IdaIndex3, LooseToleranceEndsOrFailsWithClearMessage) {
  const Problem problem = load_problem(kPendulum);
  testing::expect_loose_tolerance_ends_or_names_failure(*Registry::instance().find("ida-index3"), problem);
}

TEST(IdaIndex3, RejectsUnknownIntegratorAndBadTolerance) {
  const Problem problem = load_problem(kPendulum);
  const Formulation* f = Registry::instance().find("ida-index3");
  EXPECT_THROW(f->create(problem.model, "rk4", 1e-6), SolverError);
  EXPECT_THROW(f->create(problem.model, "bdf", 0.0), SolverError);
}

}  // namespace
}  // namespace mbs
