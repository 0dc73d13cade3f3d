// spring_damper: a translational spring and damper between two anchors, acting along the line
// between them with tension T = k (l - l0) + c l' (N). Potential k (l - l0)^2 / 2; with c > 0 the
// element dissipates, so the total energy is no invariant and a problem with it is scored by its
// reference error.
#pragma once

#include "core/element.hpp"
#include "core/model.hpp"

namespace mbs {

struct SpringDamper final : Element {
  Anchor a, b;
  double k = 0.0;            // N/m
  double c = 0.0;            // N s/m
  double rest_length = 0.0;  // m
  Combo d;                   // r_A - r_B, built by bind()

  const char* kind() const override { return "spring_damper"; }
  ElementRole role() const override { return ElementRole::kForce; }
  void bind(const Model& model);  // builds d; called once the anchors are set
  void add_force(const Model& model, const Eigen::Ref<const Eigen::VectorXd>& q, const Eigen::Ref<const Eigen::VectorXd>& v,
                 Eigen::Ref<Eigen::VectorXd> Q) const override;
  void add_force_jacobians(const Model& model, const Eigen::Ref<const Eigen::VectorXd>& q,
                           const Eigen::Ref<const Eigen::VectorXd>& v, Eigen::Ref<Eigen::MatrixXd> dQ_dq,
                           Eigen::Ref<Eigen::MatrixXd> dQ_dv) const override;
  double potential_energy(const Model& model, const Eigen::Ref<const Eigen::VectorXd>& q) const override;
  bool has_potential() const override { return c == 0.0; }
};

}  // namespace mbs
