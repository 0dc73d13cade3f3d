// The lengths a model is built of (rods' lengths, read from their tree descriptions; rigid bodies'
// sizes; m): the scale of position tolerances in the natural-coordinate formulations. NaN when the
// model has none.
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/model.hpp"

namespace mbs {

// `pick` of the model's lengths (std::max or std::min), NaN when there are none.
template <typename Pick>
double model_length(const Model& model, Pick pick) {
  double l = std::numeric_limits<double>::quiet_NaN();
  auto take = [&](double x) { l = std::isnan(l) ? x : pick(l, x); };
  for (const auto& e : model.elements)
    if (const TreeJoint j = e->tree_joint(); j.type == TreeJointType::kRod) take(j.length);
  for (const RigidBody& body : model.bodies) take(body.length_scale);
  return l;
}
inline double max_model_length(const Model& model) { return model_length(model, [](double a, double b) { return std::max(a, b); }); }
inline double min_model_length(const Model& model) { return model_length(model, [](double a, double b) { return std::min(a, b); }); }

// The position scale of a model's tolerances (m): its longest length, or its largest initial
// coordinate when that is larger, 1 when it has neither.
inline double position_scale(const Model& model) {
  double scale = max_model_length(model);
  if (!(scale > 0.0)) scale = 0.0;
  const Eigen::VectorXd q0 = model.initial_q();
  if (q0.size() > 0) scale = std::max(scale, q0.cwiseAbs().maxCoeff());
  return scale > 0.0 ? scale : 1.0;
}

}  // namespace mbs
