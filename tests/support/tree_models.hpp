// Models of rigid bodies and joints built in code for the recursive engine's tests, and the anchors
// they are joined by.
#pragma once

#include <Eigen/Dense>
#include <memory>
#include <string>

#include "core/model.hpp"
#include "elements/fixed.hpp"
#include "elements/prismatic.hpp"
#include "elements/revolute.hpp"
#include "elements/rod.hpp"
#include "elements/spherical.hpp"

namespace mbs::testing {

inline RigidBody box(const std::string& name, double mass, const Eigen::Vector3d& edges, const Eigen::Vector3d& r0,
              const Eigen::Matrix3d& R0, const Eigen::Vector3d& v0, const Eigen::Vector3d& w0) {
  RigidBody b;
  b.name = name;
  b.mass = mass;
  b.second_moments = mass / 12.0 * edges.cwiseProduct(edges);
  b.r0 = r0;
  b.v0 = v0;
  b.R0 = R0;
  b.omega0 = w0;
  b.length_scale = edges.maxCoeff();
  b.frame_centroid = Eigen::Vector3d::Zero();
  b.frame_axes = Eigen::Matrix3d::Identity();
  return b;
}

inline Anchor ground(const Eigen::Vector3d& at) {
  Anchor a;
  a.at = at;
  return a;
}
// Anchor on body k at the world point x (t = 0).
inline Anchor on(const Model& m, int k, const Eigen::Vector3d& x) {
  Anchor a;
  a.point = kNoPoint;
  a.body = k;
  a.at = m.bodies[k].R0.transpose() * (x - m.bodies[k].r0);
  return a;
}
inline Anchor point(int p) {
  Anchor a;
  a.point = p;
  return a;
}

inline Eigen::Matrix3d rot(double angle, const Eigen::Vector3d& axis) {
  return Eigen::AngleAxisd(angle, axis.normalized()).toRotationMatrix();
}

// A tree of every joint type: ground -revolute- B1 -spherical- B2 -prismatic- B3 -rod- P, a box
// B4 welded to B1, and a free point F. (Initial velocities need not satisfy the joints: the tree
// takes their joint components; at_rest sets them all to zero.)
inline Model mixed_tree(bool with_rod = true, bool at_rest = false,
                        const Eigen::Vector3d& gravity = Eigen::Vector3d(0, -9.81, 0)) {
  Model m;
  m.dim = 3;
  m.basis = Eigen::Matrix3d::Identity();
  m.gravity = gravity;
  const Eigen::Matrix3d R2 = Eigen::AngleAxisd(0.7, Eigen::Vector3d(1, 2, 3).normalized()).toRotationMatrix();
  const Eigen::Matrix3d R3 = Eigen::AngleAxisd(-0.4, Eigen::Vector3d(0, 1, 1).normalized()).toRotationMatrix();
  m.bodies.push_back(box("B1", 1.0, {0.1, 0.6, 0.1}, {0, -0.3, 0}, Eigen::Matrix3d::Identity(), {0, 0, 0}, {0.5, 0, 0.15}));
  m.bodies.push_back(box("B2", 0.5, {0.2, 0.2, 0.4}, {0.1, -0.8, 0.15}, R2, {0.3, 0, 0}, {0.3, -0.5, 0.8}));
  m.bodies.push_back(box("B3", 0.3, {0.1, 0.3, 0.1}, {0.3, -1.0, 0.2}, R2, {0, 0, 0}, {0, 0, 0}));
  m.bodies.push_back(box("B4", 0.2, {0.2, 0.1, 0.1}, {0.15, -0.2, 0.0}, R3, {0, 0, 0}, {0, 0, 0}));
  m.points.push_back({"P", 0.4, Eigen::Vector3d(0.6, -1.5, 0.1), Eigen::Vector3d(0.2, 0.1, -0.3)});
  m.points.push_back({"F", 0.1, Eigen::Vector3d(1.0, 1.0, 1.0), Eigen::Vector3d(0.5, 2.0, 0.0)});
  auto rj = std::make_shared<RevoluteJoint>();
  rj->name = "hinge";
  rj->a = ground({0, 0, 0});
  rj->b = on(m, 0, {0, 0, 0});
  rj->axis = Eigen::Vector3d(1, 0, 0.3).normalized();
  auto sj = std::make_shared<SphericalJoint>();
  sj->name = "ball";
  sj->a = on(m, 0, {0, -0.6, 0});
  sj->b = on(m, 1, {0, -0.6, 0});
  auto pj = std::make_shared<PrismaticJoint>();
  pj->name = "slider";
  pj->a = on(m, 1, {0.2, -0.9, 0.2});
  pj->b = on(m, 2, {0.3, -1.0, 0.2});
  pj->axis = Eigen::Vector3d(0.1, -0.1, 0.0).normalized();
  auto fj = std::make_shared<FixedJoint>();
  fj->name = "weld";
  fj->a = on(m, 0, {0.1, -0.2, 0});
  fj->b = on(m, 3, {0.1, -0.2, 0});
  auto rod = std::make_shared<Rod>();
  rod->name = "rod";
  rod->a = on(m, 2, {0.3, -1.1, 0.2});
  rod->b = point(0);
  rod->length = (Eigen::Vector3d(0.6, -1.5, 0.1) - Eigen::Vector3d(0.3, -1.1, 0.2)).norm();
  m.elements = {rj, sj, pj, fj};
  if (with_rod) m.elements.push_back(rod);
  if (at_rest) {
    for (RigidBody& b : m.bodies) b.v0.setZero(), b.omega0.setZero();
    for (PointMass& p : m.points) p.v0.setZero();
  }
  return m;
}

}  // namespace mbs::testing
