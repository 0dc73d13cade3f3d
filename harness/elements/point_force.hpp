// force: a constant force (N, world direction) at a point of a body: Q += J^T F, potential -F . r.
#pragma once

#include "core/element.hpp"
#include "core/model.hpp"

namespace mbs {

struct PointForce final : Element {
  Anchor at;
  Eigen::VectorXd F;  // N, local frame
  Combo r;            // the point, built by bind()

  const char* kind() const override { return "force"; }
  ElementRole role() const override { return ElementRole::kForce; }
  void add_force(const Model& /*model*/, const Eigen::Ref<const Eigen::VectorXd>& /*q*/,
                 const Eigen::Ref<const Eigen::VectorXd>& /*v*/, Eigen::Ref<Eigen::VectorXd> Q) const override {
    r.add_transpose(1.0, F, Q);
  }
  double potential_energy(const Model& /*model*/, const Eigen::Ref<const Eigen::VectorXd>& q) const override {
    return -F.dot(r.eval(q));
  }
};

}  // namespace mbs
