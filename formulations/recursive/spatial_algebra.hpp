// Spatial vector algebra for the recursive engine (Featherstone, "Rigid Body Dynamics Algorithms",
// 2008, ch. 2): motion vectors [omega; v], force vectors [n; f], a parent-to-child transform kept as
// (E, r) (X = [E 0; -E rx E]); and the planar algebra on [omega_n; v_e1; v_e2] of the planar paths.
// Header-only: the algorithms call these per body per right-hand side, so each translation unit
// must be able to inline them.
#pragma once

#include <Eigen/Dense>

namespace mbs::recursive {

using Vec3 = Eigen::Vector3d;
using Mat3 = Eigen::Matrix3d;
using Vec6 = Eigen::Matrix<double, 6, 1>;
using Mat6 = Eigen::Matrix<double, 6, 6>;
// Joint-sized blocks: at most 3 DOF per joint, fixed maximum sizes (never allocate).
using MatS = Eigen::Matrix<double, 6, Eigen::Dynamic, 0, 6, 3>;
using VecJ = Eigen::Matrix<double, Eigen::Dynamic, 1, 0, 3, 1>;
using MatJ = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, 0, 3, 3>;
using Vec2 = Eigen::Vector2d;
using MatS3 = Eigen::Matrix<double, 3, Eigen::Dynamic, 0, 3, 3>;  // planar motion subspace


inline Vec3 to3(const Eigen::VectorXd& x) {
  Vec3 y = Vec3::Zero();
  y.head(x.size()) = x;
  return y;
}

inline Mat3 skew(const Vec3& w) {
  Mat3 s;
  s << 0, -w[2], w[1], w[2], 0, -w[0], -w[1], w[0], 0;
  return s;
}

// Spatial inertia about the frame origin of mass m, centroid c, rotational inertia Ic about c.
inline Mat6 spatial_inertia(double m, const Vec3& c, const Mat3& Ic) {
  const Mat3 C = skew(c);
  Mat6 I;
  I.topLeftCorner<3, 3>() = Ic + m * C * C.transpose();
  I.topRightCorner<3, 3>() = m * C;
  I.bottomLeftCorner<3, 3>() = m * C.transpose();
  I.bottomRightCorner<3, 3>() = m * Mat3::Identity();
  return I;
}

// X m for X = (E, r): [E w; E (v - r x w)].
inline Vec6 xmotion(const Mat3& E, const Vec3& r, const Vec6& m) {
  Vec6 out;
  out.head<3>().noalias() = E * m.head<3>();
  out.tail<3>().noalias() = E * (m.tail<3>() - r.cross(m.head<3>()));
  return out;
}
// X^T f (a child force to the parent): [E^T n + r x E^T f; E^T f].
inline Vec6 xforce_t(const Mat3& E, const Vec3& r, const Vec6& f) {
  Vec6 out;
  out.tail<3>().noalias() = E.transpose() * f.tail<3>();
  out.head<3>().noalias() = E.transpose() * f.head<3>();
  out.head<3>() += r.cross(out.tail<3>());
  return out;
}
inline Mat6 xmatrix(const Mat3& E, const Vec3& r) {
  Mat6 X;
  X.topLeftCorner<3, 3>() = E;
  X.topRightCorner<3, 3>().setZero();
  X.bottomLeftCorner<3, 3>().noalias() = -E * skew(r);
  X.bottomRightCorner<3, 3>() = E;
  return X;
}
inline Vec6 crm(const Vec6& v, const Vec6& m) {  // v x m (motion)
  Vec6 out;
  out.head<3>() = v.head<3>().cross(m.head<3>());
  out.tail<3>() = v.head<3>().cross(m.tail<3>()) + v.tail<3>().cross(m.head<3>());
  return out;
}
inline Vec6 crf(const Vec6& v, const Vec6& f) {  // v x* f (force)
  Vec6 out;
  out.head<3>() = v.head<3>().cross(f.head<3>()) + v.tail<3>().cross(f.tail<3>());
  out.tail<3>() = v.head<3>().cross(f.tail<3>());
  return out;
}

// Rotation taking child coordinates into parent coordinates, from the quaternion (w, x, y, z) at q.
inline Mat3 quaternion_rotation(const double* q) {
  Eigen::Quaterniond Q(q[0], q[1], q[2], q[3]);
  Q.normalize();
  return Q.toRotationMatrix();
}

// Planar spatial algebra on [omega_n; v_e1; v_e2] (n = e1 x e2), in frames with the plane's axes:
// the transform from a parent's frame to a child's is a translation by r, kept as t = (-r_2, r_1).
// X m: [w; v - r x w], with r x (w n) = -w t.
inline Vec3 xmotion_t(const Vec2& t, const Vec3& m) { return Vec3(m[0], m[1] + m[0] * t[0], m[2] + m[0] * t[1]); }
// X^T f: [n + (r x f) . n; f].
inline Vec3 xforce_t_t(const Vec2& t, const Vec3& f) { return Vec3(f[0] + t[0] * f[1] + t[1] * f[2], f[1], f[2]); }
inline Vec3 crm2(const Vec3& v, const Vec3& m) {  // v x m (motion): the rotation part is 0 in the plane
  return Vec3(0.0, v[2] * m[0] - v[0] * m[2], v[0] * m[1] - v[1] * m[0]);
}
inline Vec3 crf2(const Vec3& v, const Vec3& f) {  // v x* f (force)
  return Vec3(v[1] * f[2] - v[2] * f[1], -v[0] * f[2], v[0] * f[1]);
}
// X^T Ia X added to out, for X = [1 0; t 1] and the symmetric Ia = [a c^T; c B] given by a, c and
// B's entries: [a + 2 c.t + t^T B t, (c + B t)^T; c + B t, B].
inline void add_xtix_t(const Vec2& t, double a, double cx, double cy, double b00, double b01, double b11, Mat3& out) {
  const double Btx = b00 * t[0] + b01 * t[1], Bty = b01 * t[0] + b11 * t[1];
  const double c0 = cx + Btx, c1 = cy + Bty;
  out(0, 0) += a + 2.0 * (cx * t[0] + cy * t[1]) + t[0] * Btx + t[1] * Bty;
  out(1, 0) += c0;
  out(0, 1) += c0;
  out(2, 0) += c1;
  out(0, 2) += c1;
  out(1, 1) += b00;
  out(2, 2) += b11;
  out(1, 2) += b01;
  out(2, 1) += b01;
}
// D^-1 of a joint's S^T IA S, closed forms: Eigen's inverse of a runtime-size block goes through an LU.
inline void invert_small(const MatJ& D, MatJ& Dinv) {
  const Eigen::Index nv = D.rows();
  if (nv == 1) {
    Dinv.resize(1, 1);
    Dinv(0, 0) = 1.0 / D(0, 0);
  } else if (nv == 2) {
    const double det = D(0, 0) * D(1, 1) - D(0, 1) * D(1, 0);
    Dinv.resize(2, 2);
    Dinv << D(1, 1) / det, -D(0, 1) / det, -D(1, 0) / det, D(0, 0) / det;
  } else if (nv == 3) {
    Dinv = Mat3(D).inverse();
  } else {
    Dinv = D.inverse();
  }
}

}  // namespace mbs::recursive
