#include "recursive/tree_model.hpp"

#include "common/joint_graph.hpp"

#include <fmt/format.h>

#include <cmath>


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
  tree.pin_sigma.resize(tree.bodies.size());
  for (size_t i = 0; i < tree.bodies.size(); ++i) {
    const PlanarBody& pb = tree.planar_bodies[i];
    PinBody& k = tree.pin_bodies[i];
    k.parent = pb.parent;
    k.q = pb.qi;
    k.sigma = tree.pin_sigma[i] = pb.S(0, 0);
    k.px = pb.p[0];
    k.py = pb.p[1];
    k.a = pb.I(0, 0);
    k.cx = pb.I(1, 0);
    k.cy = pb.I(2, 0);
    k.m = pb.I(1, 1);
  }
}

// The joint graph (common/joint_graph.hpp): its nodes, edges and hinge pairs.
using Edge = JointEdge;

// The tree, grown from the joint graph's edges one body at a time: the state the steps below share
// (which node is which tree body, each placed node's frame origin and initial velocities).
class TreeBuilder {
 public:
  TreeBuilder(const Model& model, SpatialTree& tree, const std::vector<Edge>& edges, std::vector<char>& used)
      : model_(model), tree_(tree), edges_(edges), used_(used), np_(static_cast<int>(model.points.size())),
        nn_(np_ + static_cast<int>(model.bodies.size())), tree_index_(nn_, -1), w_world_(nn_, Vec3::Zero()),
        v_origin_(nn_, Vec3::Zero()), origin_(nn_, Vec3::Zero()), node_edges_(nn_ + 1) {
    for (int k = 0; k < static_cast<int>(edges_.size()); ++k) {
      const int na = node_of(*edges_[k].joint.a), nb = node_of(*edges_[k].joint.b);
      node_edges_[na + 1].push_back(k);
      if (nb != na) node_edges_[nb + 1].push_back(k);
    }
    // A tree body a node (free roots' translations aside): no regrowth of records of a few hundred bytes.
    tree_.bodies.reserve(static_cast<size_t>(nn_));
    depth_.reserve(static_cast<size_t>(nn_));
  }

  std::string grow(int root);
  std::string grow_floating_parts();
  void finish();

 private:
  std::string add_body(int child, int parent_node, const Edge& ed, const Anchor& pa, const Anchor& ca);
  std::string add_rod_point(TreeBody& tb, int child, int parent_node, const Edge& ed, const Anchor& pa, Vec3& o,
                            double& qd_scalar, Vec3& qd_vec);
  std::string add_rigid_body(TreeBody& tb, int child, int parent_node, const Edge& ed, const Anchor& ca, Vec3& o,
                             double& qd_scalar, Vec3& qd_vec);
  void add_free_root(int n);
  void commit(TreeBody& tb, int node, double qd_scalar, const Vec3& qd_vec);

  int node_of(const Anchor& a) const { return mbs::joint_node(model_, a); }
  std::string node_name(int n) const {
    return n < 0 ? std::string("ground") : n < np_ ? model_.points[n].name : model_.bodies[n - np_].name;
  }
  bool placed(int n) const { return n < 0 || tree_index_[n] >= 0; }
  // World velocity at t = 0 of the point x moving with node n.
  Vec3 vel_at(int n, const Vec3& x) const { return n < 0 ? Vec3::Zero() : Vec3(v_origin_[n] + w_world_[n].cross(x - origin_[n])); }
  Vec3 omega_of(int n) const { return n < 0 ? Vec3::Zero() : w_world_[n]; }

  const Model& model_;
  SpatialTree& tree_;
  const std::vector<Edge>& edges_;
  std::vector<char>& used_;
  const int np_, nn_;                  // point masses; nodes (point masses, then rigid bodies)
  std::vector<int> tree_index_;        // node -> tree body
  std::vector<Vec3> w_world_, v_origin_, origin_;
  std::vector<double> q0_, v0_;
  std::vector<int> depth_;
  // The edges at each node (index node + 1, the ground first), ascending: the growth visits a node's
  // edges without scanning them all, in the order a scan would.
  std::vector<std::vector<int>> node_edges_;
};

