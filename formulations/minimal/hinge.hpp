// Joint coordinates for a rigid body hinged to the ground: every spherical joint of the body goes
// to the ground, and their points are distinct and collinear, so together they leave the single
// rotation about that line (two spherical joints give six equations for five removed degrees of
// freedom: the joint-coordinate description has no redundancy to handle). The coordinate psi is
// the rotation about the axis from the initial orientation:
//   R(psi) = Rot(a, psi) R0,  r_G(psi) = p + Rot(a, psi) (r_G0 - p),
//   I_a psi'' = a . ((r_G - p) x m g) = c1 cos(psi) + c2 sin(psi),
// I_a the moment of inertia about the axis (parallel axes), constant.
#pragma once

#include <Eigen/Dense>
#include <memory>
#include <string>

#include "common/integrator_table.hpp"
#include "core/formulation.hpp"

namespace mbs::minimal {

struct Hinge {
  int body = 0;
  Eigen::Vector3d pivot, axis;   // a point of the axis and its unit direction (local frame)
  double I_axis = 0.0;           // kg m^2
  double c1 = 0.0, c2 = 0.0;     // N m: gravity torque = c1 cos(psi) + c2 sin(psi)
  double psi_dot0 = 0.0;         // rad/s: the initial rotation rate about the axis
};

// Fills `hinge`, or returns why the model is not a single hinged rigid body.
std::string build_hinge(const Model& model, Hinge& hinge);

// The simulator of minimal's case `c` (integrator_table.hpp) for the hinge.
std::unique_ptr<Simulator> make_hinge_simulator(const ErkCase& c, const Model& model, const Hinge& hinge, double setting);

}  // namespace mbs::minimal
