// Joint coordinates derived from the model's joint tree.
//
// Each point is either free (its dim translations are coordinates) or hangs from ground or from an
// earlier point by a rod; in a planar model a rod contributes one absolute angle theta, measured
// in the plane from the downward direction d (along gravity; e1 without gravity) towards
// s = d rotated by +90 degrees: r = r_parent + L (cos theta d + sin theta s). Hanging mechanisms
// then keep theta near zero, where sin and cos are cheapest and most accurate.
#pragma once

#include <string>
#include <vector>

#include "core/model.hpp"

namespace mbs::minimal {

struct Link {
  int point = 0;            // model point this link places
  int parent = kGround;     // parent point, or kGround
  int dof = 0;              // first joint coordinate of the link
  bool free = false;        // free point: dim translational coordinates; else a rod angle
  double length = 0.0;      // m (rods)
  Eigen::Vector2d anchor = Eigen::Vector2d::Zero();  // ground end (local frame), when parent == kGround
};

struct JointTree {
  int ndof = 0;
  Eigen::Vector2d down = Eigen::Vector2d(1, 0), side = Eigen::Vector2d(0, 1);  // d and s, local frame
  std::vector<Link> links;  // parents before children
};

// A rod between point masses (a may be the ground, at ground_a): the form joint coordinates use.
struct PointRod {
  std::string name;
  int a = kGround, b = 0;
  Eigen::VectorXd ground_a;
  double length = 0.0;
};
// The model's rods (joints whose tree_joint() is a rod) as PointRods, or the reason one is
// not between point masses.
std::string point_rods(const Model& model, std::vector<PointRod>& rods);
// Whether a joint of the model describes itself as a tree joint of this type.
bool has_tree_joint(const Model& model, TreeJointType type);

// The rods' spanning tree from ground, breadth first (rods with a ground end first, then the rods
// hanging from placed points), then the points it does not reach (free: dim coordinates each): the
// one walk behind the simulator's JointTree and the linearizer's joint angles, which give a rod
// per_rod coordinates (a planar angle; two in space).
struct RodTreeLink {
  int point = 0;            // model point this link places
  int parent = kGround;     // parent point, or kGround
  int dof = 0;              // first coordinate
  bool free = false;        // a free point
  double length = 0.0;      // m (rods)
  const Eigen::VectorXd* anchor = nullptr;  // the rod's ground end (PointRod::ground_a), when parent == kGround
};
// Why the rods are not a tree from ground: rod `rod` reaches `point` a second time (kLoop), or
// `point` is linked by rods but not to ground (kFloating).
struct RodTreeIssue {
  enum class Kind { kNone, kLoop, kFloating };
  Kind kind = Kind::kNone;
  int rod = -1, point = -1;
};
RodTreeIssue rod_tree(const Model& model, const std::vector<PointRod>& rods, int per_rod, std::vector<RodTreeLink>& links,
                      int& ndof);

// Builds the tree, or returns the reason the model has no joint-coordinate description here.
std::string build_joint_tree(const Model& model, JointTree& tree);

}  // namespace mbs::minimal
