#include "minimal/joint_tree.hpp"

#include <fmt/format.h>

#include "elements/rod.hpp"
#include "elements/spherical.hpp"

namespace mbs::minimal {

std::string point_rods(const Model& model, std::vector<PointRod>& rods) {
  rods.clear();
  for (const Rod* rod : model.elements_of<Rod>()) {
    if (rod->a.body >= 0 || rod->b.body >= 0)
      return fmt::format("rod {} ends on a rigid body: joint coordinates take rods between point masses", rod->name);
    rods.push_back({rod->name, rod->a.point, rod->b.point, rod->a.is_ground() ? rod->a.at : Eigen::VectorXd(), rod->length});
  }
  return "";
}

std::string build_joint_tree(const Model& model, JointTree& tree) {
  tree = JointTree{};
  if (!model.bodies.empty()) return "rigid bodies are not yet described in joint coordinates";
  if (!model.elements_of<SphericalJoint>().empty()) return "spherical joints are not yet described in joint coordinates";
  std::vector<PointRod> rods;
  if (std::string why = point_rods(model, rods); !why.empty()) return why;
  const int np = static_cast<int>(model.points.size());
  const int nrods = static_cast<int>(rods.size());
  // Rods incident to each point.
  std::vector<std::vector<int>> incident(np);
  for (int k = 0; k < nrods; ++k) {
    const PointRod& rod = rods[k];
    if (rod.a != kGround) incident[rod.a].push_back(k);
    incident[rod.b].push_back(k);
  }
  if (nrods > 0 && model.dim != 2)
    return "spatial rods (spherical joints) are not yet described in joint coordinates";

  if (model.dim == 2 && model.gravity.norm() > 0) {
    tree.down = model.gravity.head<2>().normalized();
    tree.side = Eigen::Vector2d(-tree.down[1], tree.down[0]);
  }
  std::vector<bool> placed(np, false), rod_used(nrods, false);
  // Breadth-first from ground: rods with a ground end first, then rods hanging from placed points.
  std::vector<int> frontier;
  for (int k = 0; k < nrods; ++k) {
    const PointRod& rod = rods[k];
    if (rod.a != kGround) continue;
    if (placed[rod.b])
      return fmt::format("closed loop: rod {} joins point {}, already placed through the tree (joint coordinates need a tree)",
                         rod.name, model.points[rod.b].name);
    Link l;
    l.point = rod.b;
    l.parent = kGround;
    l.dof = tree.ndof++;
    l.length = rod.length;
    l.anchor = rod.ground_a.head<2>();
    tree.links.push_back(l);
    placed[rod.b] = true;
    rod_used[k] = true;
    frontier.push_back(rod.b);
  }
  for (size_t f = 0; f < frontier.size(); ++f) {
    const int p = frontier[f];
    for (int k : incident[p]) {
      if (rod_used[k]) continue;
      const PointRod& rod = rods[k];
      const int child = rod.a == p ? rod.b : rod.a;
      if (placed[child])
        return fmt::format("closed loop: rod {} joins point {}, already placed through the tree (joint coordinates need a tree)",
                           rod.name, model.points[child].name);
      Link l;
      l.point = child;
      l.parent = p;
      l.dof = tree.ndof++;
      l.length = rod.length;
      tree.links.push_back(l);
      placed[child] = true;
      rod_used[k] = true;
      frontier.push_back(child);
    }
  }
  // Points not reached from ground: a free point is fine; a free chain of rods is not (yet).
  for (int p = 0; p < np; ++p) {
    if (placed[p]) continue;
    if (!incident[p].empty())
      return fmt::format("point {} is linked by rods but not to ground: floating chains are not yet supported",
                         model.points[p].name);
    Link l;
    l.point = p;
    l.free = true;
    l.dof = tree.ndof;
    tree.ndof += model.dim;
    tree.links.push_back(l);
  }
  return "";
}

}  // namespace mbs::minimal
