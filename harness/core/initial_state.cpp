#include "core/initial_state.hpp"

#include <Eigen/Dense>
#include <fmt/format.h>

#include "core/cancellation.hpp"
#include "core/natural_coordinates.hpp"

namespace mbs {

namespace {
// Gauss-Newton stops when |Phi|_inf falls below this (m): far below the loader's acceptance of
// kInitialTolerance times a row's scale.
constexpr double kProjectionTol = 1e-12;
constexpr int kMaxIterations = 50;
}  // namespace

std::string project_initial_state(Model& model) {
  if (model.nc() == 0) return {};
  const double nc = model.nc(), nq = model.nq(), work = nc * nc * (nc + nq);
  if (work > kMaxUninterruptibleDenseWork)
    return fmt::format("--project-initial-state: the dense projection of {} constraint rows on {} coordinates "
                       "(O(nc^2 (nc + nq)) = {:.1e} per iteration) is too large for this model: refused; "
                       "give a consistent initial state in the file", model.nc(), model.nq(), work);
  const NaturalCoordinates nat(model);
  Eigen::VectorXd q = model.initial_q(), v = model.initial_v(), phi(model.nc());
  const Eigen::VectorXd Minv = nat.M_diag().cwiseInverse();
  Eigen::MatrixXd J(model.nc(), model.nq());
  for (int it = 0; it < kMaxIterations; ++it) {
    throw_if_cancelled("projecting the initial state");  // at load: --timeout's reading budget
    nat.Phi(q, phi);
    if (phi.cwiseAbs().maxCoeff() < kProjectionTol) break;
    nat.Phi_q(q, J);
    // Complete orthogonal decomposition: redundant rows (rank-deficient J) are fine.
    const Eigen::MatrixXd S = J * Minv.asDiagonal() * J.transpose();
    q -= Minv.asDiagonal() * J.transpose() * S.completeOrthogonalDecomposition().solve(phi);
  }
  nat.Phi_q(q, J);
  const Eigen::MatrixXd S = J * Minv.asDiagonal() * J.transpose();
  v -= Minv.asDiagonal() * J.transpose() * S.completeOrthogonalDecomposition().solve(J * v);

  const int d = model.dim;
  for (size_t i = 0; i < model.points.size(); ++i) {
    model.points[i].r0 = q.segment(d * i, d);
    model.points[i].v0 = v.segment(d * i, d);
  }
  for (size_t b = 0; b < model.bodies.size(); ++b) {
    RigidBody& body = model.bodies[b];
    const int o = model.body_offset(static_cast<int>(b));
    body.r0 = q.segment(o, d);
    body.v0 = v.segment(o, d);
    for (int a = 0; a < d; ++a) body.R0.col(a) = q.segment(o + d + d * a, d);
    // Exactly orthonormal (the projection leaves ~1e-12): the nearest rotation, by polar decomposition.
    const Eigen::JacobiSVD<Eigen::MatrixXd> svd(body.R0, Eigen::ComputeFullU | Eigen::ComputeFullV);
    body.R0 = svd.matrixU() * svd.matrixV().transpose();
    body.omega0 = nat.angular_velocity(static_cast<int>(b), q, v);
  }
  return {};
}

}  // namespace mbs
