// Constraint Jacobians and derivative terms of the natural-coordinate model against finite differences.
#include <gtest/gtest.h>

#include "common/quadratic_rows.hpp"
#include "core/natural_coordinates.hpp"
#include "problem/problem.hpp"
#include "support/models.hpp"

namespace mbs {
namespace {

// Ground - rod - A - rod - B, off-axis so no term vanishes by symmetry.
Model two_rod_chain(int dim) {
  return testing::chain_model(dim, {{1.5, {0.6, -0.8, 0.0}}, {0.5, {1.1, -0.3, dim == 3 ? -0.4 : 0.0}}});
}

class NaturalCoordinatesTest : public ::testing::TestWithParam<int> {};

TEST_P(NaturalCoordinatesTest, JacobianAndDerivativeTermsMatchFiniteDifferences) {
  const Model model = two_rod_chain(GetParam());
  const NaturalCoordinates nat(model);
  const int n = nat.nq(), m = nat.nc();
  Eigen::VectorXd q = model.initial_q() + 0.05 * Eigen::VectorXd::LinSpaced(n, -1, 1);
  Eigen::VectorXd v = Eigen::VectorXd::LinSpaced(n, 0.3, -0.7);
  Eigen::VectorXd mu(m);
  mu << 2.0, -3.0;

  Eigen::MatrixXd J(m, n), Jp(m, n), Jm(m, n), J_fd(m, n);
  nat.Phi_q(q, J);
  // Central differences: truncation O(eps^2), round-off O(1e-16 / eps): 1e-6 gives ~1e-10.
  const double eps = 1e-6;
  Eigen::VectorXd fp(m), fm(m);
  for (int j = 0; j < n; ++j) {
    Eigen::VectorXd qp = q, qm = q;
    qp[j] += eps;
    qm[j] -= eps;
    nat.Phi(qp, fp);
    nat.Phi(qm, fm);
    J_fd.col(j) = (fp - fm) / (2 * eps);
  }
  EXPECT_LT((J - J_fd).cwiseAbs().maxCoeff(), 1e-9);

  // Phi_q v equals J v.
  Eigen::VectorXd Jv(m);
  nat.Phi_q_times(q, v, Jv);
  EXPECT_LT((Jv - J * v).cwiseAbs().maxCoeff(), 1e-14);

  // d/dt(Phi_q) v = d/deps [Phi_q(q + eps v) v].
  nat.Phi_q(q + eps * v, Jp);
  nat.Phi_q(q - eps * v, Jm);
  Eigen::VectorXd Jdot_v(m);
  nat.Phi_q_dot_v(q, v, Jdot_v);
  EXPECT_LT((Jdot_v - (Jp - Jm) * v / (2 * eps)).cwiseAbs().maxCoeff(), 1e-8);

  // sum mu_k d2Phi_k/dq2 = d/dq (Phi_q^T mu).
  Eigen::MatrixXd K = Eigen::MatrixXd::Zero(n, n), K_fd(n, n);
  nat.add_Phi_qq_times(mu, K);
  for (int j = 0; j < n; ++j) {
    Eigen::VectorXd qp = q, qm = q;
    qp[j] += eps;
    qm[j] -= eps;
    nat.Phi_q(qp, Jp);
    nat.Phi_q(qm, Jm);
    K_fd.col(j) = (Jp - Jm).transpose() * mu / (2 * eps);
  }
  EXPECT_LT((K - K_fd).cwiseAbs().maxCoeff(), 1e-8);
}

TEST_P(NaturalCoordinatesTest, ViolationIsDistanceErrorToFirstOrder) {
  Model model = two_rod_chain(GetParam());
  const NaturalCoordinates nat(model);
  Eigen::VectorXd q = model.initial_q();
  // Stretch rod 1 radially by 1 micrometre: Phi_0 = (|d|^2 - L^2) / 2L = 1e-6 + O(1e-12).
  q.head(model.dim) *= 1.0 + 1e-6;
  Eigen::VectorXd phi(2);
  nat.Phi(q, phi);
  EXPECT_NEAR(phi[0], 1e-6, 1e-11);
}

TEST_P(NaturalCoordinatesTest, EnergyOfPointMassesUnderGravity) {
  const Model model = two_rod_chain(GetParam());
  const NaturalCoordinates nat(model);
  Eigen::VectorXd q = model.initial_q(), v = Eigen::VectorXd::Zero(nat.nq());
  v[0] = 2.0;  // A moves at 2 m/s: T = 1/2 * 1.5 * 4 = 3 J
  // V = -sum m g.r = 9.81 * (1.5 * -0.8 + 0.5 * -0.3)
  EXPECT_NEAR(nat.energy(q, v), 3.0 + 9.81 * (1.5 * -0.8 + 0.5 * -0.3), 1e-13);
}

INSTANTIATE_TEST_SUITE_P(PlanarAndSpatial, NaturalCoordinatesTest, ::testing::Values(2, 3));

// The fixed-size paths' explicit quadratics (formulations/common/quadratic_rows.hpp) give every
// constraint function of the generic row loop, to round-off, at states off the constraints: the
// planar two-rod chain (4 coordinates, 2 rows) and a spatial pendulum (3, 1).
template <int NQ, int NC>
void expect_quadratics_match(const Model& model) {
  const NaturalCoordinates nat(model);
  const QuadraticRows<NQ, NC> quad(nat);
  using Vec = Eigen::Matrix<double, NQ, 1>;
  using CVec = Eigen::Matrix<double, NC, 1>;
  for (int trial = 0; trial < 3; ++trial) {
    const Vec q = model.initial_q() + 0.3 * Vec::Random(), v = 2.0 * Vec::Random();
    const Eigen::VectorXd mu = Eigen::VectorXd::Random(NC);
    SCOPED_TRACE(trial);
    EXPECT_TRUE(quad.matches(nat, q));
    CVec a, b;
    Eigen::VectorXd g(NC);
    quad.Phi_q_times(q, v, a);
    nat.Phi_q_times(q, v, g);
    EXPECT_LT((a - g).cwiseAbs().maxCoeff(), 1e-13);
    quad.Phi_q_dot_v(v, b);
    nat.Phi_q_dot_v(q, v, g);
    EXPECT_LT((b - g).cwiseAbs().maxCoeff(), 1e-13);
    Eigen::Matrix<double, NQ, NQ> K = Eigen::Matrix<double, NQ, NQ>::Zero();
    Eigen::MatrixXd K_nat = Eigen::MatrixXd::Zero(NQ, NQ);
    quad.add_Phi_qq_times(CVec(mu), K);
    nat.add_Phi_qq_times(mu, K_nat);
    EXPECT_LT((K - K_nat).cwiseAbs().maxCoeff(), 1e-14);
  }
}

TEST(QuadraticRows, EqualTheGenericConstraintFunctions) {
  expect_quadratics_match<4, 2>(two_rod_chain(2));
  expect_quadratics_match<3, 1>(testing::chain_model(3, {{1.0, {0.6, -0.7, 0.4}}}));
}

}  // namespace
}  // namespace mbs
