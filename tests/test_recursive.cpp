// Formulation "recursive" (formulations/recursive/): the spatial-vector tree engine. ABA and CRBA
// agree on random states; both agree with the natural-coordinate formulations on a spatial chain;
// energy drift shrinks at the method's order on a tree of every joint type; a conical pendulum keeps
// its cone angle and a spherical pendulum passes through both poles (the quaternion configuration);
// closed loops are cut at the joint that closes them (test_recursive_loops.cpp); run() allocates nothing. The planar path agrees
// with the spatial one on planar trees, and the fixed-step DOP853 cases converge at 8th order.
// Force elements (spring-dampers, torques, point forces) act on the tree as external forces: ABA
// and CRBA agree with them, the motion agrees with `projection`, and the energy balance closes at
// the method's order. Bodies not joined to ground float on free roots: a tumbling box keeps its
// energy and angular momentum at the method's order and its centroid on the parabola to round-off,
// and floating chains agree with `projection`.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "common/vector_math.hpp"
#include "core/formulation.hpp"
#include "core/natural_coordinates.hpp"
#include "elements/fixed.hpp"
#include "elements/prismatic.hpp"
#include "elements/revolute.hpp"
#include "elements/rod.hpp"
#include "elements/spring_damper.hpp"
#include "elements/torque.hpp"
#include "elements/spherical.hpp"
#include "problem/problem.hpp"
#include "recursive/spatial_tree.hpp"
#include "recursive/tree_ode.hpp"
#include "support/alloc_counter.hpp"
#include "support/models.hpp"
#include "support/tree_models.hpp"

namespace mbs {
namespace {

using recursive::SpatialTree;
using recursive::TreeWorkspace;
using testing::box;
using testing::ground;
using testing::mixed_tree;
using testing::on;
using testing::point;
using testing::rot;

const Formulation& rec() { return *Registry::instance().find("recursive"); }

// A spatial chain of point masses on rods from a ground pivot at the origin, with consistent
// initial velocities (each point moves normal to its rod relative to its parent).
Model spatial_chain(int n, unsigned seed = 7) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<testing::ChainLink> links;
  Eigen::Vector3d r = Eigen::Vector3d::Zero(), v = Eigen::Vector3d::Zero();
  for (int i = 0; i < n; ++i) {
    Eigen::Vector3d d(u(gen), -1.0 - 0.5 * std::abs(u(gen)), u(gen));
    d *= (0.5 + 0.1 * (i % 5)) / d.norm();
    const Eigen::Vector3d w(u(gen), u(gen), u(gen));
    r += d;
    v += w.cross(d);
    links.push_back({1.0 / (1 + 0.3 * (i % 4)), r, v});
  }
  return testing::chain_model(3, links);
}

Model three_link_chain() { return spatial_chain(3); }

// A planar chain of n point masses (a planar model: every rod a pin about z), at rest.
Model planar_chain(int n, unsigned seed = 11) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<testing::ChainLink> links;
  Eigen::Vector3d r = Eigen::Vector3d::Zero(), v = Eigen::Vector3d::Zero();
  for (int i = 0; i < n; ++i) {
    const double a = 1.2 * u(gen), w = u(gen);
    const Eigen::Vector3d d = (0.4 + 0.1 * (i % 3)) * Eigen::Vector3d(std::sin(a), -std::cos(a), 0.0);
    r += d;
    v += w * Eigen::Vector3d(-d[1], d[0], 0.0);
    links.push_back({1.0 / (1 + 0.3 * (i % 4)), r, v});
  }
  return testing::chain_model(2, links);
}

// A planar tree of point masses on rods that branches (A holds B and D, B holds C and E) and has a
// second root (F on its own ground pivot), in motion: the pin path's bodies whose parent is not the
// body just before them.
Model planar_branched_points() {
  Model m = planar_chain(3, 5);
  auto add = [&m](const std::string& name, int parent, const Eigen::Vector2d& r, const Eigen::Vector2d& v) {
    const int p = static_cast<int>(m.points.size());
    m.points.push_back({name, 0.4 + 0.1 * p, r, v});
    const Eigen::Vector2d base = parent == kGround ? Eigen::Vector2d(0.3, 0.1) : Eigen::Vector2d(m.points[parent].r0);
    m.elements.push_back(std::make_shared<Rod>("rod" + name, parent, p, parent == kGround ? base : Eigen::Vector2d::Zero(),
                                               (r - base).norm()));
  };
  const Eigen::Vector2d A = m.points[0].r0, B = m.points[1].r0;  // each new point moves with its parent: rods keep length
  add("D", 0, A + Eigen::Vector2d(0.3, -0.2), m.points[0].v0);
  add("E", 1, B + Eigen::Vector2d(-0.2, -0.35), m.points[1].v0);
  add("F", kGround, Eigen::Vector2d(0.7, -0.3), Eigen::Vector2d(0.2, 0.2));
  return m;
}

// A spatial model that moves in a plane: rigid boxes in generic orientations on revolute joints
// whose axes are +n or -n for a tilted n, a prismatic joint normal to n, a weld; joint origins off
// the plane through the ground pivot and gravity with a component along n (neither moves anything
// in the plane).
Model tilted_planar_tree() {
  Model m;
  m.dim = 3;
  m.basis = Eigen::Matrix3d::Identity();
  m.gravity = Eigen::Vector3d(0.5, -9.81, 1.0);
  const Eigen::Vector3d n = Eigen::Vector3d(0.3, -0.2, 1.0).normalized();
  const Eigen::Vector3d t = n.unitOrthogonal();
  m.bodies.push_back(box("B1", 1.0, {0.1, 0.6, 0.1}, {0.1, -0.3, 0.05}, rot(0.3, {1, 1, 0}), {0, 0, 0}, {0, 0, 0}));
  m.bodies.push_back(box("B2", 0.5, {0.2, 0.2, 0.4}, {0.2, -0.8, 0.3}, rot(0.7, {1, 2, 3}), {0, 0, 0}, {0, 0, 0}));
  m.bodies.push_back(box("B3", 0.3, {0.1, 0.3, 0.1}, {0.4, -1.0, 0.2}, rot(-0.4, {0, 1, 1}), {0, 0, 0}, {0, 0, 0}));
  m.bodies.push_back(box("B4", 0.2, {0.2, 0.1, 0.1}, {0.15, -0.6, 0.0}, rot(1.1, {2, 0, 1}), {0, 0, 0}, {0, 0, 0}));
  m.bodies.push_back(box("B5", 0.4, {0.3, 0.1, 0.2}, {0.6, -1.3, 0.4}, rot(0.2, {0, 0, 1}), {0, 0, 0}, {0, 0, 0}));
  auto revolute = [&](const std::string& name, Anchor a, Anchor b, const Eigen::Vector3d& axis) {
    auto j = std::make_shared<RevoluteJoint>();
    j->name = name;
    j->a = a;
    j->b = b;
    j->axis = axis;
    return j;
  };
  auto pj = std::make_shared<PrismaticJoint>();
  pj->name = "slider";
  pj->a = on(m, 1, {0.3, -0.9, 0.25});
  pj->b = on(m, 2, {0.35, -0.95, 0.3});
  pj->axis = t;
  auto fj = std::make_shared<FixedJoint>();
  fj->name = "weld";
  fj->a = on(m, 1, {0.15, -0.6, 0.1});
  fj->b = on(m, 3, {0.15, -0.6, 0.1});
  m.elements = {revolute("hinge", ground({0, 0, 0}), on(m, 0, {0, 0, 0}), n),
                revolute("knee", on(m, 0, {0.1, -0.6, 0.2}), on(m, 1, {0.1, -0.6, 0.2}), -n), pj, fj,
                revolute("ankle", on(m, 2, {0.5, -1.1, -0.1}), on(m, 4, {0.5, -1.1, -0.1}), n)};
  return m;
}