// The joint's motion subspace and initial coordinates (zero, identity quaternion; velocities
// qd_scalar for 1 DOF, qd_vec for more), the body's indices; then the body joins the tree.
void TreeBuilder::commit(TreeBody& tb, int node, double qd_scalar, const Vec3& qd_vec) {
  switch (tb.type) {
    case JointType::kRevolute:  // a rotation about the axis, or (prismatic) a translation along it
    case JointType::kPrismatic:
      tb.nq = tb.nv = 1;
      tb.S = MatS::Zero(6, 1);
      tb.S.col(0).segment<3>(tb.type == JointType::kRevolute ? 0 : 3) = tb.axis;
      q0_.push_back(0.0);
      v0_.push_back(qd_scalar);
      break;
    case JointType::kSpherical:
      tb.nq = 4;
      q0_.insert(q0_.end(), {1.0, 0.0, 0.0, 0.0});
      tree_.has_quaternions = true;
      if (tb.rod) {  // omega_rel = e1 w1 + e2 w2, e1, e2 normal to the rod (child coordinates)
        const Vec3 u = tb.com.normalized();
        const Vec3 e1 = u.unitOrthogonal(), e2 = u.cross(e1);
        tb.nv = 2;
        tb.S = MatS::Zero(6, 2);
        tb.S.col(0).head<3>() = e1;
        tb.S.col(1).head<3>() = e2;
        v0_.insert(v0_.end(), {e1.dot(qd_vec), e2.dot(qd_vec)});
      } else {
        tb.nv = 3;
        tb.S = MatS::Zero(6, 3);
        tb.S.topRows<3>().setIdentity();
        v0_.insert(v0_.end(), {qd_vec[0], qd_vec[1], qd_vec[2]});
      }
      break;
    case JointType::kTranslation:  // along the first tb.nv axes; qd_vec the velocity
      tb.nq = tb.nv = model_.dim;
      tb.S = MatS::Zero(6, tb.nv);
      for (int d = 0; d < tb.nv; ++d) {
        tb.S(3 + d, d) = 1.0;
        q0_.push_back(0.0);
        v0_.push_back(qd_vec[d]);
      }
      break;
    default:
      tb.nq = tb.nv = 0;
      tb.S = MatS::Zero(6, 0);
      break;
  }
  tb.qi = tree_.nq;
  tb.vi = tree_.nv;
  tree_.nq += tb.nq;
  tree_.nv += tb.nv;
  if (node >= 0) tree_index_[node] = static_cast<int>(tree_.bodies.size());
  depth_.push_back(tb.parent < 0 ? 1 : depth_[tb.parent] + 1);
  tree_.bodies.push_back(std::move(tb));
}

