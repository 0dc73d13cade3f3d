// Exact motion of a one-degree-of-freedom mechanism that reduces to a pendulum: a point at distance
// L from a fixed pivot moves on a circle, its angle phi from the downward vertical obeying
//   J phi'' = -g c sin phi     (J: the mechanism's inertia about phi, kg m^2; c: its gravity moment, kg m),
// from any phi0, phi'0 (a simple pendulum is J = m L^2, c = m L). With w0^2 = g c / J and W the rate
// at the bottom (W^2 = phi'0^2 + 4 w0^2 sin^2(phi0/2)), in Jacobi elliptic functions:
//   libration   (W < 2 w0):  sin(phi/2) = k sn(w0 t + u0, k),   k = W / (2 w0);
//   circulation (W > 2 w0):  phi/2 = am(W t / 2 + u0, k),       k = 2 w0 / W.
#pragma once

#include <Eigen/Dense>

#include "problem/reference_kinds.hpp"

namespace mbs {

class EquivalentPendulum {
 public:
  enum class Motion { kLibration, kCirculation };

  // w0_squared = g c / J (1/s^2), phi0 (rad from the downward vertical), phi_dot0 (rad/s, >= 0: the
  // side is chosen so that the motion starts towards increasing phi). Not on the separatrix.
  EquivalentPendulum(double w0_squared, double phi0, double phi_dot0);

  // A point at r0 (moving at v0) about `pivot`, gravity `g` (m/s^2), in the model's local frame.
  // The circle's plane is spanned by the downward direction and the point's offset (or, straight
  // above or below the pivot, its velocity); phi grows along the initial motion.
  static EquivalentPendulum from_point(const Eigen::VectorXd& pivot, const Eigen::VectorXd& r0, const Eigen::VectorXd& v0,
                                       const Eigen::VectorXd& g, double inertia, double moment);

  Motion motion() const { return motion_; }
  double modulus() const { return k_; }
  double phi(double t) const;      // rad, continuous (grows by 2 pi per turn in circulation)
  double phi_dot(double t) const;  // rad/s
  // Period (s): of a full swing (libration) or of a full turn (circulation).
  double period() const;
  Eigen::VectorXd position(double t) const;  // m, local frame (from_point only)
  Eigen::VectorXd velocity(double t) const;  // m/s

 private:
  Motion motion_ = Motion::kLibration;
  double w0_ = 0.0, W_ = 0.0, k_ = 0.0, u0_ = 0.0;
  double L_ = 0.0;
  Eigen::VectorXd pivot_, down_, side_;
};

// reference kind "equivalent_pendulum": {kind, point, pivot, inertia, moment}: the problem file's
// reduction of a 1-DOF mechanism to J phi'' = -g c sin phi, for the measured point (NAME or
// BODY.POINT) about the pivot. The loader checks J against the model's kinetic energy at t = 0; c is
// the problem file's claim (a wrong one shows as every formulation converging elsewhere).
class EquivalentPendulumReference final : public Reference {
 public:
  using Reference::Reference;
  Eigen::VectorXd pivot;               // local frame (m)
  double inertia = 0.0, moment = 0.0;  // J (kg m^2), c (kg m)

  EquivalentPendulum exact(const Problem& problem) const;
  std::shared_ptr<const ReferenceTrajectory> trajectory(const Problem& problem, const ReferenceOptions&, ReferenceSetup& setup) const override;
  std::unique_ptr<ReferenceObserver> observer(const Problem& problem) const override;
  // Written with the results (reference/trajectory.csv) so reports can draw it; never read back.
  std::string stored_text(const Problem& problem, const ReferenceTrajectory& reference) const override;
};

}  // namespace mbs
