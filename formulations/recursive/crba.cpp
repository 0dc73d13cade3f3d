#include "recursive/crba.hpp"

#include "recursive/kinematics.hpp"
#include "recursive/pins_forward.hpp"

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

namespace {
// LTDL on a chain of DOFs (tree.dof_chain): every DOF's ancestors are the DOFs before it, so the
// factor's rows are contiguous and the updates vectorize. Featherstone's Table 6.3 otherwise.
// Rows i < k never overlap row k: restrict spares each short row update its overlap test.
inline __attribute__((always_inline)) void chain_ltdl_factor(int nv, MassMatrix& H) {
  for (int k = nv - 1; k >= 0; --k) {
    double* __restrict Hk = H.row(k).data();
    const double d_inv = 1.0 / Hk[k];
    for (int i = k - 1; i >= 0; --i) {
      double* __restrict Hi = H.row(i).data();
      const double a = Hk[i] * d_inv;
      for (int j = 0; j <= i; ++j) Hi[j] -= a * Hk[j];
      Hk[i] = a;
    }
  }
}

inline __attribute__((always_inline)) void chain_ltdl_solve(int nv, const MassMatrix& L, Eigen::Ref<Eigen::VectorXd> x_) {
  double* x = x_.data();  // plain loops where they vectorize (no reduction): no expression per row
  for (int i = nv - 1; i >= 0; --i) {
    const double* Li = L.row(i).data();
    const double xi = x[i];
    for (int j = 0; j < i; ++j) x[j] -= Li[j] * xi;
  }
  for (int i = 0; i < nv; ++i) x[i] /= L(i, i);
  for (int i = 1; i < nv; ++i) x[i] -= L.row(i).head(i).dot(x_.head(i));  // Eigen's dot: vectorized sums
}

// The pin path's body; compiled twice (run_pin_path), with and without FMA, as ABA's.
inline __attribute__((always_inline)) void crba_pins_body(const SpatialTree& tree, const Eigen::Ref<const Eigen::VectorXd>& q,
                                                         const Eigen::Ref<const Eigen::VectorXd>& qd, TreeWorkspace& ws,
                                                         Eigen::Ref<Eigen::VectorXd> qdd, const BodyForces* f_ext) {
  const auto [n, B, W] = pins_forward(tree, q, qd, ws, f_ext);
  // Recursive Newton-Euler at qdd = 0: accelerations from the base's (gravity as an upward
  // acceleration), body forces I a + v x* (I v) - f_ext into p.
  const double g1 = -tree.gravity.dot(tree.e1), g2 = -tree.gravity.dot(tree.e2);
  for (int i = 0; i < n; ++i) {
    TreeWorkspace::Pin& w = W[i];
    double a0 = 0.0, a1 = g1, a2 = g2;
    w.X = w.tx;
    w.Y = w.ty;
    if (B[i].parent >= 0) {
      const TreeWorkspace::Pin& wp = W[B[i].parent];
      a0 = wp.a0;
      a1 = wp.a1 + a0 * w.tx;
      a2 = wp.a2 + a0 * w.ty;
      w.X += wp.X;
      w.Y += wp.Y;
    }
    ws.pin_sx[i] = B[i].sigma * w.X;
    ws.pin_sy[i] = B[i].sigma * w.Y;
    w.a0 = a0;
    w.a1 = a1 += w.c1;
    w.a2 = a2 += w.c2;
    w.p0 += w.a * a0 + w.cx * a1 + w.cy * a2;
    w.p1 += w.cx * a0 + w.b00 * a1;
    w.p2 += w.cy * a0 + w.b00 * a2;
  }
  // Backward: the joint force's bias b = -S^T f, the composite inertias (a, cx, cy, m) passed to the
  // parent through t (first moment + m t, moment of inertia + 2 t.c + m |t|^2), and H's row of the
  // body's joint: S^T I^c S on the diagonal, and the force I^c S = (a, cx, cy) carried up to each
  // ancestor joint j, whose moment gains cx t_x + cy t_y summed over the path, (X_i - X_j, Y_i - Y_j):
  // every entry on its own, none waiting for the one below it.
  MassMatrix& H = ws.H;
  const double* __restrict s = tree.pin_sigma.data();
  const double* __restrict sx = ws.pin_sx.data();
  const double* __restrict sy = ws.pin_sy.data();
  for (int i = n - 1; i >= 0; --i) {
    const PinBody& b = B[i];
    TreeWorkspace::Pin& w = W[i];
    ws.b[b.q] = -b.sigma * w.p0;
    H(b.q, b.q) = w.a;
    const double f0 = b.sigma * (w.a + w.cx * w.X + w.cy * w.Y), f1 = b.sigma * w.cx, f2 = b.sigma * w.cy;
    if (tree.dof_chain) {  // ancestors 0 .. i-1, body j's DOF j
      double* __restrict Hi = H.row(b.q).data();
      for (int j = 0; j < i; ++j) Hi[j] = f0 * s[j] - f1 * sx[j] - f2 * sy[j];
    } else {
      for (int j = b.parent; j >= 0; j = B[j].parent) H(b.q, B[j].q) = f0 * s[j] - f1 * sx[j] - f2 * sy[j];
    }
    if (b.parent < 0) continue;
    TreeWorkspace::Pin& wp = W[b.parent];
    const double m = w.b00, tx = w.tx, ty = w.ty;
    wp.p0 += w.p0 + tx * w.p1 + ty * w.p2;
    wp.p1 += w.p1;
    wp.p2 += w.p2;
    wp.a += w.a + 2.0 * (w.cx * tx + w.cy * ty) + m * (tx * tx + ty * ty);
    wp.cx += w.cx + m * tx;
    wp.cy += w.cy + m * ty;
    wp.b00 += m;
  }
  qdd = ws.b;
  if (tree.dof_chain) {
    chain_ltdl_factor(tree.nv, H);
    chain_ltdl_solve(tree.nv, H, qdd);
  } else {
    ltdl_factor(tree, H);
    ltdl_solve(tree, H, qdd);
  }
}

}  // namespace