// A point mass on a rod from its parent's end pa: a pin (planar) or a spherical joint without spin.
std::string TreeBuilder::add_rod_point(TreeBody& tb, int child, int parent_node, const Edge& ed, const Anchor& pa,
                                       Vec3& o, double& qd_scalar, Vec3& qd_vec) {
  if (child >= np_)
    return fmt::format("rod {} ends on rigid body {}: rods join point masses in the recursive engine", ed.e->name, tb.name);
  const bool planar = model_.dim == 2;
  const PointMass& pm = model_.points[child];
  o = initial_anchor_position(model_, pa);
  const Vec3 d = to3(pm.r0) - o, dv = to3(pm.v0) - vel_at(parent_node, o);
  const Vec3 w_abs = d.cross(dv) / d.squaredNorm();
  tb.point = child;
  tb.com = d;
  Mat3 Ic = Mat3::Zero();
  if (planar) {
    tb.type = JointType::kRevolute;
    tb.axis = Vec3::UnitZ();
    qd_scalar = tb.axis.dot(w_abs - omega_of(parent_node));
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
  w_world_[child] = planar ? w_abs : Vec3(omega_of(parent_node) + qd_vec);
  v_origin_[child] = vel_at(parent_node, o);
  return "";
}

// A rigid body on the joint at its end ca, of the joint's own description (or a pair's hinge).
std::string TreeBuilder::add_rigid_body(TreeBody& tb, int child, int parent_node, const Edge& ed, const Anchor& ca,
                                        Vec3& o, double& qd_scalar, Vec3& qd_vec) {
  if (child < np_)
    return fmt::format("joint {} ({}) holds point mass {}: point masses hang from rods in the recursive engine",
                       ed.e->name, ed.e->kind(), tb.name);
  const bool planar = model_.dim == 2;
  const Vec3 ez = Vec3::UnitZ();
  const RigidBody& rb = model_.bodies[child - np_];
  o = initial_anchor_position(model_, ca);
  tb.body = child - np_;
  Mat3 R0 = Mat3::Identity();
  R0.topLeftCorner(model_.dim, model_.dim) = rb.R0;
  tb.axes = R0;
  tb.com = to3(rb.r0) - o;
  const Mat3 Ic = R0 * rb.principal_inertia().asDiagonal() * R0.transpose();
  tb.I = spatial_inertia(rb.mass, tb.com, Ic);
  w_world_[child] = rb.omega0;
  v_origin_[child] = to3(rb.v0) + rb.omega0.cross(o - to3(rb.r0));
  const Vec3 w_rel = rb.omega0 - omega_of(parent_node);
  if (ed.hinge) {
    tb.type = JointType::kRevolute;
    tb.axis = planar ? ez : ed.axis;
    qd_scalar = tb.axis.dot(w_rel);
    return "";
  }
  switch (ed.joint.type) {
    case TreeJointType::kRevolute:
      tb.type = JointType::kRevolute;
      tb.axis = planar ? ez : Vec3(to3(ed.joint.axis).normalized());
      qd_scalar = tb.axis.dot(w_rel);
      break;
    case TreeJointType::kSpherical:
      if (planar) {
        tb.type = JointType::kRevolute;
        tb.axis = ez;
        qd_scalar = ez.dot(w_rel);
      } else {
        tb.type = JointType::kSpherical;
        qd_vec = w_rel;
      }
      break;
    case TreeJointType::kPrismatic:
      tb.type = JointType::kPrismatic;
      tb.axis = to3(ed.joint.axis).normalized();
      qd_scalar = tb.axis.dot(v_origin_[child] - vel_at(parent_node, o));
      break;
    default:
      tb.type = JointType::kFixed;
      break;
  }
  return "";
}

// Node `child` joins the tree below `parent_node` by edge ed, pa and ca its parent's and its own end.
std::string TreeBuilder::add_body(int child, int parent_node, const Edge& ed, const Anchor& pa, const Anchor& ca) {
  TreeBody tb;
  tb.name = node_name(child);
  tb.joint = ed.name.empty() ? ed.e->name : ed.name;
  tb.parent = parent_node < 0 ? -1 : tree_index_[parent_node];
  const Vec3 parent_origin = parent_node < 0 ? Vec3::Zero() : origin_[parent_node];
  Vec3 o = Vec3::Zero();  // the child frame's origin (world, t = 0), set by add_rod_point or add_rigid_body
  double qd_scalar = 0.0;
  Vec3 qd_vec = Vec3::Zero();
  const std::string why = ed.joint.type == TreeJointType::kRod
                              ? add_rod_point(tb, child, parent_node, ed, pa, o, qd_scalar, qd_vec)
                              : add_rigid_body(tb, child, parent_node, ed, ca, o, qd_scalar, qd_vec);
  if (!why.empty()) return why;
  origin_[child] = o;
  tb.p = o - parent_origin;
  commit(tb, child, qd_scalar, qd_vec);
  return "";
}

// Breadth-first over the joint graph from a root node (ground, or a free body below).
std::string TreeBuilder::grow(int root) {
  std::vector<int> frontier{root};
  for (size_t f = 0; f < frontier.size(); ++f) {
    const int n = frontier[f];
    for (const int k : node_edges_[n + 1]) {
      if (used_[k]) continue;
      const Edge& ed = edges_[k];
      const int na = node_of(*ed.joint.a), nb = node_of(*ed.joint.b);
      const bool from_a = na == n;
      const int child = from_a ? nb : na;
      if (child == n) return fmt::format("joint {} joins {} to itself", ed.e->name, node_name(n));
      used_[k] = 1;
      if (placed(child)) {  // a loop: the joint's own rows close it (a hinge pair's: both joints')
        tree_.cuts.push_back(ed.e);
        if (ed.pair >= 0) tree_.cuts.push_back(edges_[ed.pair].e);
        continue;
      }
      if (std::string why = add_body(child, n, ed, from_a ? *ed.joint.a : *ed.joint.b, from_a ? *ed.joint.b : *ed.joint.a); !why.empty())
        return why;
      frontier.push_back(child);
    }
  }
  return "";
}

// What ground does not reach floats. Each such part of the joint graph hangs from a free root: a
// rigid body where it has one (rigid bodies first: a point mass holds only rods to other points),
// else a point mass.
std::string TreeBuilder::grow_floating_parts() {
  for (int pass = 0; pass < 2; ++pass)
    for (int n = pass == 0 ? np_ : 0; n < (pass == 0 ? nn_ : np_); ++n) {
      if (placed(n)) continue;
      add_free_root(n);
      if (std::string why = grow(n); !why.empty()) return why;
    }
  return "";
}

// A free point is a translation (dim DOF, its displacement in world axes). A free rigid body is a
// translation of its centroid (world axes) carrying the body on a spherical joint at the centroid
// (planar: a revolute about the normal): configuration the centroid's displacement and the unit
// quaternion of the body's orientation (3 + 4), velocity the centroid's in world axes and the
// angular velocity in body axes (3 + 3; planar x, y, angle).
// Why this 6-DOF free joint rather than the body's spatial velocity in body coordinates: with the
// linear velocity in world axes at the centroid, the centroid's equation is r'' = g + F / m,
// linear, which every Runge-Kutta method of order >= 2 integrates exactly (a torque-free body's
// centroid stays on its parabola to round-off), and the pair reuses the translation and spherical
// joints' paths: joint blocks stay at most 3 DOF, so the 1-DOF paths keep their storage. The
// translation's tree body is massless and no model body (point = body = -1).
void TreeBuilder::add_free_root(int n) {
  TreeBody tr;
  tr.name = node_name(n);
  tr.type = JointType::kTranslation;
  Vec3 vc = Vec3::Zero();  // the centroid's (point's) velocity
  if (n < np_) {
    const PointMass& pm = model_.points[n];
    tr.point = n;
    tr.mass = pm.mass;
    tr.I = spatial_inertia(pm.mass, Vec3::Zero(), Mat3::Zero());
    tr.p = to3(pm.r0);
    vc = to3(pm.v0);
  } else {
    const RigidBody& rb = model_.bodies[n - np_];
    tr.p = to3(rb.r0);
    vc = to3(rb.v0);
  }
  origin_[n] = tr.p;
  v_origin_[n] = vc;
  commit(tr, n < np_ ? n : -1, 0.0, vc);
  if (n < np_) return;
  // The body on its rotation joint at the centroid.
  const RigidBody& rb = model_.bodies[n - np_];
  TreeBody tb;
  tb.name = rb.name;
  tb.parent = static_cast<int>(tree_.bodies.size()) - 1;
  tb.body = n - np_;
  Mat3 R0 = Mat3::Identity();
  R0.topLeftCorner(model_.dim, model_.dim) = rb.R0;
  tb.axes = R0;
  tb.mass = rb.mass;
  tb.I = spatial_inertia(rb.mass, Vec3::Zero(), R0 * rb.principal_inertia().asDiagonal() * R0.transpose());
  tb.type = model_.dim == 2 ? JointType::kRevolute : JointType::kSpherical;
  tb.axis = Vec3::UnitZ();
  w_world_[n] = rb.omega0;
  commit(tb, n, rb.omega0[2], rb.omega0);  // body axes = world axes at t = 0
}

// The initial state, the depth, the planar paths and the DOFs' parents, once every body is placed.
void TreeBuilder::finish() {
  tree_.q0 = Eigen::Map<Eigen::VectorXd>(q0_.data(), static_cast<Eigen::Index>(q0_.size()));
  tree_.v0 = Eigen::Map<Eigen::VectorXd>(v0_.data(), static_cast<Eigen::Index>(v0_.size()));
  for (int d : depth_) tree_.depth = std::max(tree_.depth, d);
  detect_planar(tree_);
  // lambda over DOFs: within a joint the previous DOF; the first DOF of a joint, the last DOF of the
  // nearest ancestor that has DOFs.
  tree_.dof_parent.assign(tree_.nv, -1);
  for (const TreeBody& b : tree_.bodies) {
    int last = -1;
    for (int p = b.parent; p >= 0; p = tree_.bodies[p].parent)
      if (tree_.bodies[p].nv > 0) {
        last = tree_.bodies[p].vi + tree_.bodies[p].nv - 1;
        break;
      }
    for (int k = 0; k < b.nv; ++k) tree_.dof_parent[b.vi + k] = k == 0 ? last : b.vi + k - 1;
  }
  tree_.dof_chain = true;
  for (int k = 0; k < tree_.nv; ++k) tree_.dof_chain = tree_.dof_chain && tree_.dof_parent[k] == k - 1;
}

}  // namespace

std::string build_spatial_tree(const Model& model, SpatialTree& tree) {
  tree = SpatialTree{};
  tree.dim = model.dim;
  tree.gravity = to3(model.gravity);
  std::vector<Edge> edges;
  if (std::string why = joint_edges(model, edges); !why.empty()) return why;
  std::vector<char> used(edges.size(), 0);
  for (const int k : cut_named_joints(model, edges, used)) tree.cuts.push_back(edges[k].e);
  pair_hinges(model, edges, used);
  TreeBuilder builder(model, tree, edges, used);
  if (std::string why = builder.grow(kGround); !why.empty()) return why;
  if (std::string why = builder.grow_floating_parts(); !why.empty()) return why;
  if (tree.nv == 0) return "no degree of freedom";
  builder.finish();
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
  if (tree.pins) {
    pins.resize(n);
    pin_sx.assign(n, 0.0);
    pin_sy.assign(n, 0.0);
  }
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

}  // namespace mbs::recursive