// Random states (unit quaternions, velocities in [-2, 2]).
void random_state(const SpatialTree& tree, std::mt19937& gen, Eigen::VectorXd& q, Eigen::VectorXd& v) {
  std::normal_distribution<double> n(0.0, 1.0);
  q.resize(tree.nq);
  v.resize(tree.nv);
  for (int i = 0; i < tree.nq; ++i) q[i] = n(gen);
  for (int i = 0; i < tree.nv; ++i) v[i] = 2.0 * n(gen);
  recursive::normalize(tree, q);
}

double max_abs_diff_aba_crba(const Model& m, int samples) {
  SpatialTree tree;
  EXPECT_EQ(recursive::build_spatial_tree(m, tree), "");
  TreeWorkspace ws(tree, true);
  std::mt19937 gen(3);
  Eigen::VectorXd q, v, a1(tree.nv), a2(tree.nv);
  double worst = 0.0;
  for (int s = 0; s < samples; ++s) {
    random_state(tree, gen, q, v);
    recursive::aba(tree, q, v, ws, a1);
    recursive::crba(tree, q, v, ws, a2);
    worst = std::max(worst, (a1 - a2).cwiseAbs().maxCoeff() / std::max(1.0, a1.cwiseAbs().maxCoeff()));
  }
  return worst;
}

TEST(Recursive, AbaAndCrbaAgreeOnRandomStates) {
  const double chain = max_abs_diff_aba_crba(three_link_chain(), 100);
  const double mixed = max_abs_diff_aba_crba(mixed_tree(), 100);
  const double long_chain = max_abs_diff_aba_crba(spatial_chain(60), 20);
  RecordProperty("chain", std::to_string(chain));
  RecordProperty("mixed", std::to_string(mixed));
  EXPECT_LT(chain, 1e-12);
  EXPECT_LT(mixed, 1e-12);
  EXPECT_LT(long_chain, 1e-9);
  std::printf("ABA vs CRBA, max |dqdd| / max(1, |qdd|): spatial 3-link chain %.2e, mixed tree %.2e, 60-link spatial chain %.2e\n",
              chain, mixed, long_chain);
}

// The pin path's sines and cosines (common/vector_math.hpp: libmvec's vector calls where the build
// has them, four or two at a time) agree with libm's to a few ulp, over joint angles of many turns
// and counts that leave every remainder (by fours, then twos, then one).
TEST(Recursive, VectorSinesAndCosinesAgreeWithLibm) {
  std::mt19937 gen(5);
  std::uniform_real_distribution<double> angle(-700.0, 700.0);
  for (int n : {1, 2, 7, 9, 10, 11, 100}) {
    std::vector<double> phi(n), si(n), co(n);
    for (double& x : phi) x = angle(gen) * (n == 9 ? 1e-3 : 1.0);
    sin_cos_all(
        n, [&](int i) -> double& { return phi[i]; }, [&](int i) -> double& { return si[i]; },
        [&](int i) -> double& { return co[i]; });
    for (int i = 0; i < n; ++i) {
      EXPECT_NEAR(si[i], std::sin(phi[i]), 1e-15) << phi[i];  // |sin| <= 1: 1e-15 is ~4.5 ulp at 1
      EXPECT_NEAR(co[i], std::cos(phi[i]), 1e-15) << phi[i];
    }
  }
}

// The planar path is chosen from the geometry alone, and it gives the spatial path's accelerations;
// so does the pin path where every joint is a pin (the chains and the branched tree of points; the
// tilted tree has a prismatic joint).
TEST(Recursive, PlanarPathAgreesWithTheSpatialPath) {
  const std::vector<Model> models{planar_chain(3), planar_chain(40), planar_branched_points(), tilted_planar_tree()};
  for (size_t k = 0; k < models.size(); ++k) {
    const Model& m = models[k];
    SpatialTree tree;
    ASSERT_EQ(recursive::build_spatial_tree(m, tree), "");
    ASSERT_TRUE(tree.planar);
    TreeWorkspace ws(tree, true);
    std::mt19937 gen(9);
    Eigen::VectorXd q, v, a_planar(tree.nv), a_spatial(tree.nv), a_pins(tree.nv);
    double worst = 0.0, worst_pins = 0.0, worst_crba = 0.0;
    for (int s = 0; s < 50; ++s) {
      random_state(tree, gen, q, v);
      if (s % 2 == 1)  // joint angles of many turns
        for (const auto& b : tree.bodies)
          if (b.type == recursive::JointType::kRevolute) q[b.qi] *= 100.0;
      recursive::aba_planar(tree, q, v, ws, a_planar);
      recursive::aba_spatial(tree, q, v, ws, a_spatial);
      worst = std::max(worst, (a_planar - a_spatial).cwiseAbs().maxCoeff() / a_spatial.cwiseAbs().maxCoeff());
      if (tree.pins) {
        recursive::aba_planar_pins(tree, q, v, ws, a_pins);
        worst_pins = std::max(worst_pins, (a_pins - a_spatial).cwiseAbs().maxCoeff() / a_spatial.cwiseAbs().maxCoeff());
        recursive::crba_planar_pins(tree, q, v, ws, a_pins);
        worst_crba = std::max(worst_crba, (a_pins - a_spatial).cwiseAbs().maxCoeff() / a_spatial.cwiseAbs().maxCoeff());
      }
    }
    std::printf("planar vs spatial ABA, %d DOF: max |dqdd| / max |qdd| = %.2e (pin path %.2e, CRBA's pin path %.2e)\n",
                tree.nv, worst, worst_pins, worst_crba);
    EXPECT_LT(worst, 1e-12);
    EXPECT_LT(worst_pins, 1e-12);
    // CRBA solves H qdd = b: round-off grows with cond(H), as for the 60-link spatial chain above.
    EXPECT_LT(worst_crba, tree.nv > 10 ? 1e-9 : 1e-12);
    EXPECT_EQ(tree.pins, k < 3) << "the chains and the tree of points are pins; the tilted tree has a slider and a weld";
  }
  for (const Model& m : {mixed_tree(), spatial_chain(3)}) {
    SpatialTree tree;
    ASSERT_EQ(recursive::build_spatial_tree(m, tree), "");
    EXPECT_FALSE(tree.planar);
  }
}

