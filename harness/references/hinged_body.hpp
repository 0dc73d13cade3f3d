// A rigid body hinged to the ground about a fixed axis and released from rest: energy gives its
// angular speed at the lowest position exactly, |omega| = sqrt(2 m g_perp (h0 - h_min) / I_axis),
// I_axis the moment of inertia about the hinge axis (the body's real inertia, any cross-section).
//
// The angle theta is the centroid's arm (perpendicular to the axis) from the downward direction,
// signed about the axis so that it is positive at release; the body passes the vertical at theta = 0.
#pragma once

#include <Eigen/Dense>

#include "problem/problem.hpp"
#include "problem/reference_kinds.hpp"

namespace mbs {

class HingedBodyExact {
 public:
  static HingedBodyExact from_problem(const Problem& problem);

  double angular_speed_at_vertical() const { return omega_vertical_; }  // rad/s
  double moment_of_inertia() const { return I_axis_; }                    // kg m^2, about the axis
  double initial_angle() const { return theta0_; }                        // rad, > 0
  // theta (rad) and its rate (rad/s) from the centroid's position and velocity in natural coordinates.
  double angle(const Eigen::VectorXd& q) const;
  double angle_rate(const Eigen::VectorXd& q, const Eigen::VectorXd& v) const;
  int centroid_offset() const { return offset_; }

 private:
  Eigen::Vector3d pivot_, axis_, down_;
  double sign_ = 1.0, theta0_ = 0.0, I_axis_ = 0.0, omega_vertical_ = 0.0;
  int offset_ = 0;
};

// reference kind "hinged_body_energy": {kind, body, pivot, axis}, a rigid body on two or more
// spherical joints to the ground along the axis, released from rest (the loader checks the model is
// just that). Gives the check angular_speed_at_vertical; no positions in time.
class HingedBodyReference final : public Reference {
 public:
  using Reference::Reference;
  int body = -1;                                   // rigid-body index
  Eigen::Vector3d pivot = Eigen::Vector3d::Zero();  // a point on the axis, local frame (m)
  Eigen::Vector3d axis = Eigen::Vector3d::Zero();   // unit, local frame

  std::unique_ptr<ReferenceObserver> observer(const Problem& problem) const override;
};

}  // namespace mbs