void crba_planar_pins(const SpatialTree& tree, const Eigen::Ref<const Eigen::VectorXd>& q,
                      const Eigen::Ref<const Eigen::VectorXd>& qd, TreeWorkspace& ws, Eigen::Ref<Eigen::VectorXd> qdd,
                      const BodyForces* f_ext) {
  run_pin_path<crba_pins_body>(tree, q, qd, ws, qdd, f_ext);
}

void crba(const SpatialTree& tree, const Eigen::Ref<const Eigen::VectorXd>& q, const Eigen::Ref<const Eigen::VectorXd>& qd,
          TreeWorkspace& ws, Eigen::Ref<Eigen::VectorXd> qdd, const BodyForces* f_ext) {
  if (tree.pins) return crba_planar_pins(tree, q, qd, ws, qdd, f_ext);
  crba_spatial(tree, q, qd, ws, qdd, f_ext);
}

void crba_spatial(const SpatialTree& tree, const Eigen::Ref<const Eigen::VectorXd>& q,
                  const Eigen::Ref<const Eigen::VectorXd>& qd, TreeWorkspace& ws, Eigen::Ref<Eigen::VectorXd> qdd,
                  const BodyForces* f_ext) {
  kinematics(tree, q, qd, ws);
  mass_matrix_and_bias(tree, ws, f_ext);
  ltdl_factor(tree, ws.H);
  qdd = ws.b;
  ltdl_solve(tree, ws.H, qdd);
}

void mass_matrix_and_bias(const SpatialTree& tree, TreeWorkspace& ws, const BodyForces* f_ext) {
  const int n = static_cast<int>(tree.bodies.size());
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
}

void ltdl_factor(const SpatialTree& tree, MassMatrix& H) {
  // L^T D L in place (Featherstone, Table 6.3): the factor stays in H's tree pattern.
  if (tree.dof_chain) return chain_ltdl_factor(tree.nv, H);
  const std::vector<int>& lambda = tree.dof_parent;
  for (int k = tree.nv - 1; k >= 0; --k) {
    for (int i = lambda[k]; i >= 0; i = lambda[i]) {
      const double a = H(k, i) / H(k, k);
      for (int j = i; j >= 0; j = lambda[j]) H(i, j) -= a * H(k, j);
      H(k, i) = a;
    }
  }
}

void ltdl_solve(const SpatialTree& tree, const MassMatrix& L, Eigen::Ref<Eigen::VectorXd> x) {
  // H x = b: x = L^-T b, x = D^-1 x, x = L^-1 x.
  if (tree.dof_chain) return chain_ltdl_solve(tree.nv, L, x);
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
