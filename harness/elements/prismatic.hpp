// prismatic: a slider. The relative rotation is locked (planar 1 row, spatial 3) and anchor b stays
// on the line through anchor a along an axis fixed to A (planar 1 row, spatial 2: n_A . (r_b - r_a) = 0
// for the normals n of the axis): 2 rows planar, 5 spatial, 1 relative translation left.
#pragma once

#include "core/element.hpp"
#include "core/model.hpp"

namespace mbs {

struct PrismaticJoint final : Element {
  Anchor a, b;           // points on the line, one of each side; the ground end, if any, is `a`
  Eigen::VectorXd axis;  // unit sliding axis in the local frame at the initial configuration
  const char* kind() const override { return "prismatic"; }
  ElementRole role() const override { return ElementRole::kJoint; }
  int row_count(int dim) const override { return dim == 2 ? 2 : 5; }
  void add_rows(const Model& model, std::vector<ConstraintRow>& rows) const override;
  TreeJoint tree_joint() const override { return {TreeJointType::kPrismatic, &a, &b, axis, 0.0}; }
};

}  // namespace mbs
