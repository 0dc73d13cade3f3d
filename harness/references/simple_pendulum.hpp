// Exact motion of a simple pendulum released from rest (any amplitude below pi), in Jacobi
// elliptic functions:  theta(t) = 2 asin( k sn(K(k) - w0 t, k) ),  k = sin(theta0 / 2),
// w0 = sqrt(g / L), period T = 4 K(k) / w0.  theta is measured from the downward vertical.
#pragma once

#include <Eigen/Dense>

#include "core/model.hpp"
#include "problem/problem.hpp"
#include "problem/reference_kinds.hpp"

namespace mbs {

// Jacobi elliptic functions sn, cn, dn of argument u and modulus k (0 <= k < 1), by the
// arithmetic-geometric mean (Abramowitz & Stegun 16.4), accurate to a few ulps.
void jacobi_sn_cn_dn(double u, double k, double& sn, double& cn, double& dn);
// The amplitude am(u, k) (rad, continuous in u) they come from: sn = sin(am), cn = cos(am).
double jacobi_am(double u, double k);

class SimplePendulumExact {
 public:
  // length (m), gravity magnitude (m/s^2), initial angle from the downward vertical (rad).
  SimplePendulumExact(double length, double g, double theta0);
  // From a problem's simple_pendulum_exact reference: pivot, point, gravity and initial position
  // from the model.
  static SimplePendulumExact from_problem(const Problem& problem);

  double period() const;                  // s
  double theta(double t) const;           // rad
  double theta_dot(double t) const;       // rad/s
  // Position of the mass in the model's local frame (needs from_problem).
  Eigen::VectorXd position(double t) const;
  Eigen::VectorXd velocity(double t) const;
  // Horizontal offset (m) of a position from the vertical through the pivot, positive towards the
  // release side; zero when the pendulum passes the bottom.
  double swing_offset(const Eigen::VectorXd& r) const { return (r - pivot_).dot(side_); }
  double swing_rate(const Eigen::VectorXd& v) const { return v.dot(side_); }

 private:
  double L_, k_, K_, w0_;
  Eigen::VectorXd pivot_, down_, side_;  // local frame: pivot, unit downward, unit towards release side
};

// reference kind "simple_pendulum_exact": {kind, point, pivot}, a point mass hung from the pivot by
// one rod and released from rest (the loader checks the model is just that). Gives the point's
// position in time, its final position, and the swing checks (period, energy after n swings).
class SimplePendulumReference final : public Reference {
 public:
  using Reference::Reference;
  int point = kNoPoint;   // point-mass index in the model
  Eigen::VectorXd pivot;  // local frame (m)

  std::shared_ptr<const ReferenceTrajectory> trajectory(const Problem& problem, const ReferenceOptions&, ReferenceSetup& setup) const override;
  std::unique_ptr<ReferenceObserver> observer(const Problem& problem) const override;
};

}  // namespace mbs
