// rod: a massless rigid rod keeping two points at a fixed distance. In a planar model its end
// joints are pins; in a spatial model, spherical joints. One row, (d.d - L^2) / (2 L), d = r_A - r_B.
#pragma once

#include "core/element.hpp"
#include "core/model.hpp"

namespace mbs {

struct Rod final : Element {
  Anchor a, b;          // the ground end, if any, is `a`
  double length = 0.0;  // m

  Rod() = default;
  // A rod between point masses a and b (a may be kGround, with its position `ground_a`).
  Rod(std::string rod_name, int point_a, int point_b, const Eigen::VectorXd& ground_a, double rod_length) {
    name = std::move(rod_name);
    a.point = point_a;
    if (point_a == kGround) a.at = ground_a;
    b.point = point_b;
    length = rod_length;
  }
  const char* kind() const override { return "rod"; }
  ElementRole role() const override { return ElementRole::kJoint; }
  int row_count(int /*dim*/) const override { return 1; }
  void add_rows(const Model& model, std::vector<ConstraintRow>& rows) const override;
  TreeJoint tree_joint() const override { return {TreeJointType::kRod, &a, &b, {}, length}; }
};

}  // namespace mbs