TEST(Recursive, MassMatrixIsTheKineticEnergysHessian) {
  // 1/2 v^T H v equals the natural coordinates' kinetic energy of the same state (a spatial rod's
  // joint has no spin coordinate, so there is no fictitious energy either).
  const Model m = mixed_tree();
  SpatialTree tree;
  ASSERT_EQ(recursive::build_spatial_tree(m, tree), "");
  TreeWorkspace ws(tree, true);
  const NaturalCoordinates nat(m);
  std::mt19937 gen(5);
  Eigen::VectorXd q, v, qn(m.nq()), vn(m.nq());
  Eigen::MatrixXd H;
  for (int s = 0; s < 20; ++s) {
    random_state(tree, gen, q, v);
    recursive::mass_matrix(tree, q, ws, H);
    recursive::model_state(tree, m, q, v, ws, qn, vn);
    EXPECT_NEAR(0.5 * v.dot(H * v), nat.kinetic_energy(vn), 1e-12 * (1 + nat.kinetic_energy(vn)));
  }
}

class FinalState final : public StepObserver {
 public:
  explicit FinalState(const Model& m) : nat(m) {}
  void on_step(double, const Eigen::VectorXd& q, const Eigen::VectorXd& v) override {
    this->q = q;
    this->v = v;
    const double e = nat.energy(q, v);
    if (!have_e0) {
      e0 = e;
      have_e0 = true;
    }
    max_drift = std::max(max_drift, std::abs(e - e0));
  }
  NaturalCoordinates nat;
  Eigen::VectorXd q, v;
  double e0 = 0, max_drift = 0;
  bool have_e0 = false;
};

TEST(Recursive, SpatialThreeLinkChainAgreesWithNaturalCoordinates) {
  const Model m = three_link_chain();
  FinalState ref(m);
  Registry::instance().find("projection")->create(m, "fehlberg8-fixed", 1e-3)->run(1.0, &ref);
  for (const char* integrator : {"aba-fehlberg8", "crba-fehlberg8"}) {
    FinalState s(m);
    rec().create(m, integrator, 1e-13)->run(1.0, &s);
    const double err = (s.q - ref.q).cwiseAbs().maxCoeff();
    std::printf("%s against projection/fehlberg8-fixed (h = 1e-3 s), 1 s: %.2e m\n", integrator, err);
    EXPECT_LT(err, 1e-9) << integrator;
  }
}

// Drift over the run at h and h/2: the ratio of a 4th-order method is ~16.
TEST(Recursive, EnergyDriftShrinksAtTheMethodsOrder) {
  for (const Model& m : {mixed_tree(), spatial_chain(5)}) {
    for (const char* integrator : {"aba-rk4", "crba-rk4"}) {
      double drift[2];
      for (int k = 0; k < 2; ++k) {
        FinalState s(m);
        rec().create(m, integrator, 4e-3 / (1 << k))->run(2.0, &s);
        drift[k] = s.max_drift;
      }
      const double order = std::log2(drift[0] / drift[1]);
      std::printf("%s, %zu bodies: max energy drift %.2e J at h = 4e-3 s, %.2e J at 2e-3 s: order %.2f\n", integrator,
                  m.points.size() + m.bodies.size(), drift[0], drift[1], order);
      EXPECT_GT(order, 3.5) << integrator;
      EXPECT_LT(order, 4.5) << integrator;
    }
  }
}

// Energy drift over the run at h and h/2: the ratio of an 8th-order method is ~256. The steps keep
// the drift well above round-off (the planar chain's is the smaller at a given step).
TEST(Recursive, Dop853FixedConvergesAtEighthOrder) {
  const std::pair<Model, double> cases[] = {{planar_chain(3), 0.04}, {spatial_chain(3), 0.02}};
  for (const auto& [m, h] : cases) {
    for (const char* integrator : {"aba-dop853-fixed", "crba-dop853-fixed"}) {
      double drift[2];
      for (int k = 0; k < 2; ++k) {
        FinalState s(m);
        rec().create(m, integrator, h / (1 << k))->run(1.0, &s);
        drift[k] = s.max_drift;
      }
      const double order = std::log2(drift[0] / drift[1]);
      std::printf("%s, %d-D chain of 3: max energy drift %.2e J at h = %g s, %.2e J at %g s: order %.2f\n", integrator, m.dim,
                  drift[0], h, drift[1], h / 2, order);
      EXPECT_GT(order, 7.0) << integrator;
      EXPECT_LT(order, 9.5) << integrator;
    }
  }
}

// A point on a rod of length L at cone angle alpha, moving on the horizontal circle at
// omega^2 = g / (L cos alpha): the cone angle must stay alpha.
TEST(Recursive, ConicalPendulumKeepsItsConeAngle) {
  const double L = 1.0, alpha = M_PI / 3, g = 9.81;
  const double w = std::sqrt(g / (L * std::cos(alpha))), rho = L * std::sin(alpha);
  const Model m = testing::chain_model(3, {{1.0, Eigen::Vector3d(rho, -L * std::cos(alpha), 0), Eigen::Vector3d(0, 0, w * rho)}});
  class Cone final : public StepObserver {
   public:
    void on_step(double, const Eigen::VectorXd& q, const Eigen::VectorXd&) override {
      err = std::max(err, std::abs(std::acos(-q[1] / q.norm()) - M_PI / 3));
    }
    double err = 0.0;
  };
  double err[2];
  for (int k = 0; k < 2; ++k) {
    Cone c;
    rec().create(m, "aba-rk4", 0.02 / (1 << k))->run(100.0, &c);
    err[k] = c.err;
  }
  Cone tight;
  rec().create(m, "aba-fehlberg8", 1e-11)->run(100.0, &tight);
  std::printf("conical pendulum, 100 s (%.0f turns): max cone-angle error rk4 h = 0.02: %.2e, h = 0.01: %.2e rad (order %.2f); fehlberg8 tol 1e-11: %.2e rad\n",
              100 * w / (2 * M_PI), err[0], err[1], std::log2(err[0] / err[1]), tight.err);
  EXPECT_GT(std::log2(err[0] / err[1]), 3.5);
  EXPECT_LT(tight.err, 1e-8);
}

