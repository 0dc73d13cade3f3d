// The forward pass of the planar pin path (tree.pins), shared by ABA and CRBA: each body's rotation,
// the joint offset t = (-r_2, r_1) to its parent (r = R_parent p), velocity v, velocity-product
// acceleration c, its own inertia turned as [a (R c)^T; R c, m 1] (in a, cx, cy, b00 = b11 = m,
// b01 = 0) and bias force v x* (I v) less f_ext, all on scalars in ws.pins. Every frame is the
// body's joint origin with the plane's axes, so a transform between frames is a translation.
#pragma once

#include <Eigen/Dense>

#include "common/cpu_features.hpp"
#include "common/vector_math.hpp"
#include "recursive/tree_model.hpp"

namespace mbs::recursive {

// A pin path's signature (ABA's and CRBA's): forward dynamics on scalars.
using PinPath = void (*)(const SpatialTree&, const Eigen::Ref<const Eigen::VectorXd>&,
                         const Eigen::Ref<const Eigen::VectorXd>&, TreeWorkspace&, Eigen::Ref<Eigen::VectorXd>,
                         const BodyForces*);

#if defined(MBS_HAVE_CPU_FEATURES)
// Body compiled with FMA and AVX2: the recursions are chains of multiply-adds, each a dependency
// step, and CRBA's LTDL row updates are vector loops four doubles wide (docs/formulations.md).
template <PinPath Body>
__attribute__((target("avx2,fma"))) void pin_path_fma(const SpatialTree& tree, const Eigen::Ref<const Eigen::VectorXd>& q,
                                                      const Eigen::Ref<const Eigen::VectorXd>& qd, TreeWorkspace& ws,
                                                      Eigen::Ref<Eigen::VectorXd> qdd, const BodyForces* f_ext) {
  Body(tree, q, qd, ws, qdd, f_ext);
}
#endif

// Body compiled twice, taken with FMA and AVX2 where glibc reports both active after its tunables
// (scripts/perf-check masks them, so its instruction counts take the plain code on every machine).
template <PinPath Body>
void run_pin_path(const SpatialTree& tree, const Eigen::Ref<const Eigen::VectorXd>& q,
                  const Eigen::Ref<const Eigen::VectorXd>& qd, TreeWorkspace& ws, Eigen::Ref<Eigen::VectorXd> qdd,
                  const BodyForces* f_ext) {
#if defined(MBS_HAVE_CPU_FEATURES)
  if (fma_active() && avx2_active()) return pin_path_fma<Body>(tree, q, qd, ws, qdd, f_ext);
#endif
  Body(tree, q, qd, ws, qdd, f_ext);
}

// The pin path's arrays: n bodies, their records B and workspace W.
struct PinArrays {
  int n;
  const PinBody* B;
  TreeWorkspace::Pin* W;
};

// Inlined into each caller (the pin paths are compiled with and without FMA); returns the arrays.
inline __attribute__((always_inline)) PinArrays pins_forward(const SpatialTree& tree, const Eigen::Ref<const Eigen::VectorXd>& q,
                                                       const Eigen::Ref<const Eigen::VectorXd>& qd, TreeWorkspace& ws,
                                                       const BodyForces* f_ext) {
  const int n = static_cast<int>(tree.pin_bodies.size());
  const PinBody* B = tree.pin_bodies.data();
  TreeWorkspace::Pin* W = ws.pins.data();
  // Each forward loop takes the parent's values from registers where the parent is the body just
  // before (a chain), as ABA's backward pass does.
  double prev_phi = 0.0;
  for (int i = 0; i < n; ++i) {
    const int p = B[i].parent;
    W[i].phi = prev_phi = (p < 0 ? 0.0 : p == i - 1 ? prev_phi : W[p].phi) + B[i].sigma * q[B[i].q];
  }
  sin_cos_all(
      n, [W](int i) -> double& { return W[i].phi; }, [W](int i) -> double& { return W[i].si; },
      [W](int i) -> double& { return W[i].co; });
  double pv0 = 0.0, pv1 = 0.0, pv2 = 0.0;  // the previous body's velocity
  for (int i = 0; i < n; ++i) {
    const PinBody& b = B[i];
    TreeWorkspace::Pin& w = W[i];
    double v0 = 0.0, v1 = 0.0, v2 = 0.0;
    if (b.parent < 0) {
      w.tx = -b.py;
      w.ty = b.px;
    } else {
      const TreeWorkspace::Pin& wp = W[b.parent];
      w.tx = -(wp.si * b.px + wp.co * b.py);
      w.ty = wp.co * b.px - wp.si * b.py;
      const bool chain = b.parent == i - 1;
      v0 = chain ? pv0 : wp.v0;
      v1 = (chain ? pv1 : wp.v1) + v0 * w.tx;
      v2 = (chain ? pv2 : wp.v2) + v0 * w.ty;
    }
    const double wJ = b.sigma * qd[b.q];
    v0 += wJ;
    w.c1 = v2 * wJ;
    w.c2 = -v1 * wJ;
    w.v0 = pv0 = v0;
    w.v1 = pv1 = v1;
    w.v2 = pv2 = v2;
    const double cx = w.co * b.cx - w.si * b.cy, cy = w.si * b.cx + w.co * b.cy;
    w.a = b.a;
    w.cx = cx;
    w.cy = cy;
    w.b00 = b.m;
    w.b01 = 0.0;
    w.b11 = b.m;
    const double f1 = cx * v0 + b.m * v1, f2 = cy * v0 + b.m * v2;
    w.p0 = v1 * f2 - v2 * f1;
    w.p1 = -v0 * f2;
    w.p2 = v0 * f1;
  }
  // External forces, in aba_planar's frames (at the joint, plane axes); a loop of its own, as there.
  if (f_ext != nullptr)
    for (int i = 0; i < n; ++i) {
      const Vec3& f = f_ext->planar[i];
      W[i].p0 -= f[0];
      W[i].p1 -= f[1];
      W[i].p2 -= f[2];
    }
  return {n, B, W};
}

}  // namespace mbs::recursive
