#include "recursive/aba.hpp"

#include <cmath>

#include "common/vector_math.hpp"
#include "recursive/kinematics.hpp"
#include "recursive/pins_forward.hpp"

namespace mbs::recursive {

void aba_planar(const SpatialTree& tree, const Eigen::Ref<const Eigen::VectorXd>& q,
                const Eigen::Ref<const Eigen::VectorXd>& qd, TreeWorkspace& ws, Eigen::Ref<Eigen::VectorXd> qdd,
                const BodyForces* f_ext) {
  // Every body's frame is its joint's origin with the plane's axes (e1, e2), not the body's: a
  // transform between frames is then a translation, and no rotation lies on the recursions'
  // dependency chains; each body's rotation phi (from its initial orientation) turns its own inertia
  // and motion subspace, independently of the others.
  const int n = static_cast<int>(tree.bodies.size());
  for (int i = 0; i < n; ++i) {
    const PlanarBody& b = tree.planar_bodies[i];
    const double phi = b.parent < 0 ? 0.0 : ws.planar[b.parent].phi;
    ws.planar[i].phi = b.type == JointType::kRevolute ? phi + b.S(0, 0) * q[b.qi] : phi;  // the axis is +n or -n
  }
  // The rotations' sines and cosines in a loop of their own: independent of one another, they stay
  // off the recursions' dependency chains (libm's, which GCC pairs into one sincos).
  for (int i = 0; i < n; ++i) {
    TreeWorkspace::Planar& w = ws.planar[i];
    w.si = std::sin(w.phi);
    w.co = std::cos(w.phi);
  }
  // Kinematics, and the bodies' own inertias and bias forces (on scalars where a 3-vector would be
  // stored piecewise and read back whole, which stalls the store forwarding).
  for (int i = 0; i < n; ++i) {
    const PlanarBody& b = tree.planar_bodies[i];
    TreeWorkspace::Planar& w = ws.planar[i];
    Vec2 p = b.p;  // the joint's origin in parent coordinates
    const bool pin = b.type == JointType::kRevolute;
    if (!pin && b.nv > 0) {  // prismatic, translation: q are displacements along S; the frame turns with the parent's
      p.noalias() += b.S.bottomRows<2>() * q.segment(b.qi, b.nv);
      w.S.row(0) = b.S.row(0);
      w.S.row(1) = w.co * b.S.row(1) - w.si * b.S.row(2);
      w.S.row(2) = w.si * b.S.row(1) + w.co * b.S.row(2);
    }
    double v0 = 0.0, v1 = 0.0, v2 = 0.0;  // the parent's velocity carried to this frame
    if (b.parent < 0) {
      w.t = Vec2(-p[1], p[0]);
    } else {
      const TreeWorkspace::Planar& wp = ws.planar[b.parent];
      const double tx = -(wp.si * p[0] + wp.co * p[1]), ty = wp.co * p[0] - wp.si * p[1];  // (-r_2, r_1), r = R_parent p
      w.t = Vec2(tx, ty);
      v0 = wp.v[0];
      v1 = wp.v[1] + v0 * tx;
      v2 = wp.v[2] + v0 * ty;
    }
    if (pin) {
      const double wJ = b.S(0, 0) * qd[b.vi];
      v0 += wJ;
      w.c = Vec3(0.0, v2 * wJ, -v1 * wJ);  // v x [wJ 0 0]
    } else if (b.nv > 0) {
      Vec3 vJ;
      vJ.noalias() = w.S * qd.segment(b.vi, b.nv);
      v0 += vJ[0];
      v1 += vJ[1];
      v2 += vJ[2];
      w.c = crm2(Vec3(v0, v1, v2), vJ);
    } else {
      w.c.setZero();
    }
    w.v = Vec3(v0, v1, v2);
    // The inertia turned by the body's rotation R: [a (R c)^T; R c, R B R^T].
    const Mat3& I = b.I;
    const double co = w.co, si = w.si, cs = co * si, cc = co * co, ss = si * si;
    const double a = I(0, 0), cx = co * I(1, 0) - si * I(2, 0), cy = si * I(1, 0) + co * I(2, 0);
    const double b00 = cc * I(1, 1) - 2.0 * cs * I(1, 2) + ss * I(2, 2);
    const double b11 = ss * I(1, 1) + 2.0 * cs * I(1, 2) + cc * I(2, 2);
    const double b01 = cs * (I(1, 1) - I(2, 2)) + (cc - ss) * I(1, 2);
    w.IA << a, cx, cy, cx, b00, b01, cy, b01, b11;
    const double f1 = cx * v0 + b00 * v1 + b01 * v2, f2 = cy * v0 + b01 * v1 + b11 * v2;
    w.pA = Vec3(v1 * f2 - v2 * f1, -v0 * f2, v0 * f1);  // v x* (I v)
  }
  // External forces, in the same frames (at the joint, plane axes). A loop of its own, so that a
  // model without force elements pays one test.
  if (f_ext != nullptr)
    for (int i = 0; i < n; ++i) ws.planar[i].pA -= f_ext->planar[i];
  for (int i = n - 1; i >= 0; --i) {
    const PlanarBody& b = tree.planar_bodies[i];
    TreeWorkspace::Planar& w = ws.planar[i];
    const Mat3& IA = w.IA;
    if (b.type == JointType::kRevolute) {
      // A pin about +-n: D = IA(0, 0) whatever the sign, and no moment about n passes to the
      // parent: the articulated inertia's rotation row and column and pa's moment vanish.
      const double sigma = b.S(0, 0), Dinv = 1.0 / IA(0, 0);
      w.U.col(0) = sigma * IA.col(0);
      w.Dinv = Dinv;
      w.u = -sigma * w.pA[0];
      if (b.parent < 0) continue;
      const double kx = Dinv * IA(1, 0), ky = Dinv * IA(2, 0);
      const double b00 = IA(1, 1) - kx * IA(1, 0), b01 = IA(1, 2) - kx * IA(2, 0), b11 = IA(2, 2) - ky * IA(2, 0);
      const double f = Dinv * w.pA[0];
      const Vec3 pa(0.0, w.pA[1] + b00 * w.c[1] + b01 * w.c[2] - f * IA(1, 0),
                    w.pA[2] + b01 * w.c[1] + b11 * w.c[2] - f * IA(2, 0));
      TreeWorkspace::Planar& wp = ws.planar[b.parent];
      add_xtix_t(w.t, 0.0, 0.0, 0.0, b00, b01, b11, wp.IA);
      wp.pA += xforce_t_t(w.t, pa);
      continue;
    }
    Mat3 Ia;
    Vec3 pa;
    if (b.nv == 1) {  // prismatic
      const Vec3 s = w.S.col(0);
      const Vec3 U = IA * s;
      w.U.col(0) = U;
      w.Dinv = 1.0 / s.dot(U);
      w.u = -s.dot(w.pA);
      if (b.parent < 0) continue;
      Ia.noalias() = IA - (w.Dinv * U) * U.transpose();
      pa.noalias() = w.pA + Ia * w.c + (w.Dinv * w.u) * U;
    } else if (b.nv > 0) {
      w.U.noalias() = IA * w.S;
      invert_small(w.S.transpose() * w.U, ws.Dinv[i]);
      ws.u[i].noalias() = -w.S.transpose() * w.pA;
      if (b.parent < 0) continue;
      const MatS3 UD = w.U * ws.Dinv[i];
      Ia.noalias() = IA - UD * w.U.transpose();
      pa.noalias() = w.pA + Ia * w.c + UD * ws.u[i];
    } else {
      if (b.parent < 0) continue;
      Ia = IA;
      pa = w.pA + Ia * w.c;
    }
    TreeWorkspace::Planar& wp = ws.planar[b.parent];
    // Symmetrized, as in the spatial path.
    add_xtix_t(w.t, Ia(0, 0), 0.5 * (Ia(1, 0) + Ia(0, 1)), 0.5 * (Ia(2, 0) + Ia(0, 2)), Ia(1, 1),
               0.5 * (Ia(1, 2) + Ia(2, 1)), Ia(2, 2), wp.IA);
    wp.pA += xforce_t_t(w.t, pa);
  }
  // A gravity component along n moves nothing in the plane.
  const Vec3 a0(0.0, -tree.gravity.dot(tree.e1), -tree.gravity.dot(tree.e2));
  for (int i = 0; i < n; ++i) {
    const PlanarBody& b = tree.planar_bodies[i];
    TreeWorkspace::Planar& w = ws.planar[i];
    w.a = xmotion_t(w.t, b.parent < 0 ? a0 : ws.planar[b.parent].a) + w.c;
    if (b.type == JointType::kRevolute) {
      const double x = w.Dinv * (w.u - w.U.col(0).dot(w.a));
      qdd[b.vi] = x;
      w.a[0] += b.S(0, 0) * x;
    } else if (b.nv == 1) {
      const double x = w.Dinv * (w.u - w.U.col(0).dot(w.a));
      qdd[b.vi] = x;
      w.a += w.S.col(0) * x;
    } else if (b.nv > 0) {
      const VecJ x = ws.Dinv[i] * (ws.u[i] - w.U.transpose() * w.a);
      qdd.segment(b.vi, b.nv) = x;
      w.a.noalias() += w.S * x;
    }
  }
}

namespace {
// The spatial ABA's body, inlined into aba() so that the planar test costs the spatial path no call.
EIGEN_ALWAYS_INLINE void aba_spatial_body(const SpatialTree& tree, const Eigen::Ref<const Eigen::VectorXd>& q,
                                          const Eigen::Ref<const Eigen::VectorXd>& qd, TreeWorkspace& ws,
                                          Eigen::Ref<Eigen::VectorXd>& qdd, const BodyForces* f_ext) {
  const int n = static_cast<int>(tree.bodies.size());
  kinematics(tree, q, qd, ws);
  for (int i = 0; i < n; ++i) {
    const TreeBody& b = tree.bodies[i];
    ws.IA[i] = b.I;
    ws.pA[i] = crf(ws.v[i], b.I * ws.v[i]);
  }
  if (f_ext != nullptr)
    for (int i = 0; i < n; ++i) ws.pA[i] -= f_ext->spatial[i];
  for (int i = n - 1; i >= 0; --i) {
    const TreeBody& b = tree.bodies[i];
    const int nv = b.nv;
    Mat6 Ia;
    Vec6 pa;
    if (nv == 1) {  // the common case, scalar
      const Vec6 U = ws.IA[i] * b.S.col(0);
      const double Dinv = 1.0 / b.S.col(0).dot(U);
      const double u = -b.S.col(0).dot(ws.pA[i]);
      ws.U[i].col(0) = U;
      ws.Dinv[i](0, 0) = Dinv;
      ws.u[i][0] = u;
      if (b.parent < 0) continue;
      Ia.noalias() = ws.IA[i] - (Dinv * U) * U.transpose();
      pa.noalias() = ws.pA[i] + Ia * ws.c[i] + (Dinv * u) * U;
    } else if (nv > 0) {
      ws.U[i].noalias() = ws.IA[i] * b.S;
      const MatJ D = b.S.transpose() * ws.U[i];
      if (nv == 2) {  // closed forms: Eigen's inverse of a runtime-size block goes through an LU
        const double det = D(0, 0) * D(1, 1) - D(0, 1) * D(1, 0);
        ws.Dinv[i].resize(2, 2);
        ws.Dinv[i] << D(1, 1) / det, -D(0, 1) / det, -D(1, 0) / det, D(0, 0) / det;
      } else if (nv == 3) {
        ws.Dinv[i] = Mat3(D).inverse();
      } else {
        ws.Dinv[i] = D.inverse();
      }
      ws.u[i].noalias() = -b.S.transpose() * ws.pA[i];
      if (b.parent < 0) continue;
      const MatS UD = ws.U[i] * ws.Dinv[i];
      Ia.noalias() = ws.IA[i] - UD * ws.U[i].transpose();
      pa.noalias() = ws.pA[i] + Ia * ws.c[i] + UD * ws.u[i];
    } else {
      if (b.parent < 0) continue;
      Ia = ws.IA[i];
      pa = ws.pA[i] + Ia * ws.c[i];
    }
    // Symmetrized: the Schur complement's round-off has an antisymmetric part that the recursion
    // amplifies link after link on spatial chains (docs/formulations.md, `recursive`).
    Ia = (0.5 * (Ia + Ia.transpose())).eval();
    const Mat6 X = xmatrix(ws.E[i], ws.r[i]);
    const Mat6 IaX = Ia * X;
    ws.IA[b.parent].noalias() += X.transpose() * IaX;
    ws.pA[b.parent] += xforce_t(ws.E[i], ws.r[i], pa);
  }
  const Vec6 a0 = base_acceleration(tree);
  for (int i = 0; i < n; ++i) {
    const TreeBody& b = tree.bodies[i];
    ws.a[i] = xmotion(ws.E[i], ws.r[i], b.parent < 0 ? a0 : ws.a[b.parent]) + ws.c[i];
    if (b.nv == 1) {
      const double x = ws.Dinv[i](0, 0) * (ws.u[i][0] - ws.U[i].col(0).dot(ws.a[i]));
      qdd[b.vi] = x;
      ws.a[i] += b.S.col(0) * x;
    } else if (b.nv > 0) {
      const VecJ x = ws.Dinv[i] * (ws.u[i] - ws.U[i].transpose() * ws.a[i]);
      qdd.segment(b.vi, b.nv) = x;
      ws.a[i] += b.S * x;
    }
  }
}
}  // namespace

void aba_spatial(const SpatialTree& tree, const Eigen::Ref<const Eigen::VectorXd>& q,
                 const Eigen::Ref<const Eigen::VectorXd>& qd, TreeWorkspace& ws, Eigen::Ref<Eigen::VectorXd> qdd,
                 const BodyForces* f_ext) {
  aba_spatial_body(tree, q, qd, ws, qdd, f_ext);
}

namespace {
// The pin path's body; compiled twice (run_pin_path), with and without FMA.
inline __attribute__((always_inline)) void pins_body(const SpatialTree& tree, const Eigen::Ref<const Eigen::VectorXd>& q,
                                                    const Eigen::Ref<const Eigen::VectorXd>& qd, TreeWorkspace& ws,
                                                    Eigen::Ref<Eigen::VectorXd> qdd, const BodyForces* f_ext) {
  // aba_planar's pin branches on plain scalars: one compact record per body, no Eigen object built
  // per body, the articulated inertia's six distinct entries, each body's own inertia turned as
  // [a (R c)^T; R c, m 1] (PinBody), set by the forward pass shared with CRBA.
  const auto [n, B, W] = pins_forward(tree, q, qd, ws, f_ext);
  // What a body passes to its parent. Where the parent is the body just before it (a chain), the
  // next iteration takes it from these registers, not through the parent's record: a store and a
  // load on the recursion's dependency chain at every body (docs/formulations.md, Method notes).
  struct Passed {
    double a = 0.0, cx = 0.0, cy = 0.0, b00 = 0.0, b01 = 0.0, b11 = 0.0, p0 = 0.0, p1 = 0.0, p2 = 0.0;
  } up;
  for (int i = n - 1; i >= 0; --i) {
    const PinBody& b = B[i];
    TreeWorkspace::Pin& w = W[i];
    const double A = w.a + up.a, cx = w.cx + up.cx, cy = w.cy + up.cy, p0 = w.p0 + up.p0;
    const double Dinv = 1.0 / A;
    w.a = A, w.cx = cx, w.cy = cy, w.p0 = p0;
    w.Dinv = Dinv;
    if (b.parent < 0) {
      up = Passed{};
      continue;
    }
    // No moment about n passes a pin: the parent gains the Schur complement's translation block
    // B = b - c c^T / A and the bias p + B c_v - c p0 / A (c_v = (c1, c2)), passed through t. Written so
    // that Dinv enters each sum last (B t = b t - c (t.c) / A, t^T B t = t^T b t - (t.c)^2 / A, ...):
    // the recursion's dependency chain runs through Dinv, the other products are ready before it.
    const double t0 = w.tx, t1 = w.ty, c1 = w.c1, c2 = w.c2;
    const double b00t = w.b00 + up.b00, b01t = w.b01 + up.b01, b11t = w.b11 + up.b11;
    const double tc = t0 * cx + t1 * cy, cc = p0 + cx * c1 + cy * c2;
    const double btx = b00t * t0 + b01t * t1, bty = b01t * t0 + b11t * t1;
    const double q1 = (w.p1 + up.p1) + b00t * c1 + b01t * c2, q2 = (w.p2 + up.p2) + b01t * c1 + b11t * c2;
    const Passed give{(t0 * btx + t1 * bty) - (tc * tc) * Dinv,
                      btx - (cx * tc) * Dinv,
                      bty - (cy * tc) * Dinv,
                      b00t - (cx * cx) * Dinv,
                      b01t - (cx * cy) * Dinv,
                      b11t - (cy * cy) * Dinv,
                      (t0 * q1 + t1 * q2) - (tc * cc) * Dinv,
                      q1 - (cx * cc) * Dinv,
                      q2 - (cy * cc) * Dinv};
    if (b.parent == i - 1) {
      up = give;
    } else {
      TreeWorkspace::Pin& wp = W[b.parent];
      wp.a += give.a;
      wp.cx += give.cx;
      wp.cy += give.cy;
      wp.b00 += give.b00;
      wp.b01 += give.b01;
      wp.b11 += give.b11;
      wp.p0 += give.p0;
      wp.p1 += give.p1;
      wp.p2 += give.p2;
      up = Passed{};
    }
  }
  const double g1 = -tree.gravity.dot(tree.e1), g2 = -tree.gravity.dot(tree.e2);
  double prev0 = 0.0, prev1 = 0.0, prev2 = 0.0;  // the previous body's acceleration (chains, as above)
  for (int i = 0; i < n; ++i) {
    const PinBody& b = B[i];
    TreeWorkspace::Pin& w = W[i];
    double a0 = 0.0, a1 = g1, a2 = g2;
    if (b.parent >= 0 && b.parent == i - 1) {
      a0 = prev0;
      a1 = prev1;
      a2 = prev2;
    } else if (b.parent >= 0) {
      const TreeWorkspace::Pin& wp = W[b.parent];
      a0 = wp.a0;
      a1 = wp.a1;
      a2 = wp.a2;
    }
    // x = u - U.a with U = sigma IA e_0, u = -sigma pA_0, a = (a0, a1 + a0 t0, a2 + a0 t1) + c, i.e.
    // -sigma Dinv (K + L a0); the body's a0 + sigma x = -Dinv (K + M a0), M = L - A: the chain's
    // a0 enters last.
    const double K = w.p0 + w.cx * (a1 + w.c1) + w.cy * (a2 + w.c2), M = w.cx * w.tx + w.cy * w.ty;
    const double x = -b.sigma * w.Dinv * (K + (w.a + M) * a0);
    qdd[b.q] = x;
    w.a0 = prev0 = -w.Dinv * (K + M * a0);
    w.a1 = prev1 = (a1 + w.c1) + a0 * w.tx;
    w.a2 = prev2 = (a2 + w.c2) + a0 * w.ty;
  }
}

}  // namespace

void aba_planar_pins(const SpatialTree& tree, const Eigen::Ref<const Eigen::VectorXd>& q,
                     const Eigen::Ref<const Eigen::VectorXd>& qd, TreeWorkspace& ws, Eigen::Ref<Eigen::VectorXd> qdd,
                     const BodyForces* f_ext) {
  run_pin_path<pins_body>(tree, q, qd, ws, qdd, f_ext);
}

void aba(const SpatialTree& tree, const Eigen::Ref<const Eigen::VectorXd>& q, const Eigen::Ref<const Eigen::VectorXd>& qd,
         TreeWorkspace& ws, Eigen::Ref<Eigen::VectorXd> qdd, const BodyForces* f_ext) {
  if (tree.pins) aba_planar_pins(tree, q, qd, ws, qdd, f_ext);
  else if (tree.planar) aba_planar(tree, q, qd, ws, qdd, f_ext);
  else aba_spatial_body(tree, q, qd, ws, qdd, f_ext);
}

}  // namespace mbs::recursive
