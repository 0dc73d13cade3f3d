#include "references/simple_pendulum.hpp"

#include <cmath>
#include <fmt/format.h>

namespace mbs {

void jacobi_sn_cn_dn(double u, double k, double& sn, double& cn, double& dn) {
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
  sn = std::sin(phi);
  cn = std::cos(phi);
  dn = std::sqrt(1.0 - k * k * sn * sn);
}

SimplePendulumExact::SimplePendulumExact(double length, double g, double theta0)
    : L_(length), k_(std::sin(0.5 * theta0)), K_(std::comp_ellint_1(k_)),
      w0_(std::sqrt(g / length)) {}

SimplePendulumExact SimplePendulumExact::from_problem(const Problem& problem) {
  const Model& model = problem.model;
  // The loader has checked every precondition below, with positions; these guard direct callers.
  if (!problem.reference) throw ProblemError(fmt::format("{}: the problem has no reference", problem.file));
  const ReferenceSpec& ref = *problem.reference;
  const PointMass& p = model.points[ref.point];
  const Eigen::VectorXd d0 = p.r0 - ref.pivot;
  const double g = model.gravity.norm();
  if (g == 0.0) throw ProblemError(fmt::format("{}: simple_pendulum_exact needs gravity", problem.file));
  if (p.v0.norm() != 0.0) throw ProblemError(fmt::format("{}: simple_pendulum_exact needs release from rest", problem.file));
  const Eigen::VectorXd down = model.gravity / g;
  const double L = d0.norm();
  const double theta0 = std::acos(std::clamp(d0.dot(down) / L, -1.0, 1.0));
  if (!(theta0 < M_PI)) throw ProblemError(fmt::format("{}: simple_pendulum_exact needs theta0 < pi", problem.file));
  SimplePendulumExact s(L, g, theta0);
  s.pivot_ = ref.pivot;
  s.down_ = down;
  Eigen::VectorXd side = d0 - d0.dot(down) * down;
  s.side_ = side.norm() > 0 ? Eigen::VectorXd(side / side.norm()) : Eigen::VectorXd::Zero(d0.size());
  return s;
}

double SimplePendulumExact::period() const { return 4.0 * K_ / w0_; }

double SimplePendulumExact::theta(double t) const {
  double sn, cn, dn;
  jacobi_sn_cn_dn(K_ - w0_ * t, k_, sn, cn, dn);
  return 2.0 * std::asin(k_ * sn);
}

double SimplePendulumExact::theta_dot(double t) const {
  // d/dt 2 asin(k sn(u)) with u = K - w0 t: -2 k w0 cn dn / sqrt(1 - k^2 sn^2) = -2 k w0 cn.
  double sn, cn, dn;
  jacobi_sn_cn_dn(K_ - w0_ * t, k_, sn, cn, dn);
  return -2.0 * k_ * w0_ * cn;
}

Eigen::VectorXd SimplePendulumExact::position(double t) const {
  const double th = theta(t);
  return pivot_ + L_ * (std::cos(th) * down_ + std::sin(th) * side_);
}

Eigen::VectorXd SimplePendulumExact::velocity(double t) const {
  const double th = theta(t), w = theta_dot(t);
  return L_ * w * (-std::sin(th) * down_ + std::cos(th) * side_);
}

}  // namespace mbs
