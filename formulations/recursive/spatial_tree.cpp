#include "recursive/spatial_tree.hpp"

#include <fmt/format.h>

#include <cmath>

#if defined(__x86_64__) && __has_include(<sys/platform/x86.h>)
#include <sys/platform/x86.h>
#endif

#include "common/vector_math.hpp"

#include "elements/fixed.hpp"
#include "elements/prismatic.hpp"
#include "elements/revolute.hpp"
#include "elements/rod.hpp"
#include "elements/spherical.hpp"

namespace mbs::recursive {

const char* to_string(JointType type) {
  switch (type) {
    case JointType::kRevolute: return "revolute";
    case JointType::kPrismatic: return "prismatic";
    case JointType::kSpherical: return "spherical";
    case JointType::kTranslation: return "translation";
    case JointType::kFixed: return "fixed";
  }
  return "?";
}

namespace {

Vec3 to3(const Eigen::VectorXd& x) {
  Vec3 y = Vec3::Zero();
  y.head(x.size()) = x;
  return y;
}

Mat3 skew(const Vec3& w) {
  Mat3 s;
  s << 0, -w[2], w[1], w[2], 0, -w[0], -w[1], w[0], 0;
  return s;
}

// Spatial inertia about the frame origin of mass m, centroid c, rotational inertia Ic about c.
Mat6 spatial_inertia(double m, const Vec3& c, const Mat3& Ic) {
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

// Sets tree.planar when every joint's motion subspace lies in the planar motions about one normal n
// (the first revolute axis, or z in a planar model without one), and the bodies' planar descriptions.
void detect_planar(SpatialTree& tree) {
  tree.planar = false;
  tree.planar_bodies.clear();
  Vec3 n = Vec3::Zero();
  for (const TreeBody& b : tree.bodies)
    if (b.type == JointType::kRevolute) {
      n = b.axis.normalized();
      break;
    }
  if (n.isZero()) {
    if (tree.dim != 2) return;
    n = Vec3::UnitZ();
  }
  // Axes are unit vectors: parallel to round-off, or not planar.
  constexpr double kTol = 1e-12;
  for (const TreeBody& b : tree.bodies)
    for (int k = 0; k < b.nv; ++k) {
      const Vec3 w = b.S.col(k).head<3>(), v = b.S.col(k).tail<3>();
      if ((w - w.dot(n) * n).norm() > kTol || std::abs(v.dot(n)) > kTol) return;
    }
  const Vec3 x = Vec3::UnitX();
  const Vec3 e1 = std::abs(x.dot(n)) < 0.5 ? Vec3((x - x.dot(n) * n).normalized()) : Vec3(n.unitOrthogonal());
  tree.normal = n;
  tree.e1 = e1;
  tree.e2 = n.cross(e1);
  Eigen::Matrix<double, 6, 3> P = Eigen::Matrix<double, 6, 3>::Zero();
  P.col(0).head<3>() = n;
  P.col(1).tail<3>() = tree.e1;
  P.col(2).tail<3>() = tree.e2;
  tree.planar_bodies.resize(tree.bodies.size());
  for (size_t i = 0; i < tree.bodies.size(); ++i) {
    const TreeBody& b = tree.bodies[i];
    PlanarBody& pb = tree.planar_bodies[i];
    pb.I = P.transpose() * b.I * P;
    pb.I = (0.5 * (pb.I + pb.I.transpose())).eval();
    pb.S = P.transpose() * b.S;
    pb.p = Vec2(b.p.dot(tree.e1), b.p.dot(tree.e2));
    pb.type = b.type;
    pb.parent = b.parent;
    pb.qi = b.qi;
    pb.vi = b.vi;
    pb.nv = b.nv;
  }
  tree.planar = true;
  tree.pins = true;
  for (const PlanarBody& pb : tree.planar_bodies) {
    const double m = pb.I(1, 1);  // m 1 up to the round-off of the plane's axes
    tree.pins = tree.pins && pb.type == JointType::kRevolute && std::abs(pb.I(2, 2) - m) <= 1e-14 * m &&
                std::abs(pb.I(1, 2)) <= 1e-14 * m;
  }
  if (!tree.pins) return;
  tree.pin_bodies.resize(tree.bodies.size());
  for (size_t i = 0; i < tree.bodies.size(); ++i) {
    const PlanarBody& pb = tree.planar_bodies[i];
    PinBody& k = tree.pin_bodies[i];
    k.parent = pb.parent;
    k.q = pb.qi;
    k.sigma = pb.S(0, 0);
    k.px = pb.p[0];
    k.py = pb.p[1];
    k.a = pb.I(0, 0);
    k.cx = pb.I(1, 0);
    k.cy = pb.I(2, 0);
    k.m = pb.I(1, 1);
  }
}

}  // namespace

std::string build_spatial_tree(const Model& model, SpatialTree& tree) {
  tree = SpatialTree{};
  tree.dim = model.dim;
  tree.gravity = to3(model.gravity);
  const int np = static_cast<int>(model.points.size()), nb = static_cast<int>(model.bodies.size());
  const int nn = np + nb;
  auto node_of = [&](const Anchor& a) { return a.body >= 0 ? np + a.body : a.point; };  // kGround = -1
  auto node_name = [&](int n) { return n < 0 ? std::string("ground") : n < np ? model.points[n].name : model.bodies[n - np].name; };
  // World (local-frame) position at t = 0 of an anchor.
  auto anchor_pos = [&](const Anchor& a) -> Vec3 {
    if (a.is_ground()) return to3(a.at);
    if (a.body >= 0) {
      const RigidBody& b = model.bodies[a.body];
      return to3(b.r0 + b.R0 * a.at);
    }
    return to3(model.points[a.point].r0);
  };

  struct Edge {
    const Element* e = nullptr;
    const Anchor *a = nullptr, *b = nullptr;
    bool rod = false;
    double length = 0.0;
    bool hinge = false;          // a pair of spherical joints (below): a revolute joint about `axis`
    Vec3 axis = Vec3::Zero();
    std::string name;            // the joint's name where it is not e->name (a hinge's pair)
  };
  std::vector<Edge> edges;
  auto add_edge = [&edges](const Element* e, const Anchor& a, const Anchor& b, bool rod, double length) {
    Edge ed;
    ed.e = e;
    ed.a = &a;
    ed.b = &b;
    ed.rod = rod;
    ed.length = length;
    edges.push_back(ed);
  };
  for (const auto& ep : model.elements) {
    const Element* e = ep.get();
    if (const auto* j = dynamic_cast<const Rod*>(e)) add_edge(e, j->a, j->b, true, j->length);
    else if (const auto* j = dynamic_cast<const SphericalJoint*>(e)) add_edge(e, j->a, j->b, false, 0.0);
    else if (const auto* j = dynamic_cast<const RevoluteJoint*>(e)) add_edge(e, j->a, j->b, false, 0.0);
    else if (const auto* j = dynamic_cast<const PrismaticJoint*>(e)) add_edge(e, j->a, j->b, false, 0.0);
    else if (const auto* j = dynamic_cast<const FixedJoint*>(e)) add_edge(e, j->a, j->b, false, 0.0);
    else if (e->role() == ElementRole::kJoint)
      return fmt::format("joint {} ({}) has no tree-joint description", e->name, e->kind());
    else if (e->role() == ElementRole::kContact) continue;  // events on the tree's points (tree_contacts.hpp)
    else if (e->role() == ElementRole::kForce) continue;  // external forces on the tree (TreeForces), no edge
    else return fmt::format("element {} ({}): {} elements are not yet handled by the recursive engine", e->name, e->kind(),
                            to_string(e->role()));
  }
  const int ne = static_cast<int>(edges.size());
  std::vector<char> used(ne, 0);
  // Two spherical joints between the same rigid body and its neighbour (a body or ground), at
  // distinct points, leave it one rotation, about the line through them: a hinge with redundant
  // constraints (a bar on two pins). The pair is one revolute joint in the tree.
  auto spherical = [&](int k) { return dynamic_cast<const SphericalJoint*>(edges[k].e) != nullptr && !edges[k].hinge; };
  for (int i = 0; i < ne; ++i) {
    if (used[i] || !spherical(i)) continue;
    for (int k = i + 1; k < ne; ++k) {
      if (used[k] || !spherical(k)) continue;
      const int ai = node_of(*edges[i].a), bi = node_of(*edges[i].b), ak = node_of(*edges[k].a), bk = node_of(*edges[k].b);
      const bool same = (ai == ak && bi == bk) || (ai == bk && bi == ak);
      if (!same || std::max(ai, bi) < np) continue;  // between a rigid body and its neighbour only
      const Vec3 d = anchor_pos(*edges[k].a) - anchor_pos(*edges[i].a);
      if (d.norm() <= 1e-9 * std::max(1.0, anchor_pos(*edges[i].a).norm())) continue;
      edges[i].hinge = true;
      edges[i].axis = d.normalized();
      edges[i].name = edges[i].e->name + "+" + edges[k].e->name;
      used[k] = 1;
      break;
    }
  }
  std::vector<int> tree_index(nn, -1);  // node -> tree body
  std::vector<Vec3> w_world(nn, Vec3::Zero()), v_origin(nn, Vec3::Zero()), origin(nn, Vec3::Zero());
  auto placed = [&](int n) { return n < 0 || tree_index[n] >= 0; };
  auto vel_at = [&](int n, const Vec3& x) -> Vec3 {  // world velocity at t = 0 of the point x moving with node n
    if (n < 0) return Vec3::Zero();
    return v_origin[n] + w_world[n].cross(x - origin[n]);
  };
  auto omega_of = [&](int n) -> Vec3 { return n < 0 ? Vec3::Zero() : w_world[n]; };
  const Vec3 ez = Vec3::UnitZ();
  std::vector<double> q0, v0;
  std::vector<int> depth;

  // The joint's motion subspace and initial coordinates (zero, identity quaternion; velocities
  // qd_scalar for 1 DOF, qd_vec for more), the body's indices; then the body joins the tree.
  auto commit = [&](TreeBody& tb, int node, double qd_scalar, const Vec3& qd_vec) {
    switch (tb.type) {
      case JointType::kRevolute:  // a rotation about the axis, or (prismatic) a translation along it
      case JointType::kPrismatic:
        tb.nq = tb.nv = 1;
        tb.S = MatS::Zero(6, 1);
        tb.S.col(0).segment<3>(tb.type == JointType::kRevolute ? 0 : 3) = tb.axis;
        q0.push_back(0.0);
        v0.push_back(qd_scalar);
        break;
      case JointType::kSpherical:
        tb.nq = 4;
        q0.insert(q0.end(), {1.0, 0.0, 0.0, 0.0});
        tree.has_quaternions = true;
        if (tb.rod) {  // omega_rel = e1 w1 + e2 w2, e1, e2 normal to the rod (child coordinates)
          const Vec3 u = tb.com.normalized();
          const Vec3 e1 = u.unitOrthogonal(), e2 = u.cross(e1);
          tb.nv = 2;
          tb.S = MatS::Zero(6, 2);
          tb.S.col(0).head<3>() = e1;
          tb.S.col(1).head<3>() = e2;
          v0.insert(v0.end(), {e1.dot(qd_vec), e2.dot(qd_vec)});
        } else {
          tb.nv = 3;
          tb.S = MatS::Zero(6, 3);
          tb.S.topRows<3>().setIdentity();
          v0.insert(v0.end(), {qd_vec[0], qd_vec[1], qd_vec[2]});
        }
        break;
      case JointType::kTranslation:  // along the first tb.nv axes; qd_vec the velocity
        tb.nq = tb.nv = model.dim;
        tb.S = MatS::Zero(6, tb.nv);
        for (int d = 0; d < tb.nv; ++d) {
          tb.S(3 + d, d) = 1.0;
          q0.push_back(0.0);
          v0.push_back(qd_vec[d]);
        }
        break;
      default:
        tb.nq = tb.nv = 0;
        tb.S = MatS::Zero(6, 0);
        break;
    }
    tb.qi = tree.nq;
    tb.vi = tree.nv;
    tree.nq += tb.nq;
    tree.nv += tb.nv;
    if (node >= 0) tree_index[node] = static_cast<int>(tree.bodies.size());
    depth.push_back(tb.parent < 0 ? 1 : depth[tb.parent] + 1);
    tree.bodies.push_back(std::move(tb));
  };

  auto add_body = [&](int child, int parent_node, const Edge& ed, const Anchor& pa, const Anchor& ca) -> std::string {
    TreeBody tb;
    tb.name = node_name(child);
    tb.joint = ed.name.empty() ? ed.e->name : ed.name;
    tb.parent = parent_node < 0 ? -1 : tree_index[parent_node];
    const Vec3 parent_origin = parent_node < 0 ? Vec3::Zero() : origin[parent_node];
    const bool planar = model.dim == 2;
    Vec3 o;  // the child frame's origin (world, t = 0)
    double qd_scalar = 0.0;
    Vec3 qd_vec = Vec3::Zero();
    if (ed.rod) {
      if (child >= np)
        return fmt::format("rod {} ends on rigid body {}: rods join point masses in the recursive engine", ed.e->name, tb.name);
      const PointMass& pm = model.points[child];
      o = anchor_pos(pa);
      const Vec3 d = to3(pm.r0) - o, dv = to3(pm.v0) - vel_at(parent_node, o);
      const Vec3 w_abs = d.cross(dv) / d.squaredNorm();
      tb.point = child;
      tb.com = d;
      Mat3 Ic = Mat3::Zero();
      if (planar) {
        tb.type = JointType::kRevolute;
        tb.axis = ez;
        qd_scalar = ez.dot(w_abs - omega_of(parent_node));
      } else {
        tb.type = JointType::kSpherical;
        tb.rod = true;  // 2 DOF: the relative angular velocity normal to the rod
        qd_vec = w_abs - omega_of(parent_node);
        qd_vec -= qd_vec.dot(d) / d.squaredNorm() * d;
      }
      tb.mass = pm.mass;
      tb.I = spatial_inertia(pm.mass, d, Ic);
      // The child frame's angular velocity: the parent's plus the joint's (in space this keeps the
      // spin the parent's rotation gives the frame; the point's velocity is the same).
      w_world[child] = planar ? w_abs : Vec3(omega_of(parent_node) + qd_vec);
      v_origin[child] = vel_at(parent_node, o);
    } else {
      if (child < np)
        return fmt::format("joint {} ({}) holds point mass {}: point masses hang from rods in the recursive engine",
                           ed.e->name, ed.e->kind(), tb.name);
      const RigidBody& rb = model.bodies[child - np];
      o = anchor_pos(ca);
      tb.body = child - np;
      Mat3 R0 = Mat3::Identity();
      R0.topLeftCorner(model.dim, model.dim) = rb.R0;
      tb.axes = R0;
      tb.com = to3(rb.r0) - o;
      const Mat3 Ic = R0 * rb.principal_inertia().asDiagonal() * R0.transpose();
      tb.I = spatial_inertia(rb.mass, tb.com, Ic);
      w_world[child] = rb.omega0;
      v_origin[child] = to3(rb.v0) + rb.omega0.cross(o - to3(rb.r0));
      const Vec3 w_rel = rb.omega0 - omega_of(parent_node);
      if (ed.hinge) {
        tb.type = JointType::kRevolute;
        tb.axis = planar ? ez : ed.axis;
        qd_scalar = tb.axis.dot(w_rel);
      } else if (const auto* rj = dynamic_cast<const RevoluteJoint*>(ed.e)) {
        tb.type = JointType::kRevolute;
        tb.axis = planar ? ez : Vec3(to3(rj->axis).normalized());
        qd_scalar = tb.axis.dot(w_rel);
      } else if (dynamic_cast<const SphericalJoint*>(ed.e)) {
        if (planar) {
          tb.type = JointType::kRevolute;
          tb.axis = ez;
          qd_scalar = ez.dot(w_rel);
        } else {
          tb.type = JointType::kSpherical;
          qd_vec = w_rel;
        }
      } else if (const auto* pj = dynamic_cast<const PrismaticJoint*>(ed.e)) {
        tb.type = JointType::kPrismatic;
        tb.axis = to3(pj->axis).normalized();
        qd_scalar = tb.axis.dot(v_origin[child] - vel_at(parent_node, o));
      } else {
        tb.type = JointType::kFixed;
      }
    }
    origin[child] = o;
    tb.p = o - parent_origin;
    commit(tb, child, qd_scalar, qd_vec);
    return "";
  };

  // Breadth-first over the joint graph from a root node (ground, or a free body below).
  auto grow = [&](int root) -> std::string {
    std::vector<int> frontier{root};
    for (size_t f = 0; f < frontier.size(); ++f) {
      const int n = frontier[f];
      for (int k = 0; k < ne; ++k) {
        if (used[k]) continue;
        const Edge& ed = edges[k];
        const int na = node_of(*ed.a), nb2 = node_of(*ed.b);
        if (na != n && nb2 != n) continue;
        const bool from_a = na == n;
        const int child = from_a ? nb2 : na;
        if (child == n) return fmt::format("joint {} joins {} to itself", ed.e->name, node_name(n));
        used[k] = 1;
        if (placed(child))
          return fmt::format("closed loop: joint {} joins {} and {}, already joined through the tree (the recursive engine needs a tree)",
                             ed.e->name, node_name(n), node_name(child));
        if (std::string why = add_body(child, n, ed, from_a ? *ed.a : *ed.b, from_a ? *ed.b : *ed.a); !why.empty()) return why;
        frontier.push_back(child);
      }
    }
    return "";
  };
  if (std::string why = grow(kGround); !why.empty()) return why;
  // What ground does not reach floats. Each such part of the joint graph hangs from a free root: a
  // rigid body where it has one (rigid bodies first: a point mass holds only rods to other points),
  // else a point mass. A free point is a translation (dim DOF, its displacement in world axes). A
  // free rigid body is a translation of its centroid (world axes) carrying the body on a spherical
  // joint at the centroid (planar: a revolute about the normal): configuration the centroid's
  // displacement and the unit quaternion of the body's orientation (3 + 4), velocity the
  // centroid's in world axes and the angular velocity in body axes (3 + 3; planar x, y, angle).
  // Why this 6-DOF free joint rather than the body's spatial velocity in body coordinates: with the
  // linear velocity in world axes at the centroid, the centroid's equation is r'' = g + F / m,
  // linear, which every Runge-Kutta method of order >= 2 integrates exactly (a torque-free body's
  // centroid stays on its parabola to round-off), and the pair reuses the translation and spherical
  // joints' paths: joint blocks stay at most 3 DOF, so the 1-DOF paths keep their storage. The
  // translation's tree body is massless and no model body (point = body = -1).
  for (int pass = 0; pass < 2; ++pass)
    for (int n = pass == 0 ? np : 0; n < (pass == 0 ? nn : np); ++n) {
      if (placed(n)) continue;
      TreeBody tr;
      tr.name = node_name(n);
      tr.type = JointType::kTranslation;
      Vec3 vc = Vec3::Zero();  // the centroid's (point's) velocity
      if (n < np) {
        const PointMass& pm = model.points[n];
        tr.point = n;
        tr.mass = pm.mass;
        tr.I = spatial_inertia(pm.mass, Vec3::Zero(), Mat3::Zero());
        tr.p = to3(pm.r0);
        vc = to3(pm.v0);
      } else {
        const RigidBody& rb = model.bodies[n - np];
        tr.p = to3(rb.r0);
        vc = to3(rb.v0);
      }
      origin[n] = tr.p;
      v_origin[n] = vc;
      commit(tr, n < np ? n : -1, 0.0, vc);
      if (n >= np) {  // the body on its rotation joint at the centroid
        const RigidBody& rb = model.bodies[n - np];
        TreeBody tb;
        tb.name = rb.name;
        tb.parent = static_cast<int>(tree.bodies.size()) - 1;
        tb.body = n - np;
        Mat3 R0 = Mat3::Identity();
        R0.topLeftCorner(model.dim, model.dim) = rb.R0;
        tb.axes = R0;
        tb.mass = rb.mass;
        tb.I = spatial_inertia(rb.mass, Vec3::Zero(), R0 * rb.principal_inertia().asDiagonal() * R0.transpose());
        tb.type = model.dim == 2 ? JointType::kRevolute : JointType::kSpherical;
        tb.axis = ez;
        w_world[n] = rb.omega0;
        commit(tb, n, rb.omega0[2], rb.omega0);  // body axes = world axes at t = 0
      }
      if (std::string why = grow(n); !why.empty()) return why;
    }
  if (tree.nv == 0) return "no degree of freedom";
  tree.q0 = Eigen::Map<Eigen::VectorXd>(q0.data(), static_cast<Eigen::Index>(q0.size()));
  tree.v0 = Eigen::Map<Eigen::VectorXd>(v0.data(), static_cast<Eigen::Index>(v0.size()));
  for (int d : depth) tree.depth = std::max(tree.depth, d);
  detect_planar(tree);
  // lambda over DOFs: within a joint the previous DOF; the first DOF of a joint, the last DOF of the
  // nearest ancestor that has DOFs.
  tree.dof_parent.assign(tree.nv, -1);
  for (const TreeBody& b : tree.bodies) {
    int last = -1;
    for (int p = b.parent; p >= 0; p = tree.bodies[p].parent)
      if (tree.bodies[p].nv > 0) {
        last = tree.bodies[p].vi + tree.bodies[p].nv - 1;
        break;
      }
    for (int k = 0; k < b.nv; ++k) tree.dof_parent[b.vi + k] = k == 0 ? last : b.vi + k - 1;
  }
  return "";
}

TreeWorkspace::TreeWorkspace(const SpatialTree& tree, bool with_mass_matrix) {
  const size_t n = tree.bodies.size();
  E.resize(n);
  r.resize(n);
  v.resize(n);
  c.resize(n);
  a.resize(n);
  pA.resize(n);
  IA.resize(n);
  U.resize(n);
  Dinv.resize(n);
  u.resize(n);
  Rw.resize(n);
  ow.resize(n);
  for (size_t i = 0; i < n; ++i) {
    const int nv = tree.bodies[i].nv;
    U[i] = MatS::Zero(6, nv);
    Dinv[i] = MatJ::Zero(nv, nv);
    u[i] = VecJ::Zero(nv);
  }
  if (with_mass_matrix) {
    H = Eigen::MatrixXd::Zero(tree.nv, tree.nv);
    b = Eigen::VectorXd::Zero(tree.nv);
  }
  if (tree.pins) pins.resize(n);
  if (tree.planar) {
    planar.resize(n);
    for (size_t i = 0; i < n; ++i) {
      Planar& p = planar[i];
      p.v.setZero();
      p.c.setZero();
      p.a.setZero();
      p.pA.setZero();
      p.IA.setZero();
      p.U = MatS3::Zero(3, tree.bodies[i].nv);
      p.S = MatS3::Zero(3, tree.bodies[i].nv);
      p.t.setZero();
    }
  }
}

void kinematics(const SpatialTree& tree, const Eigen::Ref<const Eigen::VectorXd>& q,
                const Eigen::Ref<const Eigen::VectorXd>& qd, TreeWorkspace& ws) {
  const int n = static_cast<int>(tree.bodies.size());
  for (int i = 0; i < n; ++i) {
    const TreeBody& b = tree.bodies[i];
    Mat3& E = ws.E[i];
    Vec3& r = ws.r[i];
    Vec6 vJ = Vec6::Zero();
    switch (b.type) {
      case JointType::kRevolute: {
        const double th = q[b.qi], co = std::cos(th), si = std::sin(th);
        const Mat3 K = skew(b.axis);
        // Rodrigues: R = I + sin K + (1 - cos) K^2 (child into parent); E = R^T.
        E = Mat3::Identity() - si * K + (1.0 - co) * (K * K);
        r = b.p;
        vJ.head<3>() = b.axis * qd[b.vi];
        break;
      }
      case JointType::kPrismatic:
        E.setIdentity();
        r = b.p + q[b.qi] * b.axis;
        vJ.tail<3>() = b.axis * qd[b.vi];
        break;
      case JointType::kSpherical:
        E = quaternion_rotation(q.data() + b.qi).transpose();
        r = b.p;
        vJ.head<3>().noalias() = b.S.topRows<3>() * qd.segment(b.vi, b.nv);
        break;
      case JointType::kTranslation:
        E.setIdentity();
        r = b.p;
        for (int d = 0; d < b.nv; ++d) {
          r[d] += q[b.qi + d];
          vJ[3 + d] = qd[b.vi + d];
        }
        break;
      case JointType::kFixed:
        E.setIdentity();
        r = b.p;
        break;
    }
    if (b.parent < 0) {
      ws.v[i] = vJ;
      ws.c[i].setZero();  // v x vJ = vJ x vJ = 0
    } else {
      ws.v[i] = xmotion(E, r, ws.v[b.parent]) + vJ;
      ws.c[i] = crm(ws.v[i], vJ);
    }
  }
}

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
    // amplifies; without this, on a spatial chain of point masses ABA and CRBA parted by 2e-4 at
    // N = 20 and 2e2 at N = 30 (the error grew ~x5 a link), with it by 2e-10 at N = 30.
    Ia = (0.5 * (Ia + Ia.transpose())).eval();
    const Mat6 X = xmatrix(ws.E[i], ws.r[i]);
    const Mat6 IaX = Ia * X;
    ws.IA[b.parent].noalias() += X.transpose() * IaX;
    ws.pA[b.parent] += xforce_t(ws.E[i], ws.r[i], pa);
  }
  Vec6 a0;
  a0.head<3>().setZero();
  a0.tail<3>() = -tree.gravity;
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
// The pin path's body; compiled twice below, with and without fused multiply-adds.
inline __attribute__((always_inline)) void pins_body(const SpatialTree& tree, const Eigen::Ref<const Eigen::VectorXd>& q,
                                                    const Eigen::Ref<const Eigen::VectorXd>& qd, TreeWorkspace& ws,
                                                    Eigen::Ref<Eigen::VectorXd> qdd, const BodyForces* f_ext) {
  // aba_planar's pin branches on plain scalars: one compact record per body, no Eigen object built
  // per body, the articulated inertia's six distinct entries, each body's own inertia turned as
  // [a (R c)^T; R c, m 1] (PinBody).
  const int n = static_cast<int>(tree.pin_bodies.size());
  const PinBody* B = tree.pin_bodies.data();
  TreeWorkspace::Pin* W = ws.pins.data();
  // Each forward loop takes the parent's values from registers where the parent is the body just
  // before (a chain), as the backward pass below does.
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

void pins_plain(const SpatialTree& tree, const Eigen::Ref<const Eigen::VectorXd>& q,
                const Eigen::Ref<const Eigen::VectorXd>& qd, TreeWorkspace& ws, Eigen::Ref<Eigen::VectorXd> qdd,
                const BodyForces* f_ext) {
  pins_body(tree, q, qd, ws, qdd, f_ext);
}

#if defined(__x86_64__) && __has_include(<sys/platform/x86.h>)
// With FMA: the recursions are chains of multiply-adds, each a dependency step (docs/formulations.md).
// Taken where glibc reports FMA active, after its tunables: scripts/perf-check masks FMA there, so
// its instruction counts take pins_plain on every machine.
__attribute__((target("fma"))) void pins_fma(const SpatialTree& tree, const Eigen::Ref<const Eigen::VectorXd>& q,
                                             const Eigen::Ref<const Eigen::VectorXd>& qd, TreeWorkspace& ws,
                                             Eigen::Ref<Eigen::VectorXd> qdd, const BodyForces* f_ext) {
  pins_body(tree, q, qd, ws, qdd, f_ext);
}

bool fma_active() {
  static const bool active = CPU_FEATURE_ACTIVE(FMA);
  return active;
}
#define MBS_PINS_FMA 1
#endif
}  // namespace

void aba_planar_pins(const SpatialTree& tree, const Eigen::Ref<const Eigen::VectorXd>& q,
                     const Eigen::Ref<const Eigen::VectorXd>& qd, TreeWorkspace& ws, Eigen::Ref<Eigen::VectorXd> qdd,
                     const BodyForces* f_ext) {
#ifdef MBS_PINS_FMA
  if (fma_active()) return pins_fma(tree, q, qd, ws, qdd, f_ext);
#endif
  pins_plain(tree, q, qd, ws, qdd, f_ext);
}

void aba(const SpatialTree& tree, const Eigen::Ref<const Eigen::VectorXd>& q, const Eigen::Ref<const Eigen::VectorXd>& qd,
         TreeWorkspace& ws, Eigen::Ref<Eigen::VectorXd> qdd, const BodyForces* f_ext) {
  if (tree.pins) aba_planar_pins(tree, q, qd, ws, qdd, f_ext);
  else if (tree.planar) aba_planar(tree, q, qd, ws, qdd, f_ext);
  else aba_spatial_body(tree, q, qd, ws, qdd, f_ext);
}

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
  Vec6 a0;
  a0.head<3>().setZero();
  a0.tail<3>() = -tree.gravity;
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

void configuration_rate(const SpatialTree& tree, const Eigen::Ref<const Eigen::VectorXd>& q,
                        const Eigen::Ref<const Eigen::VectorXd>& qd, Eigen::Ref<Eigen::VectorXd> qdot) {
  if (!tree.has_quaternions) {
    qdot = qd;  // nq == nv, one coordinate per velocity
    return;
  }
  for (const TreeBody& b : tree.bodies) {
    if (b.type != JointType::kSpherical) {
      qdot.segment(b.qi, b.nq) = qd.segment(b.vi, b.nv);
      continue;
    }
    const double w = q[b.qi], x = q[b.qi + 1], y = q[b.qi + 2], z = q[b.qi + 3];
    Vec3 om;
    om.noalias() = b.S.topRows<3>() * qd.segment(b.vi, b.nv);
    const double ox = om[0], oy = om[1], oz = om[2];
    qdot[b.qi] = -0.5 * (x * ox + y * oy + z * oz);
    qdot[b.qi + 1] = 0.5 * (w * ox + y * oz - z * oy);
    qdot[b.qi + 2] = 0.5 * (w * oy + z * ox - x * oz);
    qdot[b.qi + 3] = 0.5 * (w * oz + x * oy - y * ox);
  }
}

void normalize(const SpatialTree& tree, Eigen::Ref<Eigen::VectorXd> q) {
  if (!tree.has_quaternions) return;
  for (const TreeBody& b : tree.bodies)
    if (b.type == JointType::kSpherical) q.segment<4>(b.qi).normalize();
}

void world_frames(const SpatialTree& tree, TreeWorkspace& ws) {
  const int n = static_cast<int>(tree.bodies.size());
  for (int i = 0; i < n; ++i) {
    const TreeBody& b = tree.bodies[i];
    if (b.parent < 0) {
      ws.Rw[i] = ws.E[i].transpose();
      ws.ow[i] = ws.r[i];
    } else {
      ws.Rw[i].noalias() = ws.Rw[b.parent] * ws.E[i].transpose();
      ws.ow[i].noalias() = ws.ow[b.parent] + ws.Rw[b.parent] * ws.r[i];
    }
  }
}

void model_state(const SpatialTree& tree, const Model& model, const Eigen::Ref<const Eigen::VectorXd>& q,
                 const Eigen::Ref<const Eigen::VectorXd>& qd, TreeWorkspace& ws, Eigen::Ref<Eigen::VectorXd> qn,
                 Eigen::Ref<Eigen::VectorXd> vn) {
  kinematics(tree, q, qd, ws);
  world_frames(tree, ws);
  const int dim = model.dim;
  const int n = static_cast<int>(tree.bodies.size());
  for (int i = 0; i < n; ++i) {
    const TreeBody& b = tree.bodies[i];
    if (b.point < 0 && b.body < 0) continue;  // a free body's translation: no model body
    const Mat3& R = ws.Rw[i];
    const Vec3 w = ws.v[i].head<3>();
    const Vec3 vo = ws.v[i].tail<3>();
    const Vec3 xc = ws.ow[i] + R * b.com;
    const Vec3 vc = R * (vo + w.cross(b.com));
    const int off = b.point >= 0 ? dim * b.point : model.body_offset(b.body);
    qn.segment(off, dim) = xc.head(dim);
    vn.segment(off, dim) = vc.head(dim);
    if (b.body >= 0) {
      const Vec3 ww = R * w;
      for (int k = 0; k < dim; ++k) {
        const Vec3 uk = R * b.axes.col(k);
        qn.segment(off + dim * (k + 1), dim) = uk.head(dim);
        vn.segment(off + dim * (k + 1), dim) = ww.cross(uk).head(dim);
      }
    }
  }
}

void body_forces(const SpatialTree& tree, const Model& model, const Eigen::Ref<const Eigen::VectorXd>& qn,
                 const Eigen::Ref<const Eigen::VectorXd>& Q, const TreeWorkspace& ws, BodyForces& f_ext) {
  const int dim = model.dim;
  const int n = static_cast<int>(tree.bodies.size());
  for (int i = 0; i < n; ++i) {
    const TreeBody& b = tree.bodies[i];
    if (b.point < 0 && b.body < 0) continue;  // a free body's translation: massless, no model body (f_ext stays 0)
    const int off = b.point >= 0 ? dim * b.point : model.body_offset(b.body);
    Vec3 f = Vec3::Zero(), m = Vec3::Zero();  // world force at the centroid (the point) and moment
    f.head(dim) = Q.segment(off, dim);
    if (b.body >= 0) {
      for (int k = 0; k < dim; ++k) {
        const int o = off + dim * (k + 1);
        if (dim == 3) m += Vec3(qn.segment<3>(o)).cross(Vec3(Q.segment<3>(o)));
        else m[2] += qn[o] * Q[o + 1] - qn[o + 1] * Q[o];
      }
    }
    const Mat3& R = ws.Rw[i];
    Vec6& s = f_ext.spatial[i];
    s.tail<3>().noalias() = R.transpose() * f;
    s.head<3>().noalias() = R.transpose() * m;
    s.head<3>() += b.com.cross(Vec3(s.tail<3>()));  // moved from the centroid to the joint
    if (tree.planar) {
      const Vec3 arm = R * b.com;  // the centroid from the joint, world axes
      f_ext.planar[i] = Vec3(tree.normal.dot(m + arm.cross(f)), tree.e1.dot(f), tree.e2.dot(f));
    }
  }
}

TreeForces::TreeForces(const SpatialTree& tree, const Model& model) : tree_(&tree), model_(&model) {
  for (const auto& e : model.elements)
    if (e->role() == ElementRole::kForce) elements_.push_back(e.get());
  if (elements_.empty()) return;
  qn_ = Eigen::VectorXd::Zero(model.nq());
  vn_ = Eigen::VectorXd::Zero(model.nq());
  Q_ = Eigen::VectorXd::Zero(model.nq());
  f_ext_.spatial.assign(tree.bodies.size(), Vec6::Zero());
  if (tree.planar) f_ext_.planar.assign(tree.bodies.size(), Vec3::Zero());
}

const BodyForces& TreeForces::evaluate(const Eigen::Ref<const Eigen::VectorXd>& q, const Eigen::Ref<const Eigen::VectorXd>& qd,
                                       TreeWorkspace& ws) {
  model_state(*tree_, *model_, q, qd, ws, qn_, vn_);
  Q_.setZero();
  for (const Element* e : elements_) e->add_force(*model_, qn_, vn_, Q_);
  body_forces(*tree_, *model_, qn_, Q_, ws, f_ext_);
  return f_ext_;
}

}  // namespace mbs::recursive
