// Joint coordinates derived from the model's joint tree.
//
// Each point is either free (its dim translations are coordinates) or hangs from ground or from an
// earlier point by a rod; in a planar model a rod contributes one absolute angle theta, measured
// in the plane from local axis e1 towards e2: r = r_parent + L (cos theta, sin theta).
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
  std::vector<Link> links;  // parents before children
};

// Builds the tree, or returns the reason the model has no joint-coordinate description here.
std::string build_joint_tree(const Model& model, JointTree& tree);

}  // namespace mbs::minimal
