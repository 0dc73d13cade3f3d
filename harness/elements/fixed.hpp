// fixed: welds two rigid bodies (or a body to the ground): a point coincides (dim rows) and the
// relative rotation is locked (planar 1 row, spatial 3).
#pragma once

#include "core/element.hpp"
#include "core/model.hpp"

namespace mbs {

struct FixedJoint final : Element {
  Anchor a, b;  // the ground end, if any, is `a`
  const char* kind() const override { return "fixed"; }
  ElementRole role() const override { return ElementRole::kJoint; }
  int row_count(int dim) const override { return dim == 2 ? 3 : 6; }
  void add_rows(const Model& model, std::vector<ConstraintRow>& rows) const override;
  TreeJoint tree_joint() const override { return {TreeJointType::kFixed, &a, &b, {}, 0.0}; }
};

}  // namespace mbs
