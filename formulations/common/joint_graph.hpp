// The model's joint graph for the joint-coordinate formulations: nodes are the bodies (point masses,
// then rigid bodies; kGround the ground), edges the joints as they describe themselves
// (Element::tree_joint, core/element.hpp). The joint-coordinate formulations take a spanning tree
// of them and close the loops with the remaining joints, the cuts (spanning_tree below; recursive's
// build_spatial_tree grows the same tree).
#pragma once

#include <Eigen/Dense>
#include <string>
#include <vector>

#include "core/model.hpp"

namespace mbs {

// The node of an anchor: its point mass's index, np + its rigid body's index, or kGround.
int joint_node(const Model& model, const Anchor& a);
// World (local-frame) position at t = 0 of an anchor, in 3 components (planar: z = 0).
Eigen::Vector3d initial_anchor_position(const Model& model, const Anchor& a);

struct JointEdge {
  const Element* e = nullptr;
  TreeJoint joint;
  bool hinge = false;          // a pair of spherical joints (pair_hinges): a revolute joint about `axis`
  Eigen::Vector3d axis = Eigen::Vector3d::Zero();
  std::string name;            // the joint's name where it is not e->name (a hinge's pair)
  int pair = -1;               // a hinge's second edge (marked used), whose rows close a loop with it
};

// The model's joints as edges (force elements and contacts make none), or why one is no tree joint.
std::string joint_edges(const Model& model, std::vector<JointEdge>& edges);

// Two spherical joints between the same rigid body and its neighbour (a body or ground), at
// distinct points, leave it one rotation, about the line through them: a hinge with redundant
// constraints (a bar on two pins). The pair is one revolute joint: the first edge becomes the
// hinge, the second is marked used.
void pair_hinges(const Model& model, std::vector<JointEdge>& edges, std::vector<char>& used);

// The joints the problem file names as cuts (Model::cut_joints, in its order), marked used before
// hinge pairing and growth: the tree grows from the other joints, and a named spherical joint of a
// would-be hinge pair is cut alone (its rows close the loop; its partner stays a tree joint).
// Returns their edges.
std::vector<int> cut_named_joints(const Model& model, const std::vector<JointEdge>& edges, std::vector<char>& used);

// The cut-joint rule (recursive's build_spatial_tree follows it too, placing bodies as it grows):
// the named cuts first; then the growth below on the other joints, which cuts whatever loops remain
// (allowed: a file may name some of its cuts and leave the rest to the rule).
// A spanning tree of the joint graph, grown breadth-first from the ground, then from a free root in
// each part ground does not reach (rigid bodies first), and the joints that close loops.
struct SpanningTree {
  struct Link {
    int node = kGround;    // the body this link places
    int parent = kGround;  // the node it hangs from (kGround for a free root too)
    int edge = -1;         // its joint in `edges`, or -1: a free root (no joint)
    bool from_a = true;    // the parent is the joint's `a` end
  };
  std::vector<JointEdge> edges;
  std::vector<Link> links;  // parents before children; one per body
  std::vector<int> cuts;    // edges that close a loop (named, or both ends already placed), in element order
};
// Empty, or why the graph has no such tree (a joint without a tree-joint description, a joint
// joining a body to itself).
std::string spanning_tree(const Model& model, SpanningTree& tree);

}  // namespace mbs