// Released at the bottom fast enough to go over the top: it passes straight down and straight up
// (the poles where Euler angles or spherical coordinates are singular), in the plane and out of it.
TEST(Recursive, SphericalPendulumPassesThroughThePoles) {
  for (const double vz : {0.0, 0.4}) {
    const Model m = testing::chain_model(3, {{1.0, Eigen::Vector3d(0, -1, 0), Eigen::Vector3d(7.0, 0, vz)}});
    class Top final : public StepObserver {
     public:
      void on_step(double, const Eigen::VectorXd& q, const Eigen::VectorXd&) override { highest = std::max(highest, q[1]); }
      double highest = -1;
    };
    FinalState ref(m);
    Registry::instance().find("projection")->create(m, "fehlberg8-fixed", 5e-4)->run(3.0, &ref);
    for (const char* integrator : {"aba-fehlberg8", "crba-dopri5"}) {
      FinalState s(m);
      rec().create(m, integrator, 1e-12)->run(3.0, &s);
      const double err = (s.q - ref.q).cwiseAbs().maxCoeff();
      std::printf("over the top (vz = %.1f), %s, 3 s: %.2e m from projection/fehlberg8-fixed, energy drift %.2e J\n", vz,
                  integrator, err, s.max_drift);
      EXPECT_LT(err, 1e-8) << integrator;
      EXPECT_LT(s.max_drift, 1e-8) << integrator;
    }
    Top top;
    rec().create(m, "aba-rk4", 1e-3)->run(3.0, &top);
    EXPECT_GT(top.highest, 0.99999);  // no angular momentum about the vertical: a vertical plane through both poles
  }
}

TEST(Recursive, ClosedLoopsAreCutAtTheJointThatClosesThem) {
  const Model m = testing::four_bar();  // outlives the tree: its cuts point at the model's joints
  SpatialTree four_bar;
  ASSERT_EQ(recursive::build_spatial_tree(m, four_bar), "");
  // The breadth-first search from ground places A and B (by rod0 and rocker) before it meets rod1.
  ASSERT_EQ(four_bar.cuts.size(), 1u);
  EXPECT_EQ(four_bar.cuts[0]->name, "rod1");
  EXPECT_EQ(rec().unsupported_reason(m), "");  // closed by its cut (test_recursive_loops.cpp)
  Problem bar = load_problem(MBS_SOURCE_DIR "/problems/pinned_bar.yaml");
  EXPECT_EQ(rec().unsupported_reason(bar.model), "");  // its pins pair into a hinge (PinnedBarIsAHinge)
  // A third pin off the hinge's line locks the bar: a loop, closed by the third pin's rows.
  auto third = std::make_shared<SphericalJoint>(*bar.model.elements_of<SphericalJoint>()[0]);
  third->name = "pin_third";
  third->a = ground({0.0, 0.0, 0.25});
  third->b = on(bar.model, 0, {0.0, 0.0, 0.25});
  bar.model.elements.push_back(third);
  SpatialTree locked;
  ASSERT_EQ(recursive::build_spatial_tree(bar.model, locked), "");
  ASSERT_EQ(locked.cuts.size(), 1u);
  EXPECT_EQ(locked.cuts[0]->name, "pin_third");
  // A loop through quaternion coordinates (spatial rods) is not closed yet: said so.
  Model spatial = testing::chain_model(3, {{1.0, {0.3, 0.9, 0.2}}, {0.5, {1.6, 1.1, 0.1}}});
  const Eigen::Vector3d O2(2.0, 0.0, 0.0);
  spatial.elements.push_back(std::make_shared<Rod>("rocker", kGround, 1, O2, (spatial.points[1].r0 - O2).norm()));
  const std::string why = rec().unsupported_reason(spatial);
  EXPECT_NE(why.find("a closed loop (joint rod1 closes one) on a tree with spherical joints or spatial rods: not implemented"),
            std::string::npos) << why;
  const Problem wall = load_problem(MBS_SOURCE_DIR "/problems/double_pendulum_wall.yaml");
  EXPECT_EQ(rec().unsupported_reason(wall.model), "");  // contacts on its points (tests/test_contacts.cpp)
  EXPECT_EQ(rec().unsupported_reason(mixed_tree()), "");
}

// Two spherical joints between a body and ground at distinct points are a hinge about the line
// through them: the pinned bar is one revolute joint (axis along the pins, the plane's normal, so
// the planar path), and it moves as minimal's hinged body does, to round-off.
TEST(Recursive, PinnedBarIsAHinge) {
  const Problem bar = load_problem(MBS_SOURCE_DIR "/problems/pinned_bar.yaml");
  SpatialTree tree;
  ASSERT_EQ(recursive::build_spatial_tree(bar.model, tree), "");
  ASSERT_EQ(tree.bodies.size(), 1u);
  EXPECT_EQ(tree.bodies[0].type, recursive::JointType::kRevolute);
  EXPECT_EQ(tree.bodies[0].joint, "pin_front+pin_back");
  EXPECT_NEAR(std::abs(tree.bodies[0].axis.dot(Eigen::Vector3d::UnitY())), 1.0, 1e-15);
  EXPECT_TRUE(tree.planar);
  const Formulation& minimal = *Registry::instance().find("minimal");
  for (const char* integrator : {"aba-rk4", "crba-rk4"}) {
    FinalState a(bar.model), b(bar.model);
    rec().create(bar.model, integrator, 1.0 / 256)->run(1.0, &a);
    minimal.create(bar.model, "rk4", 1.0 / 256)->run(1.0, &b);
    EXPECT_LT((a.q - b.q).cwiseAbs().maxCoeff(), 1e-12) << integrator;
    EXPECT_LT((a.v - b.v).cwiseAbs().maxCoeff(), 1e-12) << integrator;
    EXPECT_LT(a.max_drift, 1e-12) << integrator;
  }
}

// Force elements. A planar chain of two point masses on rods, a spring-damper from B to the ground
// and a constant force on A: the damper makes the forces velocity-dependent.
const char* kForcedPlanarChain = R"(
name: forced_planar_chain
space: planar
gravity: [0.0, -9.81, 0.0]
bodies:
  - {name: A, kind: point_mass, mass: 1.0, position: [0.6, -0.8, 0.0], velocity: [0.8, 0.6, 0.0]}
  - {name: B, kind: point_mass, mass: 0.5, position: [1.2, -1.6, 0.0], velocity: [1.6, 1.2, 0.0]}
joints:
  - {name: rod0, kind: rod, a: {ground: [0.0, 0.0, 0.0]}, b: {body: A}, length: 1.0}
  - {name: rod1, kind: rod, a: {body: A}, b: {body: B}, length: 1.0}
forces:
  - {name: spring, kind: spring_damper, a: {ground: [1.5, 0.0, 0.0]}, b: {body: B}, stiffness: 40.0, damping: 0.8,
     rest_length: 1.0}
  - {name: push, kind: force, at: {body: A}, force: [2.0, 1.0, 0.0]}
run: {end_time: 1.0}
score: {rule: {metric: max_energy_drift, below: 1.0e-6}}
)";

