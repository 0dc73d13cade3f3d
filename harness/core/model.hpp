// The generic mechanical model: what a problem file describes, built once and never mutated.
//
// Units are SI throughout: m, kg, s, N, J.
// Space: a model is either planar (dim = 2) or spatial (dim = 3). Every vector stored here is in
// the model's local frame of `dim` components; `origin` and `basis` map it to world coordinates
// (world = origin + basis * local), so a planar problem in the x-z plane is as easy as one in x-y.
#pragma once

#include <Eigen/Dense>
#include <string>
#include <vector>

namespace mbs {

// Index used for "the ground" wherever a point index is expected.
inline constexpr int kGround = -1;
// Returned by Model::find_point for a name that is not a point.
inline constexpr int kNoPoint = -2;

struct PointMass {
  std::string name;
  double mass = 0.0;      // kg
  Eigen::VectorXd r0;     // initial position, local frame (m)
  Eigen::VectorXd v0;     // initial velocity, local frame (m/s)
};

// A massless rigid rod keeping two points at a fixed distance. In a planar model its end joints are
// pins (revolute, axis normal to the plane); in a spatial model they are spherical joints.
struct Rod {
  std::string name;
  int a = kGround;            // point index, or kGround
  int b = kGround;            // point index (never kGround: a rod between two ground points is rejected)
  Eigen::VectorXd ground_a;   // fixed end position (local frame, m) when a == kGround
  double length = 0.0;        // m
};

struct Model {
  std::string name;
  int dim = 2;                         // 2 (planar) or 3 (spatial)
  Eigen::Vector3d origin = Eigen::Vector3d::Zero();
  Eigen::Matrix3Xd basis;              // 3 x dim, orthonormal columns
  Eigen::VectorXd gravity;             // local frame (m/s^2)
  std::vector<PointMass> points;
  std::vector<Rod> rods;

  // Natural (fully Cartesian) coordinates: the positions of all points stacked, dim each.
  int nq() const { return dim * static_cast<int>(points.size()); }
  // Number of scalar constraint equations (one per rod).
  int nc() const { return static_cast<int>(rods.size()); }

  Eigen::VectorXd initial_q() const;
  Eigen::VectorXd initial_v() const;
  // Diagonal of the (lumped, exact for point masses) mass matrix in natural coordinates (kg).
  Eigen::VectorXd mass_diagonal() const;

  int find_point(const std::string& point_name) const;  // kNoPoint when absent
  Eigen::Vector3d to_world(const Eigen::VectorXd& local_point) const { return origin + basis * local_point; }
  Eigen::Vector3d to_world_direction(const Eigen::VectorXd& local_vec) const { return basis * local_vec; }
};

}  // namespace mbs
