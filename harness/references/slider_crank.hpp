// A planar slider-crank reduced to its one degree of freedom, the crank angle theta: a crank turning
// about a ground pin O, a connecting rod pinned to it at P and to a slider at B, the slider on a
// prismatic joint along a ground line. Every body's position is a function of theta (closed-form
// loop closure), the kinetic energy is (1/2) M(theta) theta'^2, and Lagrange's equation
//   M(theta) theta'' + (1/2) M'(theta) theta'^2 = Q(theta)     (Q: gravity and constant torques on the crank)
// is integrated by SUNDIALS ARKODE (explicit Fehlberg 7(8), ERKStep) at two tight tolerances.
//
// theta is the crank's principal axis u_1 angle (as the planar torque's potential measures it), so
// the torques' work is tau (theta - theta0).
#pragma once

#include <Eigen/Dense>
#include <array>
#include <vector>

#include "problem/problem.hpp"
#include "problem/reference_kinds.hpp"

namespace mbs {

class SliderCrank {
 public:
  // The bodies by index (the loader has checked the joints: see read_slider_crank).
  SliderCrank(const Model& model, int crank, int rod, int slider);

  double theta0() const { return theta0_; }
  double theta_dot0() const { return theta_dot0_; }
  double mass(double theta) const;                           // M (kg m^2)
  double theta_ddot(double theta, double theta_dot) const;   // rad/s^2, from Lagrange's equation
  // T + V_gravity - tau (theta - theta0) (J): conserved along the motion.
  double energy(double theta, double theta_dot) const;
  double kinetic_energy(double theta, double theta_dot) const;
  // The whole model's natural coordinates and their rates at (theta, theta').
  Eigen::VectorXd q(double theta) const;
  Eigen::VectorXd v(double theta, double theta_dot) const;

  // theta and theta' at t_k = min(k dt, t_end), k = 0..samples-1, ARKODE ERKStep with the Fehlberg
  // 7(8) table at relative tolerance rtol (absolute rtol in rad and rad/s), stepping to each t_k
  // exactly. Throws std::runtime_error when the integrator fails.
  struct Solution {
    std::vector<double> theta, theta_dot;
    long steps = 0;
  };
  Solution integrate(double dt, double t_end, double rtol) const;

  // The largest |(O - B0) . n| + |P0 - O| over the rod length: below 1 the crank turns fully.
  double reach() const { return reach_; }

 private:
  struct Body {
    int index = -1;
    double mass = 0.0, inertia = 0.0;  // kg, kg m^2 (centroidal, about the plane normal)
  };
  // Positions and angles of the three bodies at theta, with their first and second theta-derivatives.
  struct Kinematics {
    std::array<Eigen::Vector2d, 3> r, r1, r2;  // centroids: crank, rod, slider (m, m/rad, m/rad^2)
    std::array<double, 3> phi, phi1, phi2;     // rotations from the initial configuration (rad)
  };
  Kinematics kinematics(double theta) const;
  static Eigen::Vector2d rotate(double angle, const Eigen::Vector2d& x);

  const Model& model_;
  std::array<Body, 3> body_;                    // crank, rod, slider
  Eigen::Vector2d O_, P0_, B0_, u_, n_, g_;     // pivot, pins, slide direction and its normal, gravity
  std::array<Eigen::Vector2d, 3> r0_;           // initial centroids
  double l_ = 0.0, sigma_ = 1.0, psi0_ = 0.0;   // rod pin distance, side of B along u, initial rod angle
  double tau_ = 0.0;                            // N m: the constant torques on the crank
  double theta0_ = 0.0, theta_dot0_ = 0.0, reach_ = 0.0;
};

// reference kind "slider_crank": {kind, crank, rod, slider, points}: the measured points (default:
// the history point) from the integrated 1-DOF model. Its uncertainty is the largest distance
// between the points at two tolerances (kSliderCrankTol and 100x looser); it must be kReferenceMargin
// below a reference-error rule's threshold.
class SliderCrankReference final : public Reference {
 public:
  using Reference::Reference;
  int crank = -1, rod = -1, slider = -1;  // rigid-body indices

  std::shared_ptr<const ReferenceTrajectory> trajectory(const Problem& problem, const ReferenceOptions&,
                                                        ReferenceSetup& setup) const override;
  std::string stored_text(const Problem& problem, const ReferenceTrajectory& reference) const override;
};

// The tolerance of the kept integration, and the looser one its uncertainty is measured against.
inline constexpr double kSliderCrankTol = 1e-13, kSliderCrankLooseTol = 1e-11;

}  // namespace mbs