// A spatial tree: an arm on a tilted revolute to the ground, driven by a constant torque with
// components off the hinge axis; a box on a spherical joint at the arm's end, spinning; a point
// mass on a rod from the arm's end; a spring between the point and the box (two tree bodies).
// Every velocity is consistent with the joints. The arm's hinge axis is a = (0.3, 0, 1) / |.|.
const char* kForcedSpatialTree = R"(
name: forced_spatial_tree
space: spatial
gravity: [0.0, -9.81, 0.0]
bodies:
  - {name: arm, kind: rigid_body, shape: {box: [0.1, 0.8, 0.1]}, density: 500.0, position: [0.0, -0.4, 0.0],
     points: {O: [0.0, 0.4, 0.0], E: [0.0, -0.4, 0.0]}}
  - {name: box, kind: rigid_body, mass: 0.7, inertia: [0.02, 0.025, 0.03], position: [0.1, -1.1, 0.2],
     orientation: {axis: [1.0, 1.0, 0.0], angle_deg: 30.0}, velocity: [0.11, -0.13, -0.25],
     angular_velocity: [0.5, 1.0, -0.3]}
  - {name: P, kind: point_mass, mass: 0.3, position: [0.4, -1.1, -0.3]}
joints:
  - {name: hinge, kind: revolute, a: ground, b: arm.O, at: [0.0, 0.0, 0.0], axis: [0.3, 0.0, 1.0]}
  - {name: ball, kind: spherical, a: arm, b: box, at: [0.0, -0.8, 0.0]}
  - {name: rod, kind: rod, a: arm.E, b: {body: P}}
forces:
  - {name: motor, kind: torque, body: arm, torque: [0.2, -0.1, 6.0]}
  - {name: spring, kind: spring_damper, a: {body: P}, b: {body: box, at: [0.05, 0.0, 0.0]}, stiffness: 30.0}
run: {end_time: 1.0}
score: {rule: {metric: max_energy_drift, below: 1.0e-6}}
)";

// max |qdd_ABA - qdd_CRBA| / max(1, |qdd|) and, on planar trees, |qdd_planar - qdd_spatial| likewise,
// on random states with the model's force elements applied.
std::pair<double, double> forced_aba_crba_planar(const Model& m, int samples) {
  SpatialTree tree;
  EXPECT_EQ(recursive::build_spatial_tree(m, tree), "");
  TreeWorkspace ws(tree, true);
  recursive::TreeForces forces(tree, m);
  EXPECT_FALSE(forces.empty());
  std::mt19937 gen(13);
  Eigen::VectorXd q, v, a1(tree.nv), a2(tree.nv), a3(tree.nv), a0(tree.nv);
  double crba = 0.0, planar = 0.0, effect = 0.0;
  for (int s = 0; s < samples; ++s) {
    random_state(tree, gen, q, v);
    const recursive::BodyForces& f = forces.evaluate(q, v, ws);
    recursive::aba(tree, q, v, ws, a1, &f);
    recursive::crba(tree, q, v, ws, a2, &f);
    recursive::aba(tree, q, v, ws, a0);
    const double scale = std::max(1.0, a1.cwiseAbs().maxCoeff());
    crba = std::max(crba, (a1 - a2).cwiseAbs().maxCoeff() / scale);
    effect = std::max(effect, (a1 - a0).cwiseAbs().maxCoeff() / scale);
    if (tree.planar) {  // aba() took the pin path on a tree of pins: the planar and spatial paths too
      recursive::aba_spatial(tree, q, v, ws, a3, &f);
      planar = std::max(planar, (a1 - a3).cwiseAbs().maxCoeff() / scale);
      recursive::aba_planar(tree, q, v, ws, a3, &f);
      planar = std::max(planar, (a1 - a3).cwiseAbs().maxCoeff() / scale);
    }
  }
  EXPECT_GT(effect, 0.1);  // the forces change the accelerations at order 1
  return {crba, planar};
}

// ABA (pin, planar and spatial paths) and CRBA take the same external forces: their accelerations
// agree to round-off on random states.
TEST(Recursive, ForceElementsAbaCrbaAndPlanarPathsAgree) {
  const Problem chain = load_problem_text(kForcedPlanarChain, "chain.yaml");
  const Problem tree = load_problem_text(kForcedSpatialTree, "tree.yaml");
  const auto [chain_crba, chain_planar] = forced_aba_crba_planar(chain.model, 50);
  const auto [tree_crba, tree_planar] = forced_aba_crba_planar(tree.model, 50);
  std::printf("with force elements, ABA vs CRBA: planar chain %.2e, spatial tree %.2e; planar vs spatial ABA %.2e\n",
              chain_crba, tree_crba, chain_planar);
  EXPECT_LT(chain_crba, 1e-12);
  EXPECT_LT(chain_planar, 1e-12);
  EXPECT_LT(tree_crba, 1e-12);
  (void)tree_planar;
}

// Observer of the final state and of the largest |E - E0 - W|, W the torque's work (tau . a) theta
// on a body turning about a fixed hinge axis a (theta unwrapped between steps).
class Balance final : public StepObserver {
 public:
  Balance(const Model& m, int body, const Eigen::Vector3d& tau, const Eigen::Vector3d& axis)
      : nat(m), off(m.body_offset(body)), tau_a(tau.dot(axis)), a(axis) {}
  void on_step(double, const Eigen::VectorXd& q, const Eigen::VectorXd& v) override {
    this->q = q;
    Eigen::Matrix3d U;
    for (int k = 0; k < 3; ++k) U.col(k) = q.segment<3>(off + 3 + 3 * k);
    if (!started) U0 = U;
    const Eigen::Matrix3d R = U * U0.transpose();  // the rotation since t = 0, about a
    const Eigen::Vector3d s(R(2, 1) - R(1, 2), R(0, 2) - R(2, 0), R(1, 0) - R(0, 1));
    double th = std::atan2(0.5 * a.dot(s), 0.5 * (R.trace() - 1.0));
    th += 2 * M_PI * std::round((theta - th) / (2 * M_PI));  // unwrapped
    theta = th;
    max_theta = std::max(max_theta, std::abs(th));
    const double e = nat.energy(q, v) - tau_a * theta;
    if (!started) e0 = e;
    started = true;
    max_error = std::max(max_error, std::abs(e - e0));
  }
  NaturalCoordinates nat;
  int off;
  double tau_a;
  Eigen::Vector3d a;
  Eigen::Matrix3d U0;
  Eigen::VectorXd q;
  double theta = 0.0, max_theta = 0.0, e0 = 0.0, max_error = 0.0;
  bool started = false;
};

