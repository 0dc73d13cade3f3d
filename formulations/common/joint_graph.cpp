#include "common/joint_graph.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace mbs {

int joint_node(const Model& model, const Anchor& a) {
  return a.body >= 0 ? static_cast<int>(model.points.size()) + a.body : a.point;
}

Eigen::Vector3d initial_anchor_position(const Model& model, const Anchor& a) {
  Eigen::Vector3d x = Eigen::Vector3d::Zero();
  if (a.is_ground()) {
    x.head(a.at.size()) = a.at;
  } else if (a.body >= 0) {
    const RigidBody& b = model.bodies[a.body];
    x.head(b.r0.size()) = b.r0 + b.R0 * a.at;
  } else {
    x.head(model.points[a.point].r0.size()) = model.points[a.point].r0;
  }
  return x;
}

std::string joint_edges(const Model& model, std::vector<JointEdge>& edges) {
  for (const auto& ep : model.elements) {
    const Element* e = ep.get();
    if (e->role() != ElementRole::kJoint) continue;  // forces and contacts make no edge
    JointEdge ed;
    ed.e = e;
    ed.joint = e->tree_joint();
    if (ed.joint.type == TreeJointType::kNone)
      return fmt::format("joint {} ({}) has no tree-joint description", e->name, e->kind());
    edges.push_back(std::move(ed));
  }
  return "";
}

void pair_hinges(const Model& model, std::vector<JointEdge>& edges, std::vector<char>& used) {
  const int np = static_cast<int>(model.points.size()), ne = static_cast<int>(edges.size());
  auto spherical = [&](int k) { return edges[k].joint.type == TreeJointType::kSpherical && !edges[k].hinge; };
  for (int i = 0; i < ne; ++i) {
    if (used[i] || !spherical(i)) continue;
    const Anchor &a = *edges[i].joint.a, &b = *edges[i].joint.b;
    for (int k = i + 1; k < ne; ++k) {
      if (used[k] || !spherical(k)) continue;
      const int ai = joint_node(model, a), bi = joint_node(model, b);
      const int ak = joint_node(model, *edges[k].joint.a), bk = joint_node(model, *edges[k].joint.b);
      const bool same = (ai == ak && bi == bk) || (ai == bk && bi == ak);
      if (!same || std::max(ai, bi) < np) continue;  // between a rigid body and its neighbour only
      const Eigen::Vector3d d = initial_anchor_position(model, *edges[k].joint.a) - initial_anchor_position(model, a);
      if (d.norm() <= 1e-9 * std::max(1.0, initial_anchor_position(model, a).norm())) continue;
      edges[i].hinge = true;
      edges[i].axis = d.normalized();
      edges[i].name = edges[i].e->name + "+" + edges[k].e->name;
      edges[i].pair = k;
      used[k] = 1;
      break;
    }
  }
}

std::vector<int> cut_named_joints(const Model& model, const std::vector<JointEdge>& edges, std::vector<char>& used) {
  std::vector<int> cuts;
  for (const int i : model.cut_joints)
    for (int k = 0; k < static_cast<int>(edges.size()); ++k)
      if (edges[k].e == model.elements[i].get()) {
        used[k] = 1;
        cuts.push_back(k);
      }
  return cuts;
}

std::string spanning_tree(const Model& model, SpanningTree& tree) {
  tree = SpanningTree{};
  if (std::string why = joint_edges(model, tree.edges); !why.empty()) return why;
  const int np = static_cast<int>(model.points.size()), nn = np + static_cast<int>(model.bodies.size());
  const int ne = static_cast<int>(tree.edges.size());
  std::vector<char> used(ne, 0), placed(nn, 0);
  tree.cuts = cut_named_joints(model, tree.edges, used);
  pair_hinges(model, tree.edges, used);
  auto node_name = [&](int n) { return n < 0 ? std::string("ground") : n < np ? model.points[n].name : model.bodies[n - np].name; };
  auto grow = [&](int root) -> std::string {
    std::vector<int> frontier{root};
    for (size_t f = 0; f < frontier.size(); ++f) {
      const int n = frontier[f];
      for (int k = 0; k < ne; ++k) {
        if (used[k]) continue;
        const JointEdge& ed = tree.edges[k];
        const int na = joint_node(model, *ed.joint.a), nb = joint_node(model, *ed.joint.b);
        if (na != n && nb != n) continue;
        const int child = na == n ? nb : na;
        if (child == n) return fmt::format("joint {} joins {} to itself", ed.e->name, node_name(n));
        used[k] = 1;
        if (child < 0 || placed[child]) {
          tree.cuts.push_back(k);
          continue;
        }
        placed[child] = 1;
        tree.links.push_back({child, n, k, na == n});
        frontier.push_back(child);
      }
    }
    return "";
  };
  if (std::string why = grow(kGround); !why.empty()) return why;
  for (int pass = 0; pass < 2; ++pass)  // free roots: rigid bodies first, then point masses
    for (int n = pass == 0 ? np : 0; n < (pass == 0 ? nn : np); ++n) {
      if (placed[n]) continue;
      placed[n] = 1;
      tree.links.push_back({n, kGround, -1, true});
      if (std::string why = grow(n); !why.empty()) return why;
    }
  std::sort(tree.cuts.begin(), tree.cuts.end());
  return "";
}

}  // namespace mbs
