// Formulation "ida-ggl" (GGL stabilized index 2 through IDA): the analytic Jacobian against finite
// differences (dense) and against the dense one (sparse pattern), consistent initial conditions,
// redundant rows, and on the planar pendulum: both constraint levels at the solver tolerance (where
// ida-index3's velocity constraint drifts), the error against the exact solution falling with the
// tolerance, mu ~ 0, and no allocation in run() on the sparse path.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <vector>

#include "core/formulation.hpp"
#include "core/natural_coordinates.hpp"
#include "ida_ggl/ggl_dae.hpp"
#include "ida_index3/ida_residual.hpp"
#include "problem/problem.hpp"
#include "references/simple_pendulum.hpp"
#include "support/alloc_counter.hpp"
#include "support/ida_dae.hpp"
#include "support/models.hpp"
#include "support/monitor.hpp"

namespace mbs {
namespace {

const char* const kPendulum = testing::kIdaPendulum;
using testing::two_rod_chain;  // v0 not admissible

// An arbitrary state off both constraint levels, with nonzero lambda and mu.
void arbitrary_state(const ida_ggl::GglDae& dae, Eigen::VectorXd& y, Eigen::VectorXd& yp) {
  const int n = dae.size();
  y = Eigen::VectorXd::LinSpaced(n, -0.9, 1.3);
  yp = Eigen::VectorXd::LinSpaced(n, 0.7, -0.4);
  for (int k = 0; k < dae.nc(); ++k) {
    y[2 * dae.nq() + k] = 12.0 - 17.0 * k;           // lambda (N)
    y[2 * dae.nq() + dae.nc() + k] = 0.3 + 0.45 * k;  // mu (N s)
  }
}

class IdaGglDae : public ::testing::TestWithParam<int> {};

// Every residual block is at most quadratic in y (Phi bilinear, Phi_q^T lambda and Phi_q v bilinear),
// so central differences have no truncation error: what is left is round-off, ~1e-16 |F| / eps
// ~ 1e-10 with eps = 1e-6.
TEST_P(IdaGglDae, AnalyticJacobianMatchesFiniteDifferences) {
  const Model model = two_rod_chain(GetParam());
  ida_ggl::GglDae dae(model);
  const int n = dae.size();
  ASSERT_EQ(n, 2 * dae.nq() + 2 * 2);
  Eigen::VectorXd y, yp;
  arbitrary_state(dae, y, yp);
  const double cj = 37.0;

  Eigen::MatrixXd J(n, n);
  dae.jacobian(cj, y, J);
  const Eigen::MatrixXd J_fd = testing::finite_difference_iteration_matrix(dae, cj, y, yp, 1e-6);
  EXPECT_LT((J - J_fd).cwiseAbs().maxCoeff(), 1e-7) << "J =\n" << J << "\nJ_fd =\n" << J_fd;
  // The blocks GGL adds to ida-index3's are there (not zero by accident of the state).
  const int nq = dae.nq(), vel = 2 * nq + dae.nc();
  EXPECT_GT(J.block(0, vel, nq, dae.nc()).cwiseAbs().maxCoeff(), 0.1);  // M^-1 Phi_q^T
  EXPECT_GT(J.block(vel, 0, dae.nc(), nq).cwiseAbs().maxCoeff(), 0.1);  // d(Phi_q v)/dq
}

// The sparse pattern holds every entry of the dense Jacobian, with the same value.
TEST_P(IdaGglDae, SparseJacobianEqualsDense) {
  const Model model = two_rod_chain(GetParam());
  ida_ggl::GglDae dense(model), sparse(model, true);
  const int n = dense.size();
  Eigen::VectorXd y, yp;
  arbitrary_state(dense, y, yp);
  Eigen::MatrixXd J(n, n), J_sp = Eigen::MatrixXd::Zero(n, n);
  dense.jacobian(37.0, y, J);
  std::vector<double> values(sparse.row_indices().size());
  sparse.jacobian_sparse(37.0, y, values.data());
  for (int j = 0; j < n; ++j)
    for (auto p = sparse.column_pointers()[j]; p < sparse.column_pointers()[j + 1]; ++p)
      J_sp(sparse.row_indices()[p], j) += values[p];
  EXPECT_LT((J - J_sp).cwiseAbs().maxCoeff(), 1e-13) << "J =\n" << J << "\nJ_sparse =\n" << J_sp;
  Eigen::VectorXd Fd(n), Fs(n);
  dense.residual(y, yp, Fd);
  sparse.residual(y, yp, Fs);
  EXPECT_LT((Fd - Fs).cwiseAbs().maxCoeff(), 1e-13);
}

TEST_P(IdaGglDae, ConsistentInitialConditionsSatisfyBothLevelsWithMuZero) {
  const Model model = two_rod_chain(GetParam());
  ida_ggl::GglDae dae(model);
  const NaturalCoordinates& nat = dae.nat();
  const int n = dae.size(), nq = dae.nq(), nc = dae.nc();
  Eigen::VectorXd y(n), yp(n), F(n);
  dae.consistent_initial_conditions(y, yp);
  const auto v = y.segment(nq, nq);
  testing::expect_constraint_levels_met(nat, y, yp);
  EXPECT_EQ(y.tail(nc).cwiseAbs().maxCoeff(), 0.0);  // mu0 = 0
  dae.residual(y, yp, F);
  EXPECT_LT(F.cwiseAbs().maxCoeff(), 1e-13);
  EXPECT_GT((model.initial_v() - v).norm(), 0.1);  // v0 was not admissible: projected
}

INSTANTIATE_TEST_SUITE_P(PlanarAndSpatial, IdaGglDae, ::testing::Values(2, 3));

TEST(IdaGgl, RedundantConstraintIsRemovedAndTheMotionIsUnchanged) {
  const testing::RedundantPendulum pendulum = testing::redundant_pendulum();
  const Model& single = pendulum.single;
  const Model& model = pendulum.twice;  // the rod twice: rank 1 of 2
  ida_ggl::GglDae dae(model);
  EXPECT_EQ(dae.dropped_constraints(), 1);
  EXPECT_EQ(dae.nc(), 1);
  EXPECT_EQ(dae.size(), 2 * 2 + 2 * 1);
  Eigen::VectorXd y(dae.size()), yp(dae.size()), F(dae.size());
  dae.consistent_initial_conditions(y, yp);
  dae.residual(y, yp, F);
  EXPECT_LT(F.cwiseAbs().maxCoeff(), 1e-13);
  const double m = single.points[0].mass, g = single.gravity.norm();
  EXPECT_NEAR(std::abs(y[2 * dae.nq()]), m * g * 0.8, 1e-12 * m * g);  // rod tension at rest

  testing::Monitor both(model), one(single);
  ida_ggl::make_simulator(model, 1e-8)->run(1.0, &both);
  ida_ggl::make_simulator(single, 1e-8)->run(1.0, &one);
  EXPECT_LT((both.q_final - one.q_final).norm(), 1e-12);
}

// Records, at every step, the DAE's mu and the step h_n = t_n - t_{n-1}.
class MuMonitor final : public StepObserver {
 public:
  MuMonitor(const Model& model, const Simulator* const* sim) : monitor(model), sim_(sim) {}
  void on_step(double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v) override {
    monitor.on_step(t, q, v);
    const Eigen::VectorXd y = ida_ggl::dae_state(**sim_);
    const ida_ggl::GglDae& dae = ida_ggl::dae_of(**sim_);
    const int nq = dae.nq(), nc = dae.nc();
    max_q = std::max(max_q, q.cwiseAbs().maxCoeff());
    max_v = std::max(max_v, v.cwiseAbs().maxCoeff());
    max_mu = std::max(max_mu, y.tail(nc).cwiseAbs().maxCoeff());
    if (t > t_last) {
      // The stabilization's shift of q over the step: h M^-1 Phi_q^T mu (m).
      Eigen::MatrixXd Phi_q(dae.nat().nc(), nq);
      dae.nat().Phi_q(q, Phi_q);
      Eigen::VectorXd shift = Eigen::VectorXd::Zero(nq);
      for (int k = 0; k < nc; ++k) shift += Phi_q.row(dae.constraint_rows()[k]).transpose() * y[2 * nq + nc + k];
      shift.array() /= dae.nat().M_diag().array();
      shift *= t - t_last;
      max_shift = std::max(max_shift, shift.cwiseAbs().maxCoeff());
    }
    t_last = t;
  }
  testing::Monitor monitor;
  double max_q = 0.0, max_v = 0.0, max_mu = 0.0, max_shift = 0.0, t_last = 0.0;