// The planar chain with its spring-damper and constant force: recursive agrees with projection
// (natural coordinates, a different formulation of the same motion). The tolerance from both
// methods' errors: projection/fehlberg8-fixed at h = 1e-3 s has a truncation error ~C h^8 (1e-24 C)
// and round-off ~1e-16 m a step over 1,000 steps; recursive at tol 1e-13 a local error <= 1e-13 m
// over its ~100 steps: both below 1e-11 m at 1 s. 1e-10 m (1e-9 m/s) leaves a factor 10 for the
// growth of these errors along the motion (measured: ~3e-14 m).
TEST(Recursive, ForceElementsPlanarChainAgreesWithProjection) {
  const Problem p = load_problem_text(kForcedPlanarChain, "chain.yaml");
  EXPECT_EQ(rec().unsupported_reason(p.model), "");
  FinalState ref(p.model);
  Registry::instance().find("projection")->create(p.model, "fehlberg8-fixed", 1e-3)->run(1.0, &ref);
  for (const char* integrator : {"aba-fehlberg8", "crba-fehlberg8", "aba-dopri5", "crba-dopri5"}) {
    FinalState s(p.model);
    rec().create(p.model, integrator, 1e-13)->run(1.0, &s);
    const double err = (s.q - ref.q).cwiseAbs().maxCoeff(), verr = (s.v - ref.v).cwiseAbs().maxCoeff();
    std::printf("forced planar chain, %s against projection/fehlberg8-fixed (h = 1e-3 s), 1 s: %.2e m, %.2e m/s\n",
                integrator, err, verr);
    EXPECT_LT(err, 1e-10) << integrator;
    EXPECT_LT(verr, 1e-9) << integrator;
  }
}

// The spatial tree with a torque-driven hinge and a spring between two bodies: E - E0 - W (W the
// torque's work (tau . a) theta; its components off the hinge axis do none) shrinks at RK4's order
// 4 with h, and the motion agrees with projection to the planar chain's tolerance, for its reasons.
TEST(Recursive, ForceElementsSpatialTreeEnergyBalanceAndAgreement) {
  const Problem p = load_problem_text(kForcedSpatialTree, "tree.yaml");
  EXPECT_EQ(rec().unsupported_reason(p.model), "");
  const Eigen::Vector3d tau(0.2, -0.1, 6.0), a = Eigen::Vector3d(0.3, 0.0, 1.0).normalized();
  for (const char* integrator : {"aba-rk4", "crba-rk4"}) {
    double err[2], theta = 0.0;
    for (int k = 0; k < 2; ++k) {
      Balance b(p.model, 0, tau, a);
      rec().create(p.model, integrator, 4e-3 / (1 << k))->run(2.0, &b);
      err[k] = b.max_error;
      theta = b.max_theta;
    }
    const double order = std::log2(err[0] / err[1]);
    std::printf("forced spatial tree, %s: max |E - E0 - W| %.2e J at h = 4e-3 s, %.2e J at 2e-3 s: order %.2f (hinge turned up to %.2f rad)\n",
                integrator, err[0], err[1], order, theta);
    EXPECT_GT(theta, 0.2);  // the torque's work, (tau . a) theta up to ~2.6 J, is no small term
    EXPECT_GT(order, 3.5) << integrator;
    EXPECT_LT(order, 4.5) << integrator;
  }
  FinalState ref(p.model);
  Registry::instance().find("projection")->create(p.model, "fehlberg8-fixed", 1e-3)->run(1.0, &ref);
  for (const char* integrator : {"aba-fehlberg8", "crba-fehlberg8"}) {
    FinalState s(p.model);
    rec().create(p.model, integrator, 1e-13)->run(1.0, &s);
    const double err = (s.q - ref.q).cwiseAbs().maxCoeff();
    std::printf("forced spatial tree, %s against projection/fehlberg8-fixed (h = 1e-3 s), 1 s: %.2e\n", integrator, err);
    EXPECT_LT(err, 1e-10) << integrator;
  }
}

// Free roots. A box tumbling in gravity with no joint: a free body (6 DOF).
Model tumbling_box() {
  Model m;
  m.dim = 3;
  m.basis = Eigen::Matrix3d::Identity();
  m.gravity = Eigen::Vector3d(0, -9.81, 0);
  const Eigen::Matrix3d R0 = Eigen::AngleAxisd(0.6, Eigen::Vector3d(1, -2, 0.5).normalized()).toRotationMatrix();
  // Spinning mostly about the intermediate axis (the unstable one): the body tumbles.
  m.bodies.push_back(box("box", 2.0, {0.1, 0.4, 0.7}, {0.3, 1.0, -0.2}, R0, {1.0, 4.0, 0.5}, R0 * Eigen::Vector3d(0.1, 6.0, 0.2)));
  return m;
}

// A floating chain: the free box, a point mass on a rod from one of its corners and a second box on
// a revolute at another, every velocity consistent with the joints.
Model floating_chain() {
  Model m = tumbling_box();
  const RigidBody& b0 = m.bodies[0];
  const Eigen::Vector3d w0 = b0.omega0, G = b0.r0;
  auto vel = [&](const Eigen::Vector3d& x) -> Eigen::Vector3d { return b0.v0 + w0.cross(x - G); };
  const Eigen::Vector3d A = G + b0.R0 * Eigen::Vector3d(0.05, -0.2, 0.35), P(0.6, 0.2, 0.1);
  const Eigen::Vector3d wP(0.7, -0.4, 1.1);  // the rod's own rotation
  m.points.push_back({"P", 0.4, P, vel(A) + (w0 + wP).cross(P - A)});
  const Eigen::Vector3d H = G + b0.R0 * Eigen::Vector3d(-0.05, 0.2, -0.35), axis = b0.R0.col(0);
  const Eigen::Vector3d w2 = w0 + 2.0 * axis, c2 = H + Eigen::Vector3d(0.0, -0.25, 0.05);
  const Eigen::Matrix3d R2 = Eigen::AngleAxisd(0.3, Eigen::Vector3d(0, 1, 1).normalized()).toRotationMatrix();
  m.bodies.push_back(box("arm", 0.5, {0.05, 0.5, 0.1}, c2, R2, vel(H) + w2.cross(c2 - H), w2));
  auto rod = std::make_shared<Rod>();
  rod->name = "rod";
  rod->a = on(m, 0, A);
  rod->b = point(0);
  rod->length = (P - A).norm();
  auto rj = std::make_shared<RevoluteJoint>();
  rj->name = "elbow";
  rj->a = on(m, 0, H);
  rj->b = on(m, 1, H);
  rj->axis = axis;
  m.elements = {rod, rj};
  return m;
}

// The floating chain held by a spring-damper from the ground to the free box, and its arm driven by
// a torque: free roots with force elements.
Model forced_floating_chain() {
  Model m = floating_chain();
  auto spring = std::make_shared<SpringDamper>();
  spring->name = "tether";
  spring->a = ground({0.0, 2.0, 0.0});
  spring->b = on(m, 0, m.bodies[0].r0 + m.bodies[0].R0.col(2) * 0.35);
  spring->k = 50.0;
  spring->c = 0.5;
  spring->bind(m);
  spring->rest_length = 0.5;
  auto motor = std::make_shared<Torque>();
  motor->name = "motor";
  motor->body = 1;
  motor->tau = Eigen::Vector3d(0.3, -0.2, 0.5);
  motor->planar = false;
  m.elements.push_back(spring);
  m.elements.push_back(motor);
  return m;
}

