// Closed loops in joint coordinates (formulations/recursive/loop_closure.hpp): the cut joints'
// rows on the spanning tree. Phi_q and gamma match finite differences of Phi on planar point-mass,
// planar rigid-body and spatial revolute loops; redundant rows are dropped (Bricard's loop keeps 4
// of 5); the N-four-bar through its singular positions follows its exact reduced 1-DOF model at
// RK4's order (recursive's algorithms and minimal's velocity transformation); the constraints hold
// to round-off after every step; run() allocates nothing.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "common/joint_graph.hpp"
#include "core/formulation.hpp"
#include "elements/rod.hpp"
#include "elements/spherical.hpp"
#include "problem/problem.hpp"
#include "recursive/loop_closure.hpp"
#include "recursive/spatial_tree.hpp"
#include "support/alloc_counter.hpp"
#include "support/models.hpp"
#include "support/monitor.hpp"
#include "support/n_four_bar.hpp"
#include "support/tree_models.hpp"

namespace mbs {
namespace {

using recursive::LoopClosure;
using recursive::SpatialTree;
using recursive::TreeWorkspace;

const Formulation& rec() { return *Registry::instance().find("recursive"); }
const Formulation& minimal() { return *Registry::instance().find("minimal"); }

Problem n_four_bar(int n, double end_time) {
  return load_problem_text(testing::n_four_bar_yaml(n, end_time), "n_four_bar.yaml");
}

struct LoopCase {
  const char* name;
  Model model;
  int cut_rows, kept_rows;
};

std::vector<LoopCase> loop_models() {
  std::vector<LoopCase> cases;
  cases.push_back({"four_bar of point masses (a rod cut)", testing::four_bar(), 1, 1});
  cases.push_back({"n_four_bar N = 3 (revolutes of rigid bodies)", n_four_bar(3, 1.0).model, 6, 6});
  // Andrews' squeezer: 7 bodies on 7 angles (the Test Set's coordinates), 3 cut pins of 2 rows.
  cases.push_back({"andrews (planar, springs)", load_problem(MBS_SOURCE_DIR "/problems/andrews.yaml").model, 6, 6});
  cases.push_back({"bricard (spatial, a redundant row)", load_problem(MBS_SOURCE_DIR "/problems/bricard.yaml").model, 5, 4});
  return cases;
}

// Phi at q (kinematics at zero velocity).
Eigen::VectorXd Phi_at(const SpatialTree& tree, const LoopClosure& lc, const Eigen::VectorXd& q, TreeWorkspace& ws) {
  recursive::kinematics(tree, q, Eigen::VectorXd::Zero(tree.nv), ws);
  recursive::world_frames(tree, ws);
  Eigen::VectorXd Phi(lc.kept_rows());
  lc.positions(ws, Phi);
  return Phi;
}

// G = Phi_q against central differences of Phi (truncation ~h^2 Phi''' ~ 1e-12, round-off ~1e-16 /
// h ~ 1e-10 on metre-scale mechanisms), and gamma against central differences of G v along v:
// (Phi_q v)_q v = -gamma.
TEST(RecursiveLoops, JacobianAndGammaMatchFiniteDifferences) {
  std::mt19937 gen(3);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (const LoopCase& c : loop_models()) {
    SpatialTree tree;
    ASSERT_EQ(recursive::build_spatial_tree(c.model, tree), "") << c.name;
    ASSERT_FALSE(tree.cuts.empty()) << c.name;
    const LoopClosure lc(c.model, tree, nullptr);
    EXPECT_EQ(lc.cut_rows(), c.cut_rows) << c.name;
    EXPECT_EQ(lc.kept_rows(), c.kept_rows) << c.name;
    const int m = lc.kept_rows(), nv = tree.nv;
    TreeWorkspace ws(tree, true);
    Eigen::VectorXd q = tree.q0, v(nv);
    for (int k = 0; k < nv; ++k) {
      q[k] += 0.1 * u(gen);
      v[k] = u(gen);
    }
    recursive::kinematics(tree, q, v, ws);
    recursive::world_frames(tree, ws);
    Eigen::MatrixXd G(m, nv);
    lc.jacobian(ws, G);
    std::vector<recursive::Vec6> ab(tree.bodies.size());
    recursive::bias_accelerations(tree, ws, ab);
    Eigen::VectorXd Gv(m), gamma(m);
    lc.velocities(ws, ab, Gv, gamma);
    EXPECT_LT((Gv - G * v).cwiseAbs().maxCoeff(), 1e-13 * (1.0 + (G * v).cwiseAbs().maxCoeff())) << c.name;

    const double h = 1e-6;
    Eigen::MatrixXd G_fd(m, nv);
    for (int k = 0; k < nv; ++k) {
      Eigen::VectorXd qp = q, qm = q;
      qp[k] += h;
      qm[k] -= h;
      G_fd.col(k) = (Phi_at(tree, lc, qp, ws) - Phi_at(tree, lc, qm, ws)) / (2.0 * h);
    }
    EXPECT_LT((G - G_fd).cwiseAbs().maxCoeff(), 1e-7 * (1.0 + G.cwiseAbs().maxCoeff())) << c.name << "\n" << G << "\n" << G_fd;

    auto G_at = [&](const Eigen::VectorXd& qq) {
      recursive::kinematics(tree, qq, v, ws);
      recursive::world_frames(tree, ws);
      Eigen::MatrixXd Gq(m, nv);
      lc.jacobian(ws, Gq);
      return Gq;
    };
    const Eigen::VectorXd dGv = (G_at(q + h * v) * v - G_at(q - h * v) * v) / (2.0 * h);
    EXPECT_LT((dGv + gamma).cwiseAbs().maxCoeff(), 1e-7 * (1.0 + gamma.cwiseAbs().maxCoeff())) << c.name;
  }
}

// The N-four-bar (N = 2) from theta' = 1 rad/s passes its singular positions (every crank
// horizontal) three times in 3 s; recursive follows the exact reduced model (tests/support/n_four_bar.hpp)
// at RK4's order under both algorithms, with the loops closed to round-off after every step.
TEST(RecursiveLoops, NFourBarThroughSingularPositionsConvergesAtFourthOrder) {
  const double T = 3.0;
  ASSERT_EQ(testing::n_four_bar_singular_crossings(2, T), 3);
  const Problem p = n_four_bar(2, T);
  const Eigen::Vector2d exact = testing::n_four_bar_reduced(2, T);
  const int b0 = p.model.position_offset("crank0") + 0;  // the centroid: (sin theta, cos theta) / 2
  // recursive's two algorithms and minimal's velocity transformation on the same tree.
  for (const auto& [formulation, integrator] : {std::pair<const Formulation*, const char*>{&rec(), "aba-rk4"},
                                                {&rec(), "crba-rk4"},
                                                {&minimal(), "rk4"}}) {
    double err[2];
    for (int k = 0; k < 2; ++k) {
      const double h = 4e-3 / (1 << k);
      testing::Monitor mon(p.model);
      formulation->create(p.model, integrator, h)->run(T, &mon);
      const Eigen::Vector2d centroid = mon.q_final.segment(b0, 2);
      err[k] = (centroid - 0.5 * Eigen::Vector2d(std::sin(exact[0]), std::cos(exact[0]))).norm();
      EXPECT_LT(mon.max_Phi, 1e-12) << integrator << " h = " << h;
      EXPECT_LT(mon.max_Phi_dot, 1e-11) << integrator << " h = " << h;
    }
    // Order 4: halving h divides the error by 16 (asymptotically; 10..24 allowed).
    EXPECT_GT(err[0] / err[1], 10.0) << integrator << ": " << err[0] << " " << err[1];
    EXPECT_LT(err[0] / err[1], 24.0) << integrator << ": " << err[0] << " " << err[1];
    EXPECT_LT(err[1], 1e-6) << integrator;
  }
}

// Bricard's mechanism keeps its energy (no force element) at the adaptive methods' tolerance, and
// the two algorithms agree.
TEST(RecursiveLoops, BricardKeepsItsEnergyAndTheAlgorithmsAgree) {
  const Problem p = load_problem(MBS_SOURCE_DIR "/problems/bricard.yaml");
  testing::Monitor aba(p.model), crba(p.model), vt(p.model);
  rec().create(p.model, "aba-dopri5", 1e-10)->run(2.0, &aba);
  rec().create(p.model, "crba-dopri5", 1e-10)->run(2.0, &crba);
  minimal().create(p.model, "dopri5", 1e-10)->run(2.0, &vt);
  EXPECT_LT(aba.max_drift, 1e-7);
  EXPECT_LT(aba.max_Phi, 1e-12);
  EXPECT_LT(vt.max_drift, 1e-7);
  EXPECT_LT(vt.max_Phi, 1e-12);
  EXPECT_LT((aba.q_final - crba.q_final).cwiseAbs().maxCoeff(), 1e-8);
  EXPECT_LT((aba.q_final - vt.q_final).cwiseAbs().maxCoeff(), 1e-8);
}

// A branched mechanism of point masses on rods (planar): a hub H on a ground pivot (OH), two arms
// HA, HC, each closed to ground (AG, CG): two loops, 1 DOF.
std::string branched_yaml(const std::string& cut_joints) {
  std::string text = R"(name: branched
space: planar
gravity: [0.0, -9.81, 0.0]
bodies:
  - {name: H, kind: point_mass, mass: 1.0, position: [0.0, 1.0, 0.0]}
  - {name: A, kind: point_mass, mass: 1.0, position: [1.0, 1.0, 0.0]}
  - {name: C, kind: point_mass, mass: 1.0, position: [-1.0, 1.0, 0.0]}
joints:
  - {name: OH, kind: rod, a: {ground: [0.0, 0.0, 0.0]}, b: {body: H}}
  - {name: HA, kind: rod, a: {body: H}, b: {body: A}}
  - {name: HC, kind: rod, a: {body: H}, b: {body: C}}
  - {name: AG, kind: rod, a: {ground: [1.0, 0.0, 0.0]}, b: {body: A}}
  - {name: CG, kind: rod, a: {ground: [-1.0, 0.0, 0.0]}, b: {body: C}}
)";
  if (!cut_joints.empty()) text += "cut_joints: [" + cut_joints + "]\n";
  return text + "run: {end_time: 1.0}\nscore: {rule: {metric: max_energy_drift, below: 1.0e-4}}\n";
}

// The cuts by the rule and by the file's names, as recursive's tree and the joint graph's spanning
// tree (simbody's) choose them: the same joints, recursive's named ones first, the graph's in element
// order.
TEST(RecursiveLoops, CutJointsByTheRuleAndByTheFilesNames) {
  struct Case {
    const char* named;
    std::vector<std::string> recursive_cuts, graph_cuts, bodies;  // bodies: the tree's, parents first
  };
  const std::vector<Case> cases = {
      // The breadth-first growth from ground places H, A, C by OH, AG, CG; then H meets A and C again.
      {"", {"HA", "HC"}, {"HA", "HC"}, {"H", "A", "C"}},
      // AG named: A hangs from H instead, and the rule cuts the remaining loop at HC.
      {"AG", {"AG", "HC"}, {"HC", "AG"}, {"H", "C", "A"}},
      // Both loops opened by name, the ground pivot among them: a chain ground-A-H-C, nothing left to the rule.
      {"CG, OH", {"CG", "OH"}, {"OH", "CG"}, {"A", "H", "C"}},
  };
  for (const Case& c : cases) {
    const Problem p = load_problem_text(branched_yaml(c.named), "branched.yaml");
    SpatialTree tree;
    ASSERT_EQ(recursive::build_spatial_tree(p.model, tree), "") << c.named;
    std::vector<std::string> cuts, bodies, graph_cuts;
    for (const Element* e : tree.cuts) cuts.push_back(e->name);
    for (const recursive::TreeBody& b : tree.bodies) bodies.push_back(b.name);
    EXPECT_EQ(cuts, c.recursive_cuts) << c.named;
    EXPECT_EQ(bodies, c.bodies) << c.named;
    EXPECT_EQ(tree.nv, 3) << c.named;  // one angle a body
    SpanningTree graph;
    ASSERT_EQ(spanning_tree(p.model, graph), "") << c.named;
    for (const int k : graph.cuts) graph_cuts.push_back(graph.edges[k].e->name);
    EXPECT_EQ(graph_cuts, c.graph_cuts) << c.named;
    ASSERT_EQ(graph.links.size(), c.bodies.size()) << c.named;
    for (size_t i = 0; i < graph.links.size(); ++i) EXPECT_EQ(p.model.points[graph.links[i].node].name, c.bodies[i]) << c.named;
    // Whichever joints are cut, the loops hold the mechanism to 1 DOF: a row a cut rod, 2 on 3 angles.
    const LoopClosure lc(p.model, tree, nullptr);
    EXPECT_EQ(lc.cut_rows(), 2) << c.named;
    EXPECT_EQ(lc.kept_rows(), 2) << c.named;
  }
}

// A named spherical joint of a would-be hinge pair is cut alone: its partner becomes a spherical
// tree joint (3 angular DOF), which recursive's loops do not take yet, and says so.
TEST(RecursiveLoops, ANamedJointOfAHingePairIsCutAlone) {
  std::string text = load_problem(MBS_SOURCE_DIR "/problems/pinned_bar.yaml").text;
  const size_t run = text.find("\nrun:");
  ASSERT_NE(run, std::string::npos);
  text.insert(run + 1, "cut_joints: [pin_back]\n");
  const Problem p = load_problem_text(text, "pinned_bar.yaml");
  SpatialTree tree;
  ASSERT_EQ(recursive::build_spatial_tree(p.model, tree), "");
  ASSERT_EQ(tree.cuts.size(), 1u);
  EXPECT_EQ(tree.cuts[0]->name, "pin_back");
  ASSERT_EQ(tree.bodies.size(), 1u);
  EXPECT_EQ(tree.bodies[0].type, recursive::JointType::kSpherical);
  EXPECT_EQ(tree.bodies[0].joint, "pin_front");
  const std::string why = rec().unsupported_reason(p.model);
  EXPECT_NE(why.find("joint pin_back closes one"), std::string::npos) << why;
}

// A cut joint whose rows all hold on the tree (a pendulum's rod given twice) keeps no row, and the
// motion is the plain pendulum's, under both formulations.
TEST(RecursiveLoops, ACutJointThatHoldsOnTheTreeKeepsNoRow) {
  const Problem plain = load_problem(MBS_SOURCE_DIR "/problems/planar_pendulum.yaml");
  Model doubled = plain.model;
  auto second = std::make_shared<Rod>(*doubled.elements_of<Rod>()[0]);
  second->name = "rod2";
  doubled.elements.push_back(second);
  SpatialTree tree;
  ASSERT_EQ(recursive::build_spatial_tree(doubled, tree), "");
  ASSERT_EQ(tree.cuts.size(), 1u);
  RunStats stats;
  const LoopClosure lc(doubled, tree, &stats);
  EXPECT_EQ(lc.cut_rows(), 1);
  EXPECT_EQ(lc.kept_rows(), 0);
  for (const auto& [formulation, integrator] : {std::pair<const Formulation*, const char*>{&rec(), "aba-rk4"},
                                                {&minimal(), "rk4"}}) {
    ASSERT_EQ(formulation->unsupported_reason(doubled), "") << formulation->name();
    testing::Monitor a(plain.model), b(doubled);
    formulation->create(plain.model, integrator, 1e-2)->run(1.0, &a);
    formulation->create(doubled, integrator, 1e-2)->run(1.0, &b);
    EXPECT_LT((a.q_final - b.q_final).cwiseAbs().maxCoeff(), 1e-12) << formulation->name();
  }
}

TEST(RecursiveLoops, RunAllocatesNothing) {
  MBS_SKIP_WITHOUT_ALLOCATION_COUNTING();
  const Problem p = n_four_bar(3, 1.0);
  for (const auto& [formulation, integrator] : {std::pair<const Formulation*, const char*>{&rec(), "aba-rk4"},
                                                {&rec(), "crba-dopri5"},
                                                {&minimal(), "rk4"},
                                                {&minimal(), "dopri5"}}) {
    const bool fixed = std::string(integrator).find("rk4") != std::string::npos;
    auto sim = formulation->create(p.model, integrator, fixed ? 1e-3 : 1e-8);
    sim->run(0.2, nullptr);  // warm-up
    EXPECT_EQ(testing::allocations_during([&] { sim->run(0.2, nullptr); }), 0) << formulation->name() << "/" << integrator;
  }
}

}  // namespace
}  // namespace mbs
