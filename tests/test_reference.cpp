// The exact pendulum solutions the harness scores against.
#include <gtest/gtest.h>

#include <cmath>

#include "references/equivalent_pendulum.hpp"
#include "references/simple_pendulum.hpp"

namespace mbs {
namespace {

TEST(JacobiElliptic, ReducesToCircularAndHyperbolicLimits) {
  double sn, cn, dn;
  jacobi_sn_cn_dn(0.7, 0.0, sn, cn, dn);  // k = 0: sn = sin, cn = cos
  EXPECT_NEAR(sn, std::sin(0.7), 1e-15);
  EXPECT_NEAR(cn, std::cos(0.7), 1e-15);
  jacobi_sn_cn_dn(0.7, 1.0 - 1e-12, sn, cn, dn);  // k -> 1: sn -> tanh
  EXPECT_NEAR(sn, std::tanh(0.7), 1e-9);
}

TEST(JacobiElliptic, QuarterPeriodAndIdentities) {
  const double k = std::sin(M_PI / 4);
  double sn, cn, dn;
  jacobi_sn_cn_dn(std::comp_ellint_1(k), k, sn, cn, dn);  // sn(K) = 1
  EXPECT_NEAR(sn, 1.0, 1e-14);
  EXPECT_NEAR(cn, 0.0, 1e-14);
  for (double u : {0.1, 0.9, 1.7, 3.3}) {
    jacobi_sn_cn_dn(u, k, sn, cn, dn);
    EXPECT_NEAR(sn * sn + cn * cn, 1.0, 1e-14);
    EXPECT_NEAR(dn * dn + k * k * sn * sn, 1.0, 1e-14);
    // The inverse: F(asin(sn), k) = u for u in (0, K).
    if (u < std::comp_ellint_1(k)) {
      EXPECT_NEAR(std::ellint_1(k, std::asin(sn)), u, 1e-13);
    }
  }
}

TEST(SimplePendulumExact, SatisfiesTheEquationOfMotionAndConservesEnergy) {
  const double L = 1.0, g = 9.81;
  const SimplePendulumExact ex(L, g, M_PI / 2);
  EXPECT_NEAR(ex.theta(0.0), M_PI / 2, 1e-14);
  EXPECT_NEAR(ex.theta_dot(0.0), 0.0, 1e-12);
  const double T = ex.period();
  EXPECT_NEAR(T, 4 * std::sqrt(L / g) * std::comp_ellint_1(std::sin(M_PI / 4)), 1e-14);
  EXPECT_NEAR(ex.theta(T / 4), 0.0, 1e-12);
  EXPECT_NEAR(ex.theta(T / 2), -M_PI / 2, 1e-7);  // asin near +-1 turns 1e-16 in sn into ~1e-8 in theta
  EXPECT_NEAR(ex.theta(T), M_PI / 2, 1e-7);
  const double h = 1e-4;
  for (double t : {0.3, 1.1, 2.9, 7.5, 10.0}) {
    // theta'' = -(g/L) sin(theta), by central differences (error ~ h^2 theta'''' ~ 1e-6).
    const double acc = (ex.theta(t + h) - 2 * ex.theta(t) + ex.theta(t - h)) / (h * h);
    EXPECT_NEAR(acc, -(g / L) * std::sin(ex.theta(t)), 1e-5) << "t = " << t;
    EXPECT_NEAR((ex.theta(t + h) - ex.theta(t - h)) / (2 * h), ex.theta_dot(t), 1e-6) << "t = " << t;
    // Energy per unit mass: L^2 w^2 / 2 - g L cos(theta) = -g L cos(theta0) = 0.
    EXPECT_NEAR(0.5 * L * L * std::pow(ex.theta_dot(t), 2) - g * L * std::cos(ex.theta(t)), 0.0, 1e-12);
  }
}

TEST(SimplePendulumExact, FromTheProblemFile) {
  const Problem p = load_problem(MBS_SOURCE_DIR "/problems/planar_pendulum.yaml");
  const SimplePendulumExact ex = SimplePendulumExact::from_problem(p);
  EXPECT_NEAR((ex.position(0.0) - Eigen::Vector2d(-1, 0)).norm(), 0.0, 1e-15);
  // At a quarter period the mass passes the bottom, moving in +x.
  EXPECT_NEAR((ex.position(ex.period() / 4) - Eigen::Vector2d(0, -1)).norm(), 0.0, 1e-11);
  EXPECT_GT(ex.velocity(ex.period() / 4)[0], 0.0);
  EXPECT_NEAR(ex.velocity(ex.period() / 4).norm(), std::sqrt(2 * 9.81), 1e-10);
}

// phi'' = -w0^2 sin(phi) by classical RK4 at step h (global error ~1e-12 rad at h = 1e-4 s).
double rk4_pendulum(double w2, double phi0, double phi_dot0, double t, double* phi_dot) {
  Eigen::Vector2d y(phi0, phi_dot0);
  auto f = [w2](const Eigen::Vector2d& z) { return Eigen::Vector2d(z[1], -w2 * std::sin(z[0])); };
  const long n = std::lround(t / 1e-4);
  const double h = t / n;
  for (long i = 0; i < n; ++i) {
    const Eigen::Vector2d k1 = f(y), k2 = f(y + 0.5 * h * k1), k3 = f(y + 0.5 * h * k2), k4 = f(y + h * k3);
    y += h / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4);
  }
  *phi_dot = y[1];
  return y[0];
}

// Both regimes, from the bottom, the top and in between, against an independent RK4 integration;
// the energy (per unit J) phi'^2 / 2 - w0^2 cos(phi) is constant to round-off.
TEST(EquivalentPendulum, LibrationAndCirculationMatchTheEquationOfMotion) {
  struct Start {
    double w2, phi0, phi_dot0;
    EquivalentPendulum::Motion motion;
  };
  using M = EquivalentPendulum::Motion;
  for (const Start& s : {Start{9.81, 1.0, 0.5, M::kLibration}, Start{9.81, -2.0, 1.0, M::kLibration},
                         Start{9.81, M_PI / 2, 0.0, M::kLibration}, Start{4.0, 0.3, 5.0, M::kCirculation},
                         Start{9.81 * 60.5 / (41.0 / 3 + 40), M_PI, 1.0, M::kCirculation}}) {
    SCOPED_TRACE(::testing::Message() << "w0^2 " << s.w2 << " phi0 " << s.phi0 << " phi'0 " << s.phi_dot0);
    const EquivalentPendulum p(s.w2, s.phi0, s.phi_dot0);
    EXPECT_EQ(p.motion(), s.motion);
    EXPECT_NEAR(p.phi(0.0), s.phi0, 1e-13);
    EXPECT_NEAR(p.phi_dot(0.0), s.phi_dot0, 1e-12);
    const double e0 = 0.5 * s.phi_dot0 * s.phi_dot0 - s.w2 * std::cos(s.phi0);
    for (double t : {0.7, 3.3, 20.0}) {
      double rk_dot = 0.0;
      const double rk = rk4_pendulum(s.w2, s.phi0, s.phi_dot0, t, &rk_dot);
      EXPECT_NEAR(p.phi(t), rk, 1e-10) << "t = " << t;
      EXPECT_NEAR(p.phi_dot(t), rk_dot, 1e-10) << "t = " << t;
      EXPECT_NEAR(0.5 * std::pow(p.phi_dot(t), 2) - s.w2 * std::cos(p.phi(t)), e0, 1e-12 * (1 + std::abs(e0)));
    }
    // One period on, the motion repeats (a swing back to phi0, or a turn: phi0 + 2 pi).
    const double turn = s.motion == M::kCirculation ? 2 * M_PI : 0.0;
    EXPECT_NEAR(p.phi(p.period()), s.phi0 + turn, 1e-9);
  }
  EXPECT_THROW(EquivalentPendulum(1.0, 0.0, 2.0), std::invalid_argument);  // on the separatrix: W = 2 w0
}

// A simple pendulum released from rest is the special case J = m L^2, c = m L.
TEST(EquivalentPendulum, ReducesToTheSimplePendulum) {
  const double L = 1.5, g = 9.81, m = 2.0;
  const SimplePendulumExact simple(L, g, M_PI / 3);
  const Eigen::Vector2d pivot(0, 0), r0(L * std::sin(M_PI / 3), -L * std::cos(M_PI / 3));
  const EquivalentPendulum eq = EquivalentPendulum::from_point(pivot, r0, Eigen::Vector2d::Zero(), Eigen::Vector2d(0, -g),
                                                               m * L * L, m * L);
  for (double t : {0.0, 0.4, 1.3, 5.0}) EXPECT_NEAR(eq.phi(t), simple.theta(t), 1e-12) << "t = " << t;
}

}  // namespace
}  // namespace mbs
