// Formulation "recursive"'s linearization about a static equilibrium (formulations/recursive/
// linearizer.cpp), in the tree's tangent coordinates: exact spectra of the 3D pendulum (its problem
// file) and of a planar double pendulum (closed form), a spatial chain of a spherical joint, a
// revolute joint and a rod against the natural-coordinate linearizers, the analytic stiffness K
// against finite differences (of the generalized gravity force from ABA at equilibria, of the
// potential anywhere), a configuration off the equilibrium refused, and no allocation.
//
// Tolerances. Every eigenvalue is computed by Cholesky of M and the symmetric eigenproblem of
// L^-1 K L^-T, backward stable: omega^2 is off by ~n eps |L^-1 K L^-T| ~ n eps kappa(M) omega_max^2,
// and s = +-i omega by half that relative (well separated or semisimple eigenvalues). On the models
// here kappa(M) <= ~1e3, n <= 8: 1e-12 relative in s^2 to the largest |s|^2 leaves about a decade
// over n eps kappa ~ 1e-12 at worst; compared with another exact linearizer (ida-index3) the bound
// is the sum of both. A zero eigenvalue (a rotation about the vertical that gravity does not
// resist) sits at ~eps |s_max|^2 in s^2, i.e. at ~sqrt(eps) |s_max| in s: spectra are therefore
// compared in s^2, where every eigenvalue's error is of the same order.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include "core/formulation.hpp"
#include "elements/fixed.hpp"
#include "elements/prismatic.hpp"
#include "elements/revolute.hpp"
#include "elements/spherical.hpp"
#include "elements/spring_damper.hpp"
#include "problem/problem.hpp"
#include "recursive/linearizer.hpp"
#include "recursive/spatial_tree.hpp"
#include "run/linearization_case.hpp"
#include "support/alloc_counter.hpp"
#include "support/linearization_text.hpp"
#include "support/models.hpp"
#include "support/tree_models.hpp"

