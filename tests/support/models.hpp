// Small models built in code for tests: chains of point masses hung from a ground pivot.
#pragma once

#include <Eigen/Dense>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "core/model.hpp"
#include "elements/rod.hpp"

namespace mbs::testing {

struct ChainLink {
  double mass;         // kg
  Eigen::Vector3d r0;  // initial position (m); a planar model uses x, y
  Eigen::Vector3d v0 = Eigen::Vector3d::Zero();  // initial velocity (m/s)
};

// Ground pivot at the origin, a rod to the first point and between consecutive points, each rod as
// long as its ends are apart initially; gravity 9.81 m/s^2 along -y; points named A, B, C, ...
inline Model chain_model(int dim, const std::vector<ChainLink>& links) {
  Model m;
  m.dim = dim;
  m.basis = Eigen::Matrix3d::Identity().leftCols(dim);
  m.gravity = Eigen::VectorXd::Zero(dim);
  m.gravity[1] = -9.81;
  Eigen::VectorXd previous = Eigen::VectorXd::Zero(dim);
  for (size_t i = 0; i < links.size(); ++i) {
    const Eigen::VectorXd r = links[i].r0.head(dim), v = links[i].v0.head(dim);
    m.points.push_back({std::string(1, static_cast<char>('A' + i)), links[i].mass, r, v});
    m.elements.push_back(std::make_shared<Rod>("rod" + std::to_string(i), i == 0 ? kGround : static_cast<int>(i) - 1, static_cast<int>(i),
                      Eigen::VectorXd::Zero(dim), (r - previous).norm()));
    previous = r;
  }
  return m;
}

// A planar chain of n point masses, 1 m and 1 kg in all, its links alternating either side of the
// vertical (a generic configuration: every rod's row independent); for the large-model tests.
inline Model zigzag_chain(int n) {
  std::vector<ChainLink> links;
  const double L = 1.0 / n;
  Eigen::Vector3d r = Eigen::Vector3d::Zero();
  for (int i = 0; i < n; ++i) {
    const double a = i % 2 ? 0.3 : -0.2;
    r += L * Eigen::Vector3d(std::sin(a), -std::cos(a), 0.0);
    links.push_back({1.0 / n, r});
  }
  return chain_model(2, links);
}

// A planar four-bar of point masses: ground pivots O1 = (0, 0) and O2 = (2, 0), crank O1-A, coupler
// A-B, rocker B-O2, released from rest under gravity (-y). One degree of freedom, a closed loop.
inline Model four_bar() {
  Model m = chain_model(2, {{1.0, {0.3, 0.9, 0.0}}, {0.5, {1.6, 1.1, 0.0}}});
  const Eigen::Vector2d O2(2.0, 0.0);
  m.elements.push_back(std::make_shared<Rod>("rocker", kGround, 1, O2, (m.points[1].r0 - O2).norm()));
  return m;
}

// The 3D pendulum of the IFToMM linearization problem: m = 1 kg at r (the spec's equilibrium
// (0, 0, -1)), a rod of 1 m from a ground pivot at the origin, gravity 9.81 m/s^2 along -z (the
// specs' clarification); duplicate_rod adds a second, redundant rod.
inline Model pendulum_3d(const Eigen::Vector3d& r = Eigen::Vector3d(0, 0, -1), bool duplicate_rod = false) {
  Model m;
  m.name = "3D pendulum";
  m.dim = 3;
  m.basis = Eigen::Matrix3d::Identity();
  m.gravity = Eigen::Vector3d(0, 0, -9.81);
  m.points.push_back({"P", 1.0, r, Eigen::VectorXd::Zero(3)});
  m.elements.push_back(std::make_shared<Rod>("OP", kGround, 0, Eigen::VectorXd::Zero(3), 1.0));
  if (duplicate_rod) m.elements.push_back(std::make_shared<Rod>("OP2", kGround, 0, Eigen::VectorXd::Zero(3), 1.0));
  return m;
}

}  // namespace mbs::testing
