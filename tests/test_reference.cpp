// The exact simple-pendulum solution the harness scores against.
#include <gtest/gtest.h>

#include <cmath>

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

}  // namespace
}  // namespace mbs