namespace mbs {
namespace {

using recursive::SpatialTree;
using recursive::TreeWorkspace;
using testing::ground;
using testing::on;
using testing::point;
using testing::rot;
// Every joint type, off any equilibrium: the mixed tree at rest, gravity off the vertical.
Model mixed_tree() { return testing::mixed_tree(true, true, Eigen::Vector3d(0.3, -9.81, 0.2)); }
RigidBody box(const std::string& name, double mass, const Eigen::Vector3d& edges, const Eigen::Vector3d& r0,
              const Eigen::Matrix3d& R0) {
  return testing::box(name, mass, edges, r0, R0, Eigen::Vector3d::Zero(), Eigen::Vector3d::Zero());
}

constexpr double kG = 9.81;

std::unique_ptr<Linearizer> linearizer(const std::string& formulation, const Model& model) {
  const Formulation* f = Registry::instance().find(formulation);
  EXPECT_NE(f, nullptr) << formulation;
  if (f == nullptr) return nullptr;
  EXPECT_EQ(f->linearization_unsupported_reason(model), "") << formulation;
  return f->create_linearizer(model);
}

using testing::dump;

// s^2 of every true eigenvalue, ascending. Undamped joint coordinates give s on the axes, s^2 real
// (checked when `on_axes`); other formulations' s may carry rounding or a penalty's damping off them.
std::vector<double> true_squares(const Linearization& lin, bool on_axes = true) {
  std::vector<double> s2;
  for (const Eigenvalue& e : lin.eigenvalues)
    if (e.is_true) {
      const std::complex<double> z = e.s * e.s;
      if (on_axes) {
        EXPECT_EQ(z.imag(), 0.0) << e.s;
      }
      s2.push_back(z.real());
    }
  std::sort(s2.begin(), s2.end());
  return s2;
}

// Largest difference of two ascending lists of s^2 relative to the largest |s^2|.
double relative_gap(const std::vector<double>& a, const std::vector<double>& b) {
  EXPECT_EQ(a.size(), b.size());
  double scale = 0.0, gap = 0.0;
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
    scale = std::max({scale, std::abs(a[i]), std::abs(b[i])});
    gap = std::max(gap, std::abs(a[i] - b[i]));
  }
  return scale > 0.0 ? gap / scale : gap;
}

// --- Model builders (box, anchors, rot, mixed_tree: tests/support/tree_models.hpp) ---------------

// Spatial chain at an equilibrium that is not a straight line: ground -ball- A -hinge- B -rod- C,
// gravity -z. B's centroid and the rod hang 0.3 m off the hinge's origin along x, the hinge axis is
// inclined in the x-z plane, and A's centroid is offset along -x so that the ball carries no moment:
//   hinge: h_B = m_B (0.3, 0, 0) + m_C (0.3, 0, -0.7) lies in the x-z plane with the axis and g, so
//          axis . (h_B x g) = 0;
//   ball:  m_A x_A + (m_B + m_C) 0.3 = 0, x_A = -0.225 m: the whole centroid under the pivot.
// 3 + 1 + 2 = 6 DOF (the fixed-maximum-size path's largest).
Model ball_hinge_rod_chain() {
  Model m;
  m.name = "ball-hinge-rod chain";
  m.dim = 3;
  m.basis = Eigen::Matrix3d::Identity();
  m.gravity = Eigen::Vector3d(0, 0, -kG);
  m.bodies.push_back(box("A", 2.0, {0.15, 0.1, 1.0}, {-0.225, 0.0, -0.5}, rot(0.4, {1, 2, 3})));
  m.bodies.push_back(box("B", 1.0, {0.5, 0.2, 0.1}, {0.3, 0.0, -1.0}, rot(-0.7, {2, -1, 1})));
  m.points.push_back({"C", 0.5, Eigen::Vector3d(0.3, 0.0, -1.7), Eigen::VectorXd::Zero(3)});
  auto ball = std::make_shared<SphericalJoint>();
  ball->name = "ball";
  ball->a = ground({0, 0, 0});
  ball->b = on(m, 0, {0, 0, 0});
  auto hinge = std::make_shared<RevoluteJoint>();
  hinge->name = "hinge";
  hinge->a = on(m, 0, {0, 0, -1});
  hinge->b = on(m, 1, {0, 0, -1});
  hinge->axis = Eigen::Vector3d(1, 0, 0.5).normalized();
  auto rod = std::make_shared<Rod>();
  rod->name = "rod";
  rod->a = on(m, 1, {0.3, 0.0, -1.1});
  rod->b = point(0);
  rod->length = 0.6;
  m.elements = {ball, hinge, rod};
  return m;
}

// A tree with a horizontal slider at an equilibrium: ground -hinge (axis y)- A -slider (along x)- D,
// a box W welded to D, and a second branch ground -ball- E. The hinge carries no moment about y
// (m_A x_A + (m_D + m_W) x_D = 0), the slider's axis is normal to g, E hangs under its pivot. The
// slider on the swinging arm is unstable (tilting the arm sends it downhill): K is indefinite.
Model slider_tree() {
  Model m;
  m.name = "slider tree";
  m.dim = 3;
  m.basis = Eigen::Matrix3d::Identity();
  m.gravity = Eigen::Vector3d(0, 0, -kG);
  m.bodies.push_back(box("A", 1.5, {0.1, 0.1, 0.8}, {-0.2, 0.0, -0.4}, rot(0.3, {0, 0, 1})));
  m.bodies.push_back(box("D", 0.4, {0.2, 0.1, 0.1}, {0.5, 0.0, -0.8}, rot(0.5, {1, 1, 0})));
  m.bodies.push_back(box("W", 0.2, {0.1, 0.1, 0.1}, {0.5, 0.0, -0.9}, rot(1.0, {0, 1, 2})));
  m.bodies.push_back(box("E", 0.7, {0.1, 0.3, 0.6}, {2.0, 0.1, -0.3}, rot(0.2, {1, 0, 0})));
  auto hinge = std::make_shared<RevoluteJoint>();
  hinge->name = "hinge";
  hinge->a = ground({0, 0, 0});
  hinge->b = on(m, 0, {0, 0, 0});
  hinge->axis = Eigen::Vector3d(0, 1, 0);
  auto slider = std::make_shared<PrismaticJoint>();
  slider->name = "slider";
  slider->a = on(m, 0, {0.4, 0.0, -0.8});
  slider->b = on(m, 1, {0.4, 0.0, -0.8});
  slider->axis = Eigen::Vector3d(1, 0, 0);
  auto weld = std::make_shared<FixedJoint>();
  weld->name = "weld";
  weld->a = on(m, 1, {0.5, 0.0, -0.85});
  weld->b = on(m, 2, {0.5, 0.0, -0.85});
  auto ball = std::make_shared<SphericalJoint>();
  ball->name = "ball";
  ball->a = ground({2.0, 0.1, 0.0});
  ball->b = on(m, 3, {2.0, 0.1, 0.0});
  // m_A x_A + (m_D + m_W) x_D = 1.5 (-0.2) + 0.6 (0.5) = 0.
  m.elements = {hinge, slider, weld, ball};
  return m;
}

Model hanging_chain(int dim, const std::vector<double>& masses, const std::vector<double>& lengths) {
  std::vector<testing::ChainLink> links;
  double y = 0.0;
  for (size_t i = 0; i < masses.size(); ++i) {
    y -= lengths[i];
    links.push_back({masses[i], Eigen::Vector3d(0.0, y, 0.0)});
  }
  Model m = testing::chain_model(dim, links);
  m.name = std::to_string(masses.size()) + "-link hanging chain (dim " + std::to_string(dim) + ")";
  return m;
}

// --- Tangent increments and finite differences -------------------------------------------------------

// q (+) delta (see linearizer.cpp): joint variables add; quaternions times exp(delta / 2), delta
// the rotation vector S_w delta in child coordinates.
Eigen::VectorXd retract(const SpatialTree& tree, const Eigen::VectorXd& q, const Eigen::VectorXd& delta) {
  Eigen::VectorXd out = q;
  for (const recursive::TreeBody& b : tree.bodies) {
    if (b.type != recursive::JointType::kSpherical) {
      out.segment(b.qi, b.nv) += delta.segment(b.vi, b.nv);
      continue;
    }
    const Eigen::Vector3d w = b.S.topRows<3>() * delta.segment(b.vi, b.nv);
    const double angle = w.norm();
    const Eigen::Quaterniond dq =
        angle > 0.0 ? Eigen::Quaterniond(Eigen::AngleAxisd(angle, w / angle)) : Eigen::Quaterniond::Identity();
    const Eigen::Quaterniond r = Eigen::Quaterniond(q[b.qi], q[b.qi + 1], q[b.qi + 2], q[b.qi + 3]) * dq;
    out.segment<4>(b.qi) << r.w(), r.x(), r.y(), r.z();
  }
  return out;
}

// Generalized gravity force at q from the engine's dynamics: H(q) FD(q, 0) (ABA, then CRBA's H).
Eigen::VectorXd gravity_force(const SpatialTree& tree, const Eigen::VectorXd& q) {
  TreeWorkspace ws(tree, true);
  Eigen::VectorXd qdd(tree.nv);
  recursive::aba(tree, q, Eigen::VectorXd::Zero(tree.nv), ws, qdd);
  Eigen::MatrixXd H;
  recursive::mass_matrix(tree, q, ws, H);
  return H * qdd;
}

// V = -sum m g . x over the model's point masses and body centroids, at tree configuration q.
double potential(const SpatialTree& tree, const Model& model, const Eigen::VectorXd& q) {
  TreeWorkspace ws(tree, false);
  Eigen::VectorXd qn(model.nq()), vn(model.nq());
  recursive::model_state(tree, model, q, Eigen::VectorXd::Zero(tree.nv), ws, qn, vn);
  const Eigen::Vector3d g = tree.gravity;
  double V = 0.0;
  for (size_t p = 0; p < model.points.size(); ++p) V -= model.points[p].mass * g.dot(qn.segment<3>(3 * p));
  for (size_t k = 0; k < model.bodies.size(); ++k)
    V -= model.bodies[k].mass * g.dot(qn.segment<3>(model.body_offset(static_cast<int>(k))));
  return V;
}

// tau and K of GravityStiffness at q.
void analytic(const SpatialTree& tree, const Eigen::VectorXd& q, Eigen::VectorXd& tau, Eigen::MatrixXd& K) {
  TreeWorkspace ws(tree, false);
  recursive::kinematics(tree, q, Eigen::VectorXd::Zero(tree.nv), ws);
  recursive::GravityStiffness gs(tree);
  tau.resize(tree.nv);
  K.resize(tree.nv, tree.nv);
  gs.evaluate(tree, ws, tau, K);
}

// --- Spectra ---------------------------------------------------------------------------------------

// The problem file's 3D pendulum, scored by the harness against its reference: +-i sqrt(g/l) twice
// (a spatial rod has 2 coordinates, both moving the mass), no spurious eigenvalue.
TEST(RecursiveLinearizer, Pendulum3dProblemExact) {
  const Problem p = load_problem(MBS_SOURCE_DIR "/problems/pendulum_3d_linearization.yaml");
  const Formulation& f = *Registry::instance().find("recursive");
  ASSERT_EQ(f.linearization_unsupported_reason(p.model), "");
  auto lin = f.create_linearizer(p.model);
  const Linearization& r = lin->linearize();
  SCOPED_TRACE(dump(r));
  const auto exact = exact_pendulum_eigenvalues(p);
  ASSERT_EQ(r.eigenvalues.size(), 4u);
  const double error = eigenvalue_error(r.eigenvalues, exact);
  // |s| = 3.13: a backward-stable 2 x 2 problem is off by a few eps |s|.
  EXPECT_LE(error, 1e-14);
  std::printf("recursive on pendulum_3d_linearization: eigenvalue error (2-norm) %.3g\n", error);
  // M = m l^2 I, K = m g l I in the rod's 2 coordinates (rotations about horizontal axes).
  ASSERT_EQ(r.terms.size(), 2u);
  EXPECT_EQ(r.terms[0].first, "M");
  EXPECT_EQ(r.terms[1].first, "K");
  EXPECT_LE((r.terms[0].second - Eigen::Matrix2d::Identity()).norm(), 1e-15);
  EXPECT_LE((r.terms[1].second - kG * Eigen::Matrix2d::Identity()).norm(), 1e-14);
  // Sorted by |s|, ties by imaginary part: -i w, -i w, +i w, +i w.
  EXPECT_LT(r.eigenvalues[1].s.imag(), 0.0);
  EXPECT_GT(r.eigenvalues[2].s.imag(), 0.0);
  const CaseResult row = run_linearization_case(p, f, false);
  EXPECT_EQ(row.status, CaseStatus::kPass) << row.message;
}

// Two point masses on rods, hanging: omega^2 are the roots of the classic quadratic
//   m1 l1 l2 w^4 - (m1 + m2) g (l1 + l2) w^2 + (m1 + m2) g^2 = 0,
// once per horizontal direction (planar: once; spatial: twice). Unequal masses and lengths.
TEST(RecursiveLinearizer, DoublePendulumClosedForm) {
  const double m1 = 2.0, m2 = 0.5, l1 = 1.2, l2 = 0.7;
  const double a = m1 * l1 * l2, b = (m1 + m2) * kG * (l1 + l2), c = (m1 + m2) * kG * kG;
  const double root = std::sqrt(b * b - 4.0 * a * c);
  const double w2_high = (b + root) / (2.0 * a), w2_low = 2.0 * c / (b + root);  // no cancellation
  for (int dim : {2, 3}) {
    SCOPED_TRACE(dim);
    const Model model = hanging_chain(dim, {m1, m2}, {l1, l2});
    auto lin = linearizer("recursive", model);
    const Linearization& r = lin->linearize();
    SCOPED_TRACE(dump(r));
    std::vector<double> want;
    for (int copy = 0; copy < (dim == 3 ? 2 : 1); ++copy) want.insert(want.end(), {-w2_high, -w2_high, -w2_low, -w2_low});
    std::sort(want.begin(), want.end());
    const double gap = relative_gap(true_squares(r), want);
    EXPECT_LE(gap, 1e-12);
    EXPECT_EQ(r.eigenvalues.size(), static_cast<size_t>(dim == 3 ? 8 : 4));
    std::printf("recursive, double pendulum (dim %d): largest relative error of s^2 %.3g\n", dim, gap);
  }
}

// The ball-hinge-rod chain and a 4-link hanging spatial chain (8 DOF: the dynamic-size path) against
// the natural-coordinate linearizers' true eigenvalues. ida-index3 is exact up to rounding: the sum
// of both backward errors, 2e-12. alm-index3 and penalty are off by their compliance and their
// rounding floor ~eps alpha/m; on rigid bodies the rigidity rows weigh against second moments of
// ~1e-3 kg m^2 rather than masses, which raises both by factors this test does not derive (measured:
// 5e-7 and 7e-7 in s^2 on the chain with bodies, 1e-9 and 2e-14 on the point masses). 1e-5 checks
// that they see the same mechanism, not their accuracy (tests/test_linearization.cpp does that).
TEST(RecursiveLinearizer, SpatialChainsAgreeWithNaturalCoordinates) {
  const Model chains[] = {ball_hinge_rod_chain(), hanging_chain(3, {1.0, 0.5, 2.0, 0.8}, {0.5, 1.0, 0.7, 0.8})};
  for (const Model& model : chains) {
    SCOPED_TRACE(model.name);
    auto lin = linearizer("recursive", model);
    const Linearization& r = lin->linearize();
    SCOPED_TRACE(dump(r));
    const std::vector<double> ours = true_squares(r);
    EXPECT_EQ(ours.size(), r.eigenvalues.size());  // all true
    for (const auto& [f, tol] : {std::pair<const char*, double>{"ida-index3", 2e-12}, {"alm-index3", 1e-5}, {"penalty", 1e-5}}) {
      auto other = linearizer(f, model);
      const Linearization& o = other->linearize();
      SCOPED_TRACE(std::string(f) + "\n" + dump(o));
      const double gap = relative_gap(ours, true_squares(o, false));
      EXPECT_LE(gap, tol);
      std::printf("recursive vs %s, %s: largest difference of s^2 %.3g relative\n", f, model.name.c_str(), gap);
    }
  }
}

// An unstable equilibrium: the slider on the swinging arm gives one real pair +-sigma (and the ball
// pendulum beside it its own pairs); ida-index3 agrees.
TEST(RecursiveLinearizer, UnstableSliderAgreesWithIdaIndex3) {
  const Model model = slider_tree();
  auto lin = linearizer("recursive", model);
  const Linearization& r = lin->linearize();
  SCOPED_TRACE(dump(r));
  int real_pairs = 0;
  for (const Eigenvalue& e : r.eigenvalues) real_pairs += e.s.real() > 1e-6;
  EXPECT_EQ(real_pairs, 1);
  auto ida = linearizer("ida-index3", model);
  const Linearization& o = ida->linearize();
  SCOPED_TRACE(dump(o));
  EXPECT_LE(relative_gap(true_squares(r), true_squares(o, false)), 2e-12);
}

// --- The stiffness against finite differences ------------------------------------------------------

// At an equilibrium K = -d tau/d delta, tau the generalized gravity force H(q) FD(q, 0) from ABA at
// q0 (+) delta. Central differences, h = 1e-5: truncation h^2/6 |tau'''| ~ 2e-11 |K| and rounding
// ~eps |tau's terms| / h ~ 1e-10 |K| (geometry of order 1 m), so 1e-8 |K|.
TEST(RecursiveLinearizer, StiffnessMatchesDifferencesOfAbaAtEquilibria) {
  for (const Model& model : {ball_hinge_rod_chain(), slider_tree(), hanging_chain(3, {1.0, 2.0}, {1.0, 0.5})}) {
    SCOPED_TRACE(model.name);
    SpatialTree tree;
    ASSERT_EQ(recursive::build_spatial_tree(model, tree), "");
    auto lin = linearizer("recursive", model);
    const Eigen::MatrixXd K = lin->linearize().terms[1].second;
    const int n = tree.nv;
    const double h = 1e-5;
    Eigen::MatrixXd Kfd(n, n);
    for (int b = 0; b < n; ++b) {
      const Eigen::VectorXd d = h * Eigen::VectorXd::Unit(n, b);
      Kfd.col(b) = -(gravity_force(tree, retract(tree, tree.q0, d)) - gravity_force(tree, retract(tree, tree.q0, -d))) / (2 * h);
    }
    const double error = (K - Kfd).cwiseAbs().maxCoeff() / K.cwiseAbs().maxCoeff();
    EXPECT_LE(error, 1e-8) << "K\n" << K << "\ndifferences\n" << Kfd;
    EXPECT_LE((K - K.transpose()).norm(), 1e-15 * K.norm());
    std::printf("recursive, %s: K against differences of ABA's gravity force, %.3g relative\n", model.name.c_str(), error);
  }
}

// Anywhere, tau = -dV/d delta and K = d2V/d delta2 of the potential V = -sum m g . x (from the
// engine's positions), on a tree of every joint type at random configurations. Central
// differences: first, h = 1e-6 (truncation ~1e-12, rounding ~eps |V| / h ~ 1e-9 of |tau|'s scale);
// second, h = 1e-3 (truncation h^2/3 |V''''| ~ 3e-7 |K|, rounding ~eps |V| / h^2 ~ 1e-9): 1e-7 and
// 2e-6 relative to the largest entry.
TEST(RecursiveLinearizer, StiffnessIsTheHessianOfThePotentialAnywhere) {
  const Model model = mixed_tree();
  SpatialTree tree;
  ASSERT_EQ(recursive::build_spatial_tree(model, tree), "");
  const int n = tree.nv;
  std::mt19937 gen(3);
  std::normal_distribution<double> normal(0.0, 0.6);
  for (int sample = 0; sample < 3; ++sample) {
    Eigen::VectorXd delta(n);
    for (int i = 0; i < n; ++i) delta[i] = normal(gen);
    const Eigen::VectorXd q = retract(tree, tree.q0, delta);
    Eigen::VectorXd tau;
    Eigen::MatrixXd K;
    analytic(tree, q, tau, K);
    auto V = [&](const Eigen::VectorXd& d) { return potential(tree, model, retract(tree, q, d)); };
    Eigen::VectorXd tau_fd(n);
    Eigen::MatrixXd K_fd(n, n);
    for (int a = 0; a < n; ++a) {
      const Eigen::VectorXd ea = Eigen::VectorXd::Unit(n, a);
      tau_fd[a] = -(V(1e-6 * ea) - V(-1e-6 * ea)) / 2e-6;
      const double h = 1e-3;
      for (int b = 0; b < n; ++b) {
        const Eigen::VectorXd eb = Eigen::VectorXd::Unit(n, b);
        K_fd(a, b) = (V(h * (ea + eb)) - V(h * (ea - eb)) - V(h * (eb - ea)) + V(-h * (ea + eb))) / (4 * h * h);
      }
    }
    EXPECT_LE((tau - tau_fd).cwiseAbs().maxCoeff(), 1e-7 * tau.cwiseAbs().maxCoeff()) << tau.transpose() << "\n" << tau_fd.transpose();
    EXPECT_LE((K - K_fd).cwiseAbs().maxCoeff(), 2e-6 * K.cwiseAbs().maxCoeff()) << "K\n" << K << "\ndifferences\n" << K_fd;
    std::printf("recursive, every joint type, sample %d: tau %.3g, K %.3g relative to differences of V\n", sample,
                (tau - tau_fd).cwiseAbs().maxCoeff() / tau.cwiseAbs().maxCoeff(),
                (K - K_fd).cwiseAbs().maxCoeff() / K.cwiseAbs().maxCoeff());
  }
}

// --- Failures, repeatability, allocation -----------------------------------------------------------

using testing::pendulum_3d;

// Off the equilibrium by an angle a, |tau| / (|g| |W|) = sin a: 30 degrees and 1e-6 rad throw, 1e-10
// rad (inside the 1e-8 tolerance) does not.
TEST(RecursiveLinearizer, NotAnEquilibriumThrows) {
  for (const double angle : {30.0 * M_PI / 180.0, 1e-6, 1e-10}) {
    SCOPED_TRACE(angle);
    auto lin = linearizer("recursive", pendulum_3d(Eigen::Vector3d(std::sin(angle), 0.0, -std::cos(angle))));
    if (angle > 1e-8) EXPECT_THROW(lin->linearize(), SolverError);
    else EXPECT_NO_THROW(lin->linearize());
  }
  // A force element is not linearized: unsupported, named.
  Model sprung = pendulum_3d(Eigen::Vector3d(0, 0, -1));
  auto spring = std::make_shared<SpringDamper>();
  spring->name = "spring";
  spring->a = ground({0, 0, 0});
  spring->b = point(0);
  spring->k = 10.0;
  spring->rest_length = 1.0;
  sprung.elements.push_back(spring);
  const std::string why = Registry::instance().find("recursive")->linearization_unsupported_reason(sprung);
  EXPECT_NE(why.find("spring"), std::string::npos) << why;
}

// The 3D pendulum (2 DOF) and the ball-hinge-rod chain (6) take the fixed-maximum-size path, the
// 4-link chain (8) the dynamic one: none allocates, not even on the first call (all is sized at setup).
TEST(RecursiveLinearizer, LinearizeAllocatesNothing) {
  MBS_SKIP_WITHOUT_ALLOCATION_COUNTING();
  const Model models[] = {pendulum_3d(Eigen::Vector3d(0, 0, -1)), ball_hinge_rod_chain(),
                          hanging_chain(3, {1.0, 0.5, 2.0, 0.8}, {0.5, 1.0, 0.7, 0.8})};
  for (const Model& model : models) {
    SCOPED_TRACE(model.name);
    auto lin = linearizer("recursive", model);
    EXPECT_EQ(testing::allocations_during([&] { lin->linearize(); }), 0);
    EXPECT_EQ(testing::allocations_during([&] { lin->linearize(); }), 0);
  }
}

TEST(RecursiveLinearizer, RepeatedCallsGiveIdenticalResults) {
  const Model models[] = {pendulum_3d(Eigen::Vector3d(0, 0, -1)), ball_hinge_rod_chain(),
                          hanging_chain(3, {1.0, 0.5, 2.0, 0.8}, {0.5, 1.0, 0.7, 0.8})};
  for (const Model& model : models) {
    SCOPED_TRACE(model.name);
    auto lin = linearizer("recursive", model);
    const Linearization first = lin->linearize();  // a copy
    testing::expect_identical(first, lin->linearize());
  }
}

}  // namespace
}  // namespace mbs
