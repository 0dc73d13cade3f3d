// revolute: a hinge. Planar: a point of each body coincides (2 rows; the axis is the plane normal).
// Spatial: the point coincides (3 rows) and an axis fixed to A stays normal to two directions fixed
// to B that are normal to the axis (2 rows, l a_A . n_B = 0): 5 rows, 1 relative rotation left.
#pragma once

#include "core/element.hpp"
#include "core/model.hpp"

namespace mbs {

struct RevoluteJoint final : Element {
  Anchor a, b;               // the joint point on each side; the ground end, if any, is `a`
  Eigen::VectorXd axis;      // spatial: unit axis in the local frame at the initial configuration
  const char* kind() const override { return "revolute"; }
  ElementRole role() const override { return ElementRole::kJoint; }
  int row_count(int dim) const override { return dim == 2 ? 2 : 5; }
  void add_rows(const Model& model, std::vector<ConstraintRow>& rows) const override;
  TreeJoint tree_joint() const override { return {TreeJointType::kRevolute, &a, &b, axis, 0.0}; }
};

}  // namespace mbs
