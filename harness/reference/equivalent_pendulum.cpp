#include "reference/equivalent_pendulum.hpp"

#include <cmath>
#include <stdexcept>

namespace mbs {

double jacobi_am(double u, double k) {
  // Descending Landen / AGM: a_{n+1} = (a+b)/2, b_{n+1} = sqrt(ab), c_{n+1} = (a-b)/2; then
  // phi_N = 2^N a_N u and phi_{n-1} = (phi_n + asin(c_n sin(phi_n) / a_n)) / 2.
  constexpr int kMax = 16;
  double a[kMax + 1], c[kMax + 1];
  a[0] = 1.0;
  double b = std::sqrt(1.0 - k * k);
  c[0] = k;
  int n = 0;
  while (std::abs(c[n]) > 1e-16 && n < kMax) {
    a[n + 1] = 0.5 * (a[n] + b);
    c[n + 1] = 0.5 * (a[n] - b);
    b = std::sqrt(a[n] * b);
    ++n;
  }
  double phi = std::ldexp(a[n] * u, n);
  for (int i = n; i > 0; --i) phi = 0.5 * (phi + std::asin(c[i] * std::sin(phi) / a[i]));
  return phi;
}

EquivalentPendulum::EquivalentPendulum(double w0_squared, double phi0, double phi_dot0) {
  if (!(w0_squared >= 0.0) || !(phi_dot0 >= 0.0)) throw std::invalid_argument("EquivalentPendulum: w0^2 and phi_dot0 must be >= 0");
  w0_ = std::sqrt(w0_squared);
  phi0 = std::remainder(phi0, 2.0 * M_PI);  // (-pi, pi]
  const double s0 = std::sin(0.5 * phi0);
  W_ = std::sqrt(phi_dot0 * phi_dot0 + 4.0 * w0_squared * s0 * s0);
  if (W_ > 2.0 * w0_) {
    motion_ = Motion::kCirculation;
    k_ = 2.0 * w0_ / W_;
    u0_ = std::ellint_1(k_, 0.5 * phi0);
  } else if (W_ < 2.0 * w0_) {
    motion_ = Motion::kLibration;
    k_ = W_ / (2.0 * w0_);
    // am(u0) from sn(u0) = sin(phi0/2) / k and cn(u0) = phi'0 / (2 k w0) >= 0 together: asin alone
    // loses half the digits at a turning point (sn = 1).
    u0_ = k_ > 0.0 ? std::ellint_1(k_, std::atan2(s0, 0.5 * phi_dot0 / w0_)) : 0.0;
  } else {
    throw std::invalid_argument("EquivalentPendulum: the motion is on the separatrix (it takes infinite time to reach the top)");
  }
}

EquivalentPendulum EquivalentPendulum::from_point(const Eigen::VectorXd& pivot, const Eigen::VectorXd& r0,
                                                  const Eigen::VectorXd& v0, const Eigen::VectorXd& g, double inertia,
                                                  double moment) {
  const Eigen::VectorXd d0 = r0 - pivot, down = g / g.norm();
  const double L = d0.norm();
  Eigen::VectorXd side = d0 - d0.dot(down) * down;
  if (side.norm() <= 1e-12 * L) side = v0 - v0.dot(down) * down;  // straight above or below: the velocity sets the plane
  if (!(side.norm() > 0.0)) throw std::invalid_argument("EquivalentPendulum: the point hangs at rest straight below its pivot or stands straight above it");
  side.normalize();
  double phi0 = std::atan2(d0.dot(side), d0.dot(down));
  const Eigen::VectorXd tangent = -std::sin(phi0) * down + std::cos(phi0) * side;
  double phi_dot0 = v0.dot(tangent) / L;
  if (phi_dot0 < 0.0) {  // mirror the plane so that phi grows along the initial motion
    side = -side;
    phi0 = -phi0;
    phi_dot0 = -phi_dot0;
  }
  EquivalentPendulum p(g.norm() * moment / inertia, phi0, phi_dot0);
  p.L_ = L;
  p.pivot_ = pivot;
  p.down_ = down;
  p.side_ = side;
  return p;
}

double EquivalentPendulum::phi(double t) const {
  if (motion_ == Motion::kCirculation) return 2.0 * jacobi_am(0.5 * W_ * t + u0_, k_);
  if (k_ == 0.0) return 0.0;
  return 2.0 * std::asin(k_ * std::sin(jacobi_am(w0_ * t + u0_, k_)));
}

double EquivalentPendulum::phi_dot(double t) const {
  if (motion_ == Motion::kCirculation) {
    const double s = std::sin(jacobi_am(0.5 * W_ * t + u0_, k_));
    return W_ * std::sqrt(1.0 - k_ * k_ * s * s);  // W dn(u)
  }
  return 2.0 * k_ * w0_ * std::cos(jacobi_am(w0_ * t + u0_, k_));  // 2 k w0 cn(u)
}

double EquivalentPendulum::period() const {
  const double K = std::comp_ellint_1(k_);
  return motion_ == Motion::kCirculation ? 4.0 * K / W_ : 4.0 * K / w0_;
}

Eigen::VectorXd EquivalentPendulum::position(double t) const {
  const double p = phi(t);
  return pivot_ + L_ * (std::cos(p) * down_ + std::sin(p) * side_);
}

Eigen::VectorXd EquivalentPendulum::velocity(double t) const {
  const double p = phi(t), w = phi_dot(t);
  return L_ * w * (-std::sin(p) * down_ + std::cos(p) * side_);
}

}  // namespace mbs
