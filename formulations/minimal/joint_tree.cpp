#include "minimal/joint_tree.hpp"

#include <fmt/format.h>

namespace mbs::minimal {

std::string point_rods(const Model& model, std::vector<PointRod>& rods) {
  rods.clear();
  for (const auto& e : model.elements) {
    const TreeJoint j = e->tree_joint();
    if (j.type != TreeJointType::kRod) continue;
    if (j.a->body >= 0 || j.b->body >= 0)
      return fmt::format("rod {} ends on a rigid body: joint coordinates take rods between point masses", e->name);
    rods.push_back({e->name, j.a->point, j.b->point, j.a->is_ground() ? j.a->at : Eigen::VectorXd(), j.length});
  }
  return "";
}

bool has_tree_joint(const Model& model, TreeJointType type) {
  for (const auto& e : model.elements)
    if (e->role() == ElementRole::kJoint && e->tree_joint().type == type) return true;
  return false;
}

RodTreeIssue rod_tree(const Model& model, const std::vector<PointRod>& rods, int per_rod, std::vector<RodTreeLink>& links,
                      int& ndof) {
  links.clear();
  ndof = 0;
  const int np = static_cast<int>(model.points.size());
  const int nrods = static_cast<int>(rods.size());
  std::vector<std::vector<int>> incident(np);  // rods incident to each point
  for (int k = 0; k < nrods; ++k) {
    if (rods[k].a != kGround) incident[rods[k].a].push_back(k);
    incident[rods[k].b].push_back(k);
  }
  std::vector<bool> placed(np, false), rod_used(nrods, false);
  std::vector<int> frontier;
  auto place = [&](int k, int child, int parent) -> bool {
    if (placed[child]) return false;
    links.push_back({child, parent, ndof, false, rods[k].length, parent == kGround ? &rods[k].ground_a : nullptr});
    ndof += per_rod;
    placed[child] = true;
    rod_used[k] = true;
    frontier.push_back(child);
    return true;
  };
  for (int k = 0; k < nrods; ++k)
    if (rods[k].a == kGround && !place(k, rods[k].b, kGround)) return {RodTreeIssue::Kind::kLoop, k, rods[k].b};
  for (size_t f = 0; f < frontier.size(); ++f) {
    const int p = frontier[f];
    for (int k : incident[p]) {
      if (rod_used[k]) continue;
      const int child = rods[k].a == p ? rods[k].b : rods[k].a;
      if (!place(k, child, p)) return {RodTreeIssue::Kind::kLoop, k, child};
    }
  }
  for (int p = 0; p < np; ++p) {
    if (placed[p]) continue;
    if (!incident[p].empty()) return {RodTreeIssue::Kind::kFloating, -1, p};
    links.push_back({p, kGround, ndof, true, 0.0, nullptr});
    ndof += model.dim;
  }
  return {};
}

std::string build_joint_tree(const Model& model, JointTree& tree) {
  tree = JointTree{};
  if (!model.bodies.empty()) return "rigid bodies are not yet described in joint coordinates";
  if (has_tree_joint(model, TreeJointType::kSpherical)) return "spherical joints are not yet described in joint coordinates";
  std::vector<PointRod> rods;
  if (std::string why = point_rods(model, rods); !why.empty()) return why;
  if (!rods.empty() && model.dim != 2) return "spatial rods (spherical joints) are not yet described in joint coordinates";
  if (model.dim == 2 && model.gravity.norm() > 0) {
    tree.down = model.gravity.head<2>().normalized();
    tree.side = Eigen::Vector2d(-tree.down[1], tree.down[0]);
  }
  std::vector<RodTreeLink> links;
  const RodTreeIssue issue = rod_tree(model, rods, 1, links, tree.ndof);
  if (issue.kind == RodTreeIssue::Kind::kLoop)
    return fmt::format("closed loop: rod {} joins point {}, already placed through the tree (joint coordinates need a tree)",
                       rods[issue.rod].name, model.points[issue.point].name);
  if (issue.kind == RodTreeIssue::Kind::kFloating)
    return fmt::format("point {} is linked by rods but not to ground: floating chains are not yet supported",
                       model.points[issue.point].name);
  for (const RodTreeLink& l : links) {
    const Eigen::Vector2d anchor = l.anchor != nullptr ? Eigen::Vector2d(l.anchor->head<2>()) : Eigen::Vector2d(0, 0);
    tree.links.push_back({l.point, l.parent, l.dof, l.free, l.length, anchor});
  }
  return "";
}

}  // namespace mbs::minimal
