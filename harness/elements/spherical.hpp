// spherical: a ball-and-socket joint keeping two anchors coincident (dim linear rows). In a planar
// model it is a pin, the same as `revolute`.
#pragma once

#include "core/element.hpp"
#include "core/model.hpp"

namespace mbs {

struct SphericalJoint final : Element {
  Anchor a, b;  // the ground end, if any, is `a`
  const char* kind() const override { return "spherical"; }
  ElementRole role() const override { return ElementRole::kJoint; }
  int row_count(int dim) const override { return dim; }
  void add_rows(const Model& model, std::vector<ConstraintRow>& rows) const override;
  TreeJoint tree_joint() const override { return {TreeJointType::kSpherical, &a, &b, {}, 0.0}; }
};

}  // namespace mbs