 private:
  const Simulator* const* sim_;
};

struct PendulumRun {
  double drift, max_Phi, max_Phi_dot, error, max_mu, max_shift, max_q, max_v;
  long steps;
};

PendulumRun run_pendulum(const Problem& problem, const std::string& formulation, double rtol) {
  auto sim = Registry::instance().find(formulation)->create(problem.model, "bdf", rtol);
  const Simulator* raw = sim.get();
  MuMonitor obs(problem.model, &raw);
  testing::Monitor plain(problem.model);
  const bool ggl = formulation == "ida-ggl";
  if (ggl)
    sim->run(problem.run.end_time, &obs);
  else
    sim->run(problem.run.end_time, &plain);
  const testing::Monitor& m = ggl ? obs.monitor : plain;
  EXPECT_DOUBLE_EQ(m.t_final, problem.run.end_time);
  const Eigen::VectorXd exact = SimplePendulumExact::from_problem(problem).position(problem.run.end_time);
  const int p1 = problem.model.find_point("P1");
  const double error = (m.q_final.segment(problem.model.dim * p1, problem.model.dim) - exact).norm();
  return {m.max_drift, m.max_Phi, m.max_Phi_dot, error, obs.max_mu, obs.max_shift, obs.max_q, obs.max_v,
          sim->stats().steps};
}

// GGL's point: both constraint levels are equations, so both hold to the Newton tolerance at
// every step, ~rtol x their scale (L = 1 m, |v| <= 4.5 m/s); ida-index3 at the same rtol enforces
// only Phi, and its Phi_q v drifts at the discretization error.
TEST(IdaGgl, PendulumKeepsBothConstraintLevelsWhereIndex3DriftsInVelocity) {
  const Problem problem = load_problem(kPendulum);
  const double L = 1.0;
  for (const double rtol : {1e-6, 1e-8, 1e-10}) {
    SCOPED_TRACE(rtol);
    const PendulumRun ggl = run_pendulum(problem, "ida-ggl", rtol);
    const PendulumRun index3 = run_pendulum(problem, "ida-index3", rtol);
    std::printf("rtol %.0e: ida-ggl %ld steps, |Phi| %.2e m, |Phi_q v| %.2e m/s; ida-index3 %ld steps, |Phi| %.2e, "
                "|Phi_q v| %.2e\n",
                rtol, ggl.steps, ggl.max_Phi, ggl.max_Phi_dot, index3.steps, index3.max_Phi, index3.max_Phi_dot);
    EXPECT_LT(ggl.max_Phi, 10 * rtol * L);
    EXPECT_LT(ggl.max_Phi_dot, 10 * rtol * (ggl.max_v + 1.0));
    EXPECT_LT(ggl.max_Phi_dot, 1e-2 * index3.max_Phi_dot);
  }
}

// The error at t = 10 s against the exact elliptic-function solution falls with the tolerance
// (BDF's global error ~ proportional to the local tolerance: 100 times tighter, at least 10 times
// smaller), and mu stays ~0: the stabilization moves q in a step by a local-error amount, so
// h |M^-1 Phi_q^T mu|_inf stays within a small multiple of the local tolerance rtol |q| + atol (m):
// IDA's test bounds an RMS norm over the 2 nq = 4 tested components (max <= 2 x RMS) of an
// estimate BDF's error constant scales; bounded by 10 (the measured ratios: docs/formulations.md,
// Method notes). |mu| falls with rtol.
TEST(IdaGgl, PendulumErrorFallsWithToleranceAndMuStaysNearZero) {
  const Problem problem = load_problem(kPendulum);
  std::vector<PendulumRun> runs;
  const std::vector<double> rtols = {1e-5, 1e-7, 1e-9, 1e-11};
  for (const double rtol : rtols) {
    SCOPED_TRACE(rtol);
    const PendulumRun r = run_pendulum(problem, "ida-ggl", rtol);
    std::printf("rtol %.0e: %ld steps, error %.3e m, drift %.3e J, max|mu| %.3e N s, max h|M^-1 G^T mu| %.3e m\n",
                rtol, r.steps, r.error, r.drift, r.max_mu, r.max_shift);
    EXPECT_LT(r.max_shift, 10 * (rtol * r.max_q + rtol * 1.0));
    runs.push_back(r);
  }
  for (size_t i = 1; i < runs.size(); ++i) {
    EXPECT_LT(runs[i].error, 0.1 * runs[i - 1].error) << "rtol " << rtols[i];
    EXPECT_LT(runs[i].max_mu, runs[i - 1].max_mu) << "rtol " << rtols[i];
  }
  EXPECT_LT(runs.back().error, 1e-3);  // the conformance bound, m
  EXPECT_LT(runs.back().drift, problem.rule.below);
}

// The sparse path (KLU) gives the dense path's motion on a closed loop. No allocation in run() on a
// 10-point chain (20 coordinates, where kAuto goes sparse), sparse (a run refactors on the first
// run's first pivots: common/ida_support.hpp) or forced dense, nor in the residual and the sparse
// Jacobian; and a rerun repeats the first run's steps. ida-index3's sparse run on the same chain
// still allocates (recorded): SUNDIALS re-pivots within the run wherever its condition estimate of
// the index-3 iteration matrix (growing like 1/h^2) passes 1/eps^(2/3), and the next run then
// starts afresh.
TEST(IdaGgl, SparsePathMatchesDenseAndCallbacksAllocateNothing) {
  const Model loop = testing::four_bar();
  testing::Monitor dense(loop), sparse(loop);
  ida_ggl::make_simulator(loop, 1e-10, ida_ggl::ErrorTest::kPositionsAndVelocities, LinearAlgebra::kDense)
      ->run(2.0, &dense);
  ida_ggl::make_simulator(loop, 1e-10, ida_ggl::ErrorTest::kPositionsAndVelocities, LinearAlgebra::kSparse)
      ->run(2.0, &sparse);
  EXPECT_DOUBLE_EQ(sparse.t_final, 2.0);
  EXPECT_LT(sparse.max_Phi, 1e-9);
  EXPECT_LT(sparse.max_Phi_dot, 1e-8);
  // Same equations and the same steps up to LU-versus-KLU round-off: within the global error.
  EXPECT_LT((dense.q_final - sparse.q_final).cwiseAbs().maxCoeff(), 1e-7);

  std::vector<testing::ChainLink> links;
  for (int i = 0; i < 10; ++i) links.push_back({1.0, {0.3 * (i + 1), -0.1 * (i + 1), 0.0}});
  const Model chain = testing::chain_model(2, links);
  auto sim = ida_ggl::make_simulator(chain, 1e-7);
  ASSERT_TRUE(ida_ggl::dae_of(*sim).sparse());
  testing::Monitor obs(chain);
  sim->run(1.0, &obs);
  EXPECT_LT(obs.max_Phi, 1e-6);
  EXPECT_LT(obs.max_Phi_dot, 1e-5);
  const long first_steps = sim->stats().steps;
  testing::Monitor again(chain);
  sim->run(1.0, &again);
  EXPECT_EQ(sim->stats().steps, first_steps);
  EXPECT_LT((again.q_final - obs.q_final).cwiseAbs().maxCoeff(), 1e-12);
  auto index3 = ida_index3::make_simulator(chain, 1e-7);
  index3->run(1.0, nullptr);
  MBS_SKIP_WITHOUT_ALLOCATION_COUNTING();
  EXPECT_EQ(testing::allocations_during([&] { sim->run(1.0, nullptr); }), 0);
  RecordProperty("ida_index3_sparse_run_allocations",
                 std::to_string(testing::allocations_during([&] { index3->run(1.0, nullptr); })));
  auto dense_sim = ida_ggl::make_simulator(chain, 1e-7, ida_ggl::ErrorTest::kPositionsAndVelocities, LinearAlgebra::kDense);
  dense_sim->run(1.0, nullptr);
  EXPECT_EQ(testing::allocations_during([&] { dense_sim->run(1.0, nullptr); }), 0);
  ida_ggl::GglDae dae(chain, true);
  Eigen::VectorXd y(dae.size()), yp(dae.size()), F(dae.size());
  dae.consistent_initial_conditions(y, yp);
  std::vector<double> values(dae.row_indices().size());
  EXPECT_EQ(testing::allocations_during([&] { dae.residual(y, yp, F); }), 0);
  EXPECT_EQ(testing::allocations_during([&] { dae.jacobian_sparse(300.0, y, values.data()); }), 0);
}

TEST(IdaGgl, ContactsAndLinearizationAreUnsupportedWithReasons) {
  const Formulation* f = Registry::instance().find("ida-ggl");
  ASSERT_NE(f, nullptr);
  const Problem wall = load_problem(MBS_SOURCE_DIR "/problems/double_pendulum_wall.yaml");
  EXPECT_NE(f->unsupported_reason(wall.model), "");
  const Problem lin = load_problem(MBS_SOURCE_DIR "/problems/pendulum_3d_linearization.yaml");
  EXPECT_NE(f->linearization_unsupported_reason(lin.model).find("ida-index3"), std::string::npos);
  EXPECT_EQ(f->unsupported_reason(load_problem(kPendulum).model), "");
}

TEST(IdaGgl, RejectsUnknownIntegratorAndBadToleranceAndNamesFailures) {
  const Problem problem = load_problem(kPendulum);
  const Formulation* f = Registry::instance().find("ida-ggl");
  EXPECT_THROW(f->create(problem.model, "rk4", 1e-6), SolverError);
  EXPECT_THROW(f->create(problem.model, "bdf", 0.0), SolverError);
  testing::expect_loose_tolerance_ends_or_names_failure(*f, problem);
}

}  // namespace
}  // namespace mbs
