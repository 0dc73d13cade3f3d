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

// A homogeneous rigid box (spatial models only). Its natural coordinates are the centroid r_G and
// the three unit vectors u_1..u_3 of its principal axes (12 coordinates, 6 rigidity constraints):
// a body point at body-frame coordinates p is r_G + p_1 u_1 + p_2 u_2 + p_3 u_3, linear in q. With
// the centroid as origin and principal axes as unit vectors, the mass matrix is diagonal:
// m for r_G and J_k = integral of rho x_k^2 dV for u_k (García de Jalón & Bayo, ch. 3).
struct RigidBody {
  std::string name;
  double density = 0.0;             // kg/m^3
  Eigen::Vector3d size;             // box edge lengths along the body axes (m)
  double mass = 0.0;                // kg: density x volume
  Eigen::Vector3d second_moments;   // J_k = m size_k^2 / 12 (kg m^2), about the centroid along axis k
  Eigen::Vector3d r0, v0;           // centroid position (m) and velocity (m/s), local frame
  Eigen::Matrix3d R0;               // columns: the body axes in the local frame (orthonormal, det +1)
  Eigen::Vector3d omega0;           // angular velocity (rad/s), local frame
  double length_scale = 1.0;        // m: half the box diagonal; scales the rigidity constraints to metres

  // Central inertia tensor in the body frame (kg m^2): I_xx = J_y + J_z, ...
  Eigen::Vector3d principal_inertia() const {
    const double j = second_moments.sum();
    return Eigen::Vector3d(j - second_moments[0], j - second_moments[1], j - second_moments[2]);
  }
};

// A point a joint attaches to: the ground, a point mass, or a point fixed on a rigid body.
struct Anchor {
  int point = kGround;   // point-mass index or kGround; kNoPoint when `body` is set
  int body = -1;         // rigid-body index, or -1
  Eigen::VectorXd at;    // ground: position (local frame, m); body: body-frame coordinates (m)
};

// Keeps two anchors coincident (dim scalar equations): a ball-and-socket joint.
struct SphericalJoint {
  std::string name;
  Anchor a, b;
};

// Frictionless unilateral contact of a point mass with a fixed plane (a rigid wall): the gap
// g = n . (r - p0) must stay >= 0; when the point hits the plane (g = 0, n . v < 0) its normal
// velocity is reversed and scaled by Newton's restitution coefficient e: (n . v)+ = -e (n . v)-.
struct PlaneContact {
  std::string name;
  int point = 0;               // point-mass index
  Eigen::VectorXd plane_point; // a point of the plane, local frame (m)
  Eigen::VectorXd normal;      // unit normal towards the allowed side, local frame
  double restitution = 0.0;    // Newton's e, 0..1
};

struct Model {
  std::string name;
  int dim = 2;                         // 2 (planar) or 3 (spatial)
  Eigen::Vector3d origin = Eigen::Vector3d::Zero();
  Eigen::Matrix3Xd basis;              // 3 x dim, orthonormal columns
  Eigen::VectorXd gravity;             // local frame (m/s^2)
  std::vector<PointMass> points;
  std::vector<Rod> rods;
  std::vector<RigidBody> bodies;            // spatial models only
  std::vector<SphericalJoint> sphericals;
  std::vector<PlaneContact> contacts;       // unilateral: not in nc(), formulations treat them apart

  // Natural (fully Cartesian) coordinates: the positions of all points stacked, dim each, then
  // each rigid body's [r_G, u_1, u_2, u_3] (12 each).
  int nq() const { return dim * static_cast<int>(points.size()) + kBodyCoordinates * static_cast<int>(bodies.size()); }
  int body_offset(int k) const { return dim * static_cast<int>(points.size()) + kBodyCoordinates * k; }
  // Scalar constraint equations, in this order: one per rod, dim per spherical joint, 6 per body.
  int nc() const {
    return static_cast<int>(rods.size()) + dim * static_cast<int>(sphericals.size()) +
           kBodyConstraints * static_cast<int>(bodies.size());
  }
  static constexpr int kBodyCoordinates = 12;
  static constexpr int kBodyConstraints = 6;

  Eigen::VectorXd initial_q() const;
  Eigen::VectorXd initial_v() const;
  // Diagonal of the (lumped, exact for point masses) mass matrix in natural coordinates (kg).
  Eigen::VectorXd mass_diagonal() const;

  int find_point(const std::string& point_name) const;  // kNoPoint when absent
  int find_body(const std::string& body_name) const;    // -1 when absent
  // World-independent position of an anchor (local frame, m) for natural coordinates q.
  Eigen::VectorXd anchor_position(const Anchor& anchor, const Eigen::VectorXd& q) const;
  const std::string& anchor_name(const Anchor& anchor) const;  // "ground", or the body's name
  // Contact gap (m, >= 0 when admissible) and normal velocity (m/s, < 0 when approaching).
  double gap(const PlaneContact& c, const Eigen::VectorXd& q) const {
    return c.normal.dot(q.segment(dim * c.point, dim) - c.plane_point);
  }
  double normal_velocity(const PlaneContact& c, const Eigen::VectorXd& v) const {
    return c.normal.dot(v.segment(dim * c.point, dim));
  }
  Eigen::Vector3d to_world(const Eigen::VectorXd& local_point) const { return origin + basis * local_point; }
  Eigen::Vector3d to_world_direction(const Eigen::VectorXd& local_vec) const { return basis * local_vec; }
};

}  // namespace mbs
