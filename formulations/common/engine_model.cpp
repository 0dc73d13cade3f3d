#include "common/engine_model.hpp"

#include <fmt/format.h>

namespace mbs {

Eigen::Vector3d in_3d(const Eigen::VectorXd& x) {
  Eigen::Vector3d y = Eigen::Vector3d::Zero();
  y.head(x.size()) = x;
  return y;
}

std::string EngineNodes::name(int node) const {
  return node < 0 ? std::string("ground") : node < points() ? model_.points[node].name : model_.bodies[node - points()].name;
}

Eigen::Matrix3d EngineNodes::rotation0(int node) const {
  Eigen::Matrix3d R = Eigen::Matrix3d::Identity();
  if (node < points()) return R;
  const RigidBody& b = model_.bodies[node - points()];
  R.topLeftCorner(b.dim(), b.dim()) = b.R0;
  return R;
}

Eigen::Vector3d EngineNodes::position0(int node) const {
  if (node < 0) return Eigen::Vector3d::Zero();
  return in_3d(node < points() ? model_.points[node].r0 : model_.bodies[node - points()].r0);
}

double EngineNodes::mass(int node) const {
  return node < points() ? model_.points[node].mass : model_.bodies[node - points()].mass;
}

Eigen::Vector3d EngineNodes::inertia(int node, double point_length) const {
  if (node < points()) return Eigen::Vector3d::Constant(kPointInertia * mass(node) * point_length * point_length);
  const RigidBody& rb = model_.bodies[node - points()];
  if (model_.dim == 2) return Eigen::Vector3d(rb.second_moments[1], rb.second_moments[0], rb.second_moments.sum());
  return rb.principal_inertia();
}

std::string loop_refusal(const SpanningTree& tree, const char* why_not) {
  if (tree.cuts.empty()) return "";
  const JointEdge& ed = tree.edges[tree.cuts.front()];
  return fmt::format("joint {} ({}) closes a loop: {}", ed.name.empty() ? ed.e->name : ed.name, ed.e->kind(), why_not);
}

std::string engine_joint(const Model& model, const SpanningTree& tree, const SpanningTree::Link& link,
                         const char* engine, EngineJoint& out) {
  const EngineNodes nodes(model);
  const JointEdge& ed = tree.edges[link.edge];
  const Anchor& pa = link.from_a ? *ed.joint.a : *ed.joint.b;
  const Anchor& ca = link.from_a ? *ed.joint.b : *ed.joint.a;
  const bool planar = model.dim == 2, point_child = link.node < nodes.points();
  out.name = ed.name.empty() ? ed.e->name : ed.name;
  out.type = ed.hinge ? TreeJointType::kRevolute : ed.joint.type;
  if (planar && out.type == TreeJointType::kSpherical) out.type = TreeJointType::kRevolute;  // a pin
  if (point_child && (out.type == TreeJointType::kRevolute || out.type == TreeJointType::kSpherical))
    return fmt::format("joint {} ({}) turns point mass {} about itself: a point has no inertia there; point masses "
                       "hang from rods",
                       out.name, ed.e->kind(), nodes.name(link.node));
  out.pivot = initial_anchor_position(model, ca);
  out.axis = Eigen::Vector3d::UnitZ();
  out.point_length = 1.0;
  switch (out.type) {
    case TreeJointType::kRod:
      if (!point_child)
        return fmt::format("rod {} holds rigid body {}: rods join point masses to their parents in the adapter",
                           out.name, nodes.name(link.node));
      out.pivot = initial_anchor_position(model, pa);
      out.point_length = ed.joint.length;
      return "";
    case TreeJointType::kRevolute:
      if (!planar) out.axis = (ed.hinge ? ed.axis : in_3d(ed.joint.axis)).normalized();
      return "";
    case TreeJointType::kPrismatic:
      out.axis = in_3d(ed.joint.axis).normalized();
      return "";
    case TreeJointType::kSpherical:
    case TreeJointType::kFixed:
      return "";
    default:
      return fmt::format("joint {} ({}): {} joints are not mapped by the {} adapter", out.name, ed.e->kind(),
                         to_string(ed.joint.type), engine);
  }
}

Eigen::VectorXd fit_initial_velocities(const Model& model, int nu, const std::function<void(int k)>& set_unit,
                                       const NodeState& state) {
  const int np = static_cast<int>(model.points.size()), nb = static_cast<int>(model.bodies.size());
  Eigen::MatrixXd J(3 * np + 6 * nb, nu);
  Eigen::VectorXd V(J.rows());
  Eigen::Vector3d r, w, v;
  Eigen::Matrix3d R;
  for (int k = 0; k < nu; ++k) {
    set_unit(k);
    for (int i = 0; i < np; ++i) {
      state(i, r, R, w, v);
      J.block<3, 1>(3 * i, k) = v;
    }
    for (int j = 0; j < nb; ++j) {
      state(np + j, r, R, w, v);
      J.block<3, 1>(3 * np + 6 * j, k) = w;
      J.block<3, 1>(3 * np + 6 * j + 3, k) = v;
    }
  }
  for (int i = 0; i < np; ++i) V.segment<3>(3 * i) = in_3d(model.points[i].v0);
  for (int j = 0; j < nb; ++j) {
    const RigidBody& rb = model.bodies[j];
    V.segment<3>(3 * np + 6 * j) = rb.omega0;
    V.segment<3>(3 * np + 6 * j + 3) = in_3d(rb.v0);
  }
  return J.completeOrthogonalDecomposition().solve(V);
}

void write_natural_state(const Model& model, const NodeState& state, Eigen::VectorXd& q, Eigen::VectorXd& v) {
  const int dim = model.dim, np = static_cast<int>(model.points.size());
  Eigen::Vector3d r, w, vel;
  Eigen::Matrix3d R;
  for (int i = 0; i < np; ++i) {
    state(i, r, R, w, vel);
    q.segment(dim * i, dim) = r.head(dim);
    v.segment(dim * i, dim) = vel.head(dim);
  }
  for (int j = 0; j < static_cast<int>(model.bodies.size()); ++j) {
    const int off = model.body_offset(j);
    state(np + j, r, R, w, vel);
    q.segment(off, dim) = r.head(dim);
    v.segment(off, dim) = vel.head(dim);
    for (int c = 0; c < dim; ++c) {
      q.segment(off + dim * (c + 1), dim) = R.col(c).head(dim);
      v.segment(off + dim * (c + 1), dim) = w.cross(R.col(c)).head(dim);  // u_c' = omega x u_c
    }
  }
}

}  // namespace mbs