// A planar free box with a pendulum: a point mass on a rod from a corner of the box.
Model planar_floating_pendulum() {
  Model m;
  m.dim = 2;
  m.basis = Eigen::Matrix3d::Identity().leftCols(2);
  m.gravity = Eigen::Vector2d(0, -9.81);
  RigidBody b;
  b.name = "box";
  b.mass = 2.0;
  b.second_moments = 2.0 / 12.0 * Eigen::Vector2d(0.16, 0.04);
  b.r0 = Eigen::Vector2d(0.2, 0.5);
  b.v0 = Eigen::Vector2d(1.0, 3.0);
  b.R0 = Eigen::Rotation2Dd(0.4).toRotationMatrix();
  b.omega0 = Eigen::Vector3d(0, 0, 2.5);
  b.length_scale = 0.4;
  b.frame_centroid = Eigen::Vector2d::Zero();
  b.frame_axes = Eigen::Matrix2d::Identity();
  m.bodies.push_back(b);
  const Eigen::Vector2d A = b.r0 + b.R0 * Eigen::Vector2d(0.2, -0.1), P(0.9, -0.3);
  auto perp = [](const Eigen::Vector2d& d) { return Eigen::Vector2d(-d[1], d[0]); };
  m.points.push_back({"P", 0.5, P, b.v0 + 2.5 * perp(A - b.r0) + (2.5 - 1.5) * perp(P - A)});
  auto rod = std::make_shared<Rod>();
  rod->name = "rod";
  rod->a.point = kNoPoint;
  rod->a.body = 0;
  rod->a.at = b.R0.transpose() * (A - b.r0);
  rod->b.point = 0;
  rod->length = (P - A).norm();
  m.elements = {rod};
  return m;
}

// Energy and angular momentum about the centroid, largest drifts; the centroid against the
// parabola r0 + v0 t + g t^2 / 2.
class Tumble final : public StepObserver {
 public:
  explicit Tumble(const Model& m) : nat(m), m(m) {}
  void on_step(double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v) override {
    const Eigen::Vector3d G = q.segment<3>(m.body_offset(0));
    const double e = nat.energy(q, v);
    const Eigen::Vector3d L = nat.angular_momentum(q, v, G);
    if (!started) e0 = e, L0 = L;
    started = true;
    energy = std::max(energy, std::abs(e - e0));
    momentum = std::max(momentum, (L - L0).norm());
    const RigidBody& b = m.bodies[0];
    const Eigen::Vector3d exact = b.r0 + b.v0 * t + 0.5 * m.gravity * t * t;
    centroid = std::max(centroid, (G - exact).norm());
  }
  NaturalCoordinates nat;
  const Model& m;
  Eigen::Vector3d L0;
  double e0 = 0.0, energy = 0.0, momentum = 0.0, centroid = 0.0;
  bool started = false;
};

// Torque-free motion of the free box: energy and angular momentum about the centroid are invariants
// whose drift shrinks at RK4's order; the centroid's equation r'' = g is linear in the free
// joint's coordinates, so RK4 follows the parabola to round-off (its ~10 m scale times ~1e-15 a
// step over 1,000 steps: below 1e-11 m).
TEST(Recursive, FreeBodyTumblesWithItsInvariantsAndItsParabola) {
  const Model m = tumbling_box();
  SpatialTree tree;
  ASSERT_EQ(recursive::build_spatial_tree(m, tree), "");
  EXPECT_EQ(tree.nv, 6);
  EXPECT_EQ(tree.nq, 7);
  for (const char* integrator : {"aba-rk4", "crba-rk4"}) {
    double energy[2], momentum[2];
    for (int k = 0; k < 2; ++k) {
      Tumble t(m);
      rec().create(m, integrator, 4e-3 / (1 << k))->run(2.0, &t);
      energy[k] = t.energy;
      momentum[k] = t.momentum;
      EXPECT_LT(t.centroid, 1e-11) << integrator;
      if (k == 1)
        std::printf("tumbling box, %s: energy drift %.2e -> %.2e J (order %.2f), |L - L0| %.2e -> %.2e kg m^2/s (order %.2f), "
                    "centroid off the parabola %.2e m\n",
                    integrator, energy[0], energy[1], std::log2(energy[0] / energy[1]), momentum[0], momentum[1],
                    std::log2(momentum[0] / momentum[1]), t.centroid);
    }
    EXPECT_GT(std::log2(energy[0] / energy[1]), 3.5) << integrator;
    EXPECT_LT(std::log2(energy[0] / energy[1]), 4.5) << integrator;
    EXPECT_GT(std::log2(momentum[0] / momentum[1]), 3.5) << integrator;
    EXPECT_LT(std::log2(momentum[0] / momentum[1]), 4.5) << integrator;
  }
}

// A floating chain (spatial; also with a spring-damper to the ground and a torque) and a planar
// floating pendulum: ABA and CRBA agree on random states
// and over a run, the planar path agrees with the spatial one, and the motion agrees with
// projection to the forced chain's tolerance, for its reasons (ForceElementsPlanarChainAgreesWithProjection).
TEST(Recursive, FloatingChainsAgreeWithNaturalCoordinates) {
  const double random_states = std::max(max_abs_diff_aba_crba(floating_chain(), 100),
                                        max_abs_diff_aba_crba(planar_floating_pendulum(), 100));
  const double forced_random_states = forced_aba_crba_planar(forced_floating_chain(), 50).first;
  EXPECT_LT(forced_random_states, 1e-12);
  EXPECT_LT(random_states, 1e-12);
  {
    const Model m = planar_floating_pendulum();
    SpatialTree tree;
    ASSERT_EQ(recursive::build_spatial_tree(m, tree), "");
    ASSERT_TRUE(tree.planar);
    EXPECT_EQ(tree.nv, 4);  // x, y, angle; the rod's angle
    TreeWorkspace ws(tree, false);
    std::mt19937 gen(21);
    Eigen::VectorXd q, v, a_planar(tree.nv), a_spatial(tree.nv);
    double worst = 0.0;
    for (int s = 0; s < 50; ++s) {
      random_state(tree, gen, q, v);
      recursive::aba_planar(tree, q, v, ws, a_planar);
      recursive::aba_spatial(tree, q, v, ws, a_spatial);
      worst = std::max(worst, (a_planar - a_spatial).cwiseAbs().maxCoeff() / a_spatial.cwiseAbs().maxCoeff());
    }
    EXPECT_LT(worst, 1e-12);
    std::printf("floating chains: ABA vs CRBA on random states %.2e (with a spring and a torque %.2e); planar vs spatial ABA %.2e\n",
                random_states, forced_random_states, worst);
  }
  for (const Model& m : {floating_chain(), planar_floating_pendulum(), forced_floating_chain()}) {
    FinalState ref(m);
    Registry::instance().find("projection")->create(m, "fehlberg8-fixed", 1e-3)->run(1.0, &ref);
    FinalState aba(m), crba(m);
    rec().create(m, "aba-fehlberg8", 1e-13)->run(1.0, &aba);
    rec().create(m, "crba-fehlberg8", 1e-13)->run(1.0, &crba);
    const double err_aba = (aba.q - ref.q).cwiseAbs().maxCoeff(), err_crba = (crba.q - ref.q).cwiseAbs().maxCoeff();
    const double aba_crba = (aba.q - crba.q).cwiseAbs().maxCoeff();
    std::printf("floating %s: against projection/fehlberg8-fixed (h = 1e-3 s), 1 s: aba %.2e, crba %.2e; aba vs crba %.2e; "
                "energy drift %.2e J\n",
                m.dim == 2 ? "pendulum (planar)" : m.elements.size() > 2 ? "chain with a spring and a torque" : "chain (spatial)", err_aba, err_crba, aba_crba, aba.max_drift);
    EXPECT_LT(err_aba, 1e-10);
    EXPECT_LT(err_crba, 1e-10);
    EXPECT_LT(aba_crba, 1e-10);
  }
}

