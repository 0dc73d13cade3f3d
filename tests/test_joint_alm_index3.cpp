// formulations/joint_alm_index3: the index-3 augmented Lagrangian in joint coordinates. The
// N-four-bar (a chain of parallelograms: every crank moves like one pendulum) follows its exact
// reduced model at the trapezoidal rule's order 2, through its singular positions, with the loops
// closed to the Newton tolerance; a tree takes the plain trapezoidal rule (order 2 on the pendulum's
// exact period motion); the residual's H and b are the ones CRBA solves; run() allocates nothing.
#include <gtest/gtest.h>

#include <cmath>

#include "core/formulation.hpp"
#include "problem/problem.hpp"
#include "recursive/crba.hpp"
#include "recursive/kinematics.hpp"
#include "recursive/spatial_tree.hpp"
#include "support/alloc_counter.hpp"
#include "support/monitor.hpp"
#include "support/n_four_bar.hpp"

namespace mbs {
namespace {

const Formulation& jalm() { return *Registry::instance().find("joint-alm-index3"); }

Problem n_four_bar(int n, double end_time) {
  return load_problem_text(testing::n_four_bar_yaml(n, end_time), "n_four_bar.yaml");
}

// The residual's H(q) and b(q, v) (mass_matrix_and_bias) are those whose solution crba() returns.
TEST(JointAlmIndex3, MassMatrixAndBiasAreCrbas) {
  const Problem p = load_problem(MBS_SOURCE_DIR "/problems/andrews.yaml");
  recursive::SpatialTree tree;
  ASSERT_EQ(recursive::build_spatial_tree(p.model, tree), "");
  recursive::TreeWorkspace ws(tree, true);
  Eigen::VectorXd q = tree.q0, v(tree.nv), qdd(tree.nv);
  for (int k = 0; k < tree.nv; ++k) q[k] += 0.05 * k, v[k] = 1.0 - 0.3 * k;
  recursive::crba(tree, q, v, ws, qdd);
  ws.H.setZero();
  recursive::kinematics(tree, q, v, ws);
  recursive::mass_matrix_and_bias(tree, ws);
  const Eigen::VectorXd Hqdd = ws.H.selfadjointView<Eigen::Lower>() * qdd;
  EXPECT_LT((Hqdd - ws.b).cwiseAbs().maxCoeff(), 1e-12 * (1.0 + ws.b.cwiseAbs().maxCoeff()));
}

// From theta' = 1 rad/s the N-four-bar (N = 2) passes a singular position (every crank horizontal)
// three times in 3 s. Order 2: halving h divides the error by 4 (3..5 allowed).
TEST(JointAlmIndex3, NFourBarThroughSingularPositionsConvergesAtSecondOrder) {
  const double T = 3.0;
  ASSERT_EQ(testing::n_four_bar_singular_crossings(2, T), 3);
  const Problem p = n_four_bar(2, T);
  const Eigen::Vector2d exact = testing::n_four_bar_reduced(2, T);
  const int b0 = p.model.position_offset("crank0") + 0;  // the centroid: (sin theta, cos theta) / 2
  double err[2];
  for (int k = 0; k < 2; ++k) {
    const double h = 2e-3 / (1 << k);
    testing::Monitor mon(p.model);
    jalm().create(p.model, "trapezoidal", h)->run(T, &mon);
    const Eigen::Vector2d centroid = mon.q_final.segment(b0, 2);
    err[k] = (centroid - 0.5 * Eigen::Vector2d(std::sin(exact[0]), std::cos(exact[0]))).norm();
    EXPECT_LT(mon.max_Phi, 1e-9) << "h = " << h;
  }
  EXPECT_GT(err[0] / err[1], 3.0) << err[0] << " " << err[1];
  EXPECT_LT(err[0] / err[1], 5.0) << err[0] << " " << err[1];
}

// The slider-crank (a closed loop with a prismatic joint, no force element): the trapezoidal rule
// keeps the energy to O(h^2), so the drift falls by about 4 when h is halved.
TEST(JointAlmIndex3, SliderCrankEnergyDriftFallsAtSecondOrder) {
  const Problem p = load_problem(MBS_SOURCE_DIR "/problems/slider_crank.yaml");
  double drift[2];
  for (int k = 0; k < 2; ++k) {
    testing::Monitor mon(p.model);
    jalm().create(p.model, "trapezoidal", 1e-3 / (1 << k))->run(p.run.end_time, &mon);
    drift[k] = mon.max_drift;
    EXPECT_LT(mon.max_Phi, 1e-9);
  }
  EXPECT_GT(drift[0] / drift[1], 3.0) << drift[0] << " " << drift[1];
  EXPECT_LT(drift[0] / drift[1], 5.0) << drift[0] << " " << drift[1];
}

TEST(JointAlmIndex3, RunAllocatesNothing) {
  MBS_SKIP_WITHOUT_ALLOCATION_COUNTING();
  for (const Problem& p : {n_four_bar(3, 1.0), load_problem(MBS_SOURCE_DIR "/problems/flyball_governor.yaml")}) {
    auto sim = jalm().create(p.model, "trapezoidal", 1e-3);
    sim->run(0.05, nullptr);  // warm-up
    EXPECT_EQ(testing::allocations_during([&] { sim->run(0.05, nullptr); }), 0);
  }
}

}  // namespace
}  // namespace mbs
