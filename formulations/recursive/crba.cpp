#include "recursive/crba.hpp"

#include "recursive/kinematics.hpp"

namespace mbs::recursive {

void composite_mass_matrix(const SpatialTree& tree, TreeWorkspace& ws) {
  const int n = static_cast<int>(tree.bodies.size());
  for (int i = 0; i < n; ++i) ws.IA[i] = tree.bodies[i].I;
  for (int i = n - 1; i >= 0; --i) {
    const TreeBody& b = tree.bodies[i];
    if (b.parent < 0) continue;
    const Mat6 X = xmatrix(ws.E[i], ws.r[i]);
    const Mat6 IX = ws.IA[i] * X;
    ws.IA[b.parent].noalias() += X.transpose() * IX;
  }
  for (int i = 0; i < n; ++i) {
    const TreeBody& b = tree.bodies[i];
    if (b.nv == 0) continue;
    MatS F = ws.IA[i] * b.S;
    ws.H.block(b.vi, b.vi, b.nv, b.nv).noalias() = b.S.transpose() * F;
    int j = i;
    while (tree.bodies[j].parent >= 0) {
      for (int k = 0; k < b.nv; ++k) F.col(k) = xforce_t(ws.E[j], ws.r[j], F.col(k));
      j = tree.bodies[j].parent;
      const TreeBody& bj = tree.bodies[j];
      if (bj.nv > 0) ws.H.block(b.vi, bj.vi, b.nv, bj.nv).noalias() = F.transpose() * bj.S;
    }
  }
}

void crba(const SpatialTree& tree, const Eigen::Ref<const Eigen::VectorXd>& q, const Eigen::Ref<const Eigen::VectorXd>& qd,
          TreeWorkspace& ws, Eigen::Ref<Eigen::VectorXd> qdd, const BodyForces* f_ext) {
  const int n = static_cast<int>(tree.bodies.size());
  kinematics(tree, q, qd, ws);
  // Bias C(q, qd) with gravity: recursive Newton-Euler at qdd = 0 (pA holds the body forces).
  const Vec6 a0 = base_acceleration(tree);
  for (int i = 0; i < n; ++i) {
    const TreeBody& b = tree.bodies[i];
    ws.a[i] = xmotion(ws.E[i], ws.r[i], b.parent < 0 ? a0 : ws.a[b.parent]) + ws.c[i];
    const Vec6 Iv = b.I * ws.v[i];
    ws.pA[i].noalias() = b.I * ws.a[i];
    ws.pA[i] += crf(ws.v[i], Iv);
  }
  if (f_ext != nullptr)
    for (int i = 0; i < n; ++i) ws.pA[i] -= f_ext->spatial[i];
  for (int i = n - 1; i >= 0; --i) {
    const TreeBody& b = tree.bodies[i];
    if (b.nv > 0) ws.b.segment(b.vi, b.nv).noalias() = -b.S.transpose() * ws.pA[i];
    if (b.parent >= 0) ws.pA[b.parent] += xforce_t(ws.E[i], ws.r[i], ws.pA[i]);
  }
  composite_mass_matrix(tree, ws);
  ltdl_factor(tree, ws.H);
  qdd = ws.b;
  ltdl_solve(tree, ws.H, qdd);
}

void ltdl_factor(const SpatialTree& tree, Eigen::MatrixXd& H) {
  // L^T D L in place (Featherstone, Table 6.3): the factor stays in H's tree pattern.
  const std::vector<int>& lambda = tree.dof_parent;
  for (int k = tree.nv - 1; k >= 0; --k) {
    for (int i = lambda[k]; i >= 0; i = lambda[i]) {
      const double a = H(k, i) / H(k, k);
      for (int j = i; j >= 0; j = lambda[j]) H(i, j) -= a * H(k, j);
      H(k, i) = a;
    }
  }
}

void ltdl_solve(const SpatialTree& tree, const Eigen::MatrixXd& L, Eigen::Ref<Eigen::VectorXd> x) {
  // H x = b: x = L^-T b, x = D^-1 x, x = L^-1 x.
  const std::vector<int>& lambda = tree.dof_parent;
  for (int i = tree.nv - 1; i >= 0; --i)
    for (int j = lambda[i]; j >= 0; j = lambda[j]) x[j] -= L(i, j) * x[i];
  for (int i = 0; i < tree.nv; ++i) x[i] /= L(i, i);
  for (int i = 0; i < tree.nv; ++i)
    for (int j = lambda[i]; j >= 0; j = lambda[j]) x[i] -= L(i, j) * x[j];
}

void factored_mass_matrix(const SpatialTree& tree, TreeWorkspace& ws) {
  composite_mass_matrix(tree, ws);
  ltdl_factor(tree, ws.H);
}

void mass_matrix(const SpatialTree& tree, const Eigen::Ref<const Eigen::VectorXd>& q, TreeWorkspace& ws,
                 Eigen::MatrixXd& H) {
  const Eigen::VectorXd zero = Eigen::VectorXd::Zero(tree.nv);
  kinematics(tree, q, zero, ws);
  ws.H.setZero();
  composite_mass_matrix(tree, ws);
  const Eigen::MatrixXd L = ws.H.triangularView<Eigen::Lower>();
  H = L.selfadjointView<Eigen::Lower>();
}

}  // namespace mbs::recursive
