// A joint kind's description as a tree joint, for the joint-coordinate formulations' tree builders
// (recursive's build_spatial_tree, minimal's rod tree): which two anchors it joins and what it
// leaves free between them. Each joint kind registers its own description in its unit
// (MBS_REGISTER_TREE_JOINT, next to MBS_REGISTER_ELEMENT_KIND); the builders read tree_joint() and
// name no kind, so a new joint kind is one unit for every formulation.
#pragma once

#include <Eigen/Dense>
#include <cstring>
#include <vector>

#include "core/element.hpp"
#include "core/model.hpp"

namespace mbs {

enum class TreeJointType {
  kNone,       // no tree-joint description (not a joint, or a kind that registered none)
  kRevolute,   // one rotation about `axis` (planar: about the plane's normal, `axis` empty)
  kPrismatic,  // one translation along `axis`, rotation locked
  kSpherical,  // every rotation about the common point (planar: a pin)
  kFixed,      // nothing: a weld
  kRod,        // the distance `length` between two points kept (spherical ends; planar: pins)
};

struct TreeJoint {
  TreeJointType type = TreeJointType::kNone;
  const Anchor* a = nullptr;  // the two ends (the element's own anchors); a ground end is `a`
  const Anchor* b = nullptr;
  Eigen::VectorXd axis;       // revolute (spatial), prismatic: unit, local frame at the initial configuration
  double length = 0.0;        // rod (m)
};

// An element of a registered kind as a tree joint (the element is of that kind's C++ type).
using DescribeTreeJoint = TreeJoint (*)(const Element& element);

namespace detail {
struct TreeJointKind {
  const char* kind;
  DescribeTreeJoint describe;
};
inline std::vector<TreeJointKind>& tree_joint_kinds() {
  static std::vector<TreeJointKind> kinds;
  return kinds;
}
}  // namespace detail

// Registers `describe` for the elements whose kind() is `kind`; true, for a static initializer.
inline bool register_tree_joint(const char* kind, DescribeTreeJoint describe) {
  detail::tree_joint_kinds().push_back({kind, describe});
  return true;
}

// The element as a tree joint; type kNone when its kind registered no description.
inline TreeJoint tree_joint(const Element& element) {
  for (const detail::TreeJointKind& k : detail::tree_joint_kinds())
    if (std::strcmp(k.kind, element.kind()) == 0) return k.describe(element);
  return {};
}

// Registers the tree-joint description of joint kind `name` (C++ type `Type`): the braced body
// that follows sees the element as `const Type& j` and returns its TreeJoint.
#define MBS_REGISTER_TREE_JOINT(name, Type)                                                        \
  static ::mbs::TreeJoint mbs_tree_joint_##name(const Type& j);                                  \
  [[maybe_unused]] static const bool mbs_tree_joint_registered_##name = ::mbs::register_tree_joint(               \
      #name, [](const ::mbs::Element& e) { return mbs_tree_joint_##name(static_cast<const Type&>(e)); }); \
  static ::mbs::TreeJoint mbs_tree_joint_##name(const Type& j)

}  // namespace mbs