// The velocity transformation (minimal's tree path, recursive/velocity_transformation.hpp): on
// random states of trees of every joint kind, with force elements, free roots and a free rigid
// body, R qd is the natural velocity of model_state, c is the derivative of R qd along the motion
// at qdd = 0 (central differences: truncation ~eps^2 ~1e-12, round-off ~1e-16 / eps ~1e-10), and
// the accelerations equal ABA's to round-off (the same dynamics by a dense route: H = R^T M R
// against articulated inertias).
struct VtCheck {
  double velocity = 0.0, convective = 0.0, accelerations = 0.0;
};
VtCheck check_velocity_transformation(const Model& m, int samples) {
  SpatialTree tree, tree_aba, tree_vt;
  EXPECT_EQ(recursive::build_spatial_tree(m, tree), "");
  EXPECT_EQ(recursive::build_spatial_tree(m, tree_aba), "");
  EXPECT_EQ(recursive::build_spatial_tree(m, tree_vt), "");
  TreeWorkspace ws(tree, true);
  recursive::VelocityTransformation vt(tree, m);
  RunStats stats;
  recursive::TreeOde ode_aba(m, stats, std::move(tree_aba), recursive::Algorithm::kAba);
  recursive::TreeOde ode_vt(m, stats, std::move(tree_vt), recursive::Algorithm::kVt);
  std::mt19937 gen(5);
  Eigen::VectorXd q, v, qn(m.nq()), vn(m.nq()), qnp(m.nq()), vnp(m.nq()), qnm(m.nq()), vnm(m.nq()), qdot(tree.nq);
  Eigen::VectorXd y(tree.nq + tree.nv), dy_aba(y.size()), dy_vt(y.size());
  VtCheck worst;
  const double eps = 1e-6;
  for (int s = 0; s < samples; ++s) {
    random_state(tree, gen, q, v);
    recursive::model_state(tree, m, q, v, ws, qn, vn);
    vt.natural_kinematics(q, v, ws);
    const double vscale = std::max(1.0, vn.cwiseAbs().maxCoeff());
    worst.velocity = std::max(worst.velocity, (vt.velocity_jacobian() * v - vn).cwiseAbs().maxCoeff() / vscale);
    recursive::configuration_rate(tree, q, v, qdot);
    recursive::model_state(tree, m, q + eps * qdot, v, ws, qnp, vnp);
    recursive::model_state(tree, m, q - eps * qdot, v, ws, qnm, vnm);
    vt.natural_kinematics(q, v, ws);
    const Eigen::VectorXd c_fd = (vnp - vnm) / (2.0 * eps);
    worst.convective = std::max(worst.convective, (vt.convective_acceleration() - c_fd).cwiseAbs().maxCoeff() /
                                                      std::max(1.0, c_fd.cwiseAbs().maxCoeff()));
    y << q, v;
    ode_aba.rhs(0.0, y, dy_aba);
    ode_vt.rhs(0.0, y, dy_vt);
    worst.accelerations = std::max(worst.accelerations, (dy_vt - dy_aba).cwiseAbs().maxCoeff() /
                                                            std::max(1.0, dy_aba.cwiseAbs().maxCoeff()));
  }
  return worst;
}

TEST(Recursive, VelocityTransformationAgreesWithAbaAndItsKinematicsWithFiniteDifferences) {
  const Problem forced_chain = load_problem_text(kForcedPlanarChain, "chain.yaml");
  const Problem forced_tree = load_problem_text(kForcedSpatialTree, "tree.yaml");
  const std::vector<std::pair<const char*, Model>> models = {
      {"mixed tree (every joint kind, a free point)", mixed_tree()},
      {"spatial chain of 20 rods", spatial_chain(20)},
      {"tilted planar tree of boxes", tilted_planar_tree()},
      {"planar branched points", planar_branched_points()},
      {"forced planar chain", forced_chain.model},
      {"forced spatial tree", forced_tree.model},
      {"tumbling box (a free rigid body)", tumbling_box()}};
  for (const auto& [name, m] : models) {
    const VtCheck w = check_velocity_transformation(m, 20);
    std::printf("velocity transformation, %s: |R qd - v_n| %.1e, |c - FD| %.1e, |qdd - ABA's| %.1e\n", name, w.velocity,
                w.convective, w.accelerations);
    EXPECT_LT(w.velocity, 1e-13) << name;
    EXPECT_LT(w.convective, 1e-7) << name;
    EXPECT_LT(w.accelerations, 1e-10) << name;
  }
}

TEST(Recursive, DynamicSizePathsAllocateNothing) {
  MBS_SKIP_WITHOUT_ALLOCATION_COUNTING();
  const Problem chain = load_problem_text(kForcedPlanarChain, "chain.yaml");
  const Problem tree = load_problem_text(kForcedSpatialTree, "tree.yaml");
  for (const Model& m : {spatial_chain(12), mixed_tree(), planar_chain(12), tilted_planar_tree(), chain.model, tree.model,
                         floating_chain(), planar_floating_pendulum(), forced_floating_chain()}) {
    for (const char* integrator : {"aba-rk4", "aba-dopri5", "aba-fehlberg8", "aba-dop853-fixed", "crba-rk4", "crba-dopri5",
                                   "crba-fehlberg8", "crba-dop853-fixed"}) {
      const bool fixed = std::string(integrator).find("rk4") != std::string::npos ||
                         std::string(integrator).find("fixed") != std::string::npos;
      auto sim = rec().create(m, integrator, fixed ? 1e-3 : 1e-8);
      sim->run(0.5, nullptr);  // warm-up
      EXPECT_EQ(testing::allocations_during([&] { sim->run(0.5, nullptr); }), 0) << integrator;
    }
  }
}

}  // namespace
}  // namespace mbs
