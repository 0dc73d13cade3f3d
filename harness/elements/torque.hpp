// torque: a constant torque on a rigid body (the reaction on the ground). In natural coordinates
// Q_k = tau x u_k / 2 on each unit axis u_k: on the manifold its virtual work sum Q_k . (dphi x u_k)
// = dphi . sum u_k x (tau x u_k) / 2 = tau . dphi, exactly (spatial: sum_k (I - u_k u_k^T) = 2 I;
// planar, tau along the normal: the same with 2 axes). Planar: its work -tau theta is a potential
// defined up to 2 pi tau (scoring unwraps it). Spatial: the work of a constant torque is no function
// of the configuration, so the energy is no invariant.
#pragma once

#include "core/element.hpp"
#include "core/model.hpp"

namespace mbs {

struct Torque final : Element {
  int body = -1;
  Eigen::Vector3d tau = Eigen::Vector3d::Zero();  // N m, local frame (planar: (0, 0, tau))
  bool planar = true;                             // the model's dimension: only a planar torque has a potential

  const char* kind() const override { return "torque"; }
  ElementRole role() const override { return ElementRole::kForce; }
  void add_force(const Model& model, const Eigen::Ref<const Eigen::VectorXd>& q, const Eigen::Ref<const Eigen::VectorXd>& v,
                 Eigen::Ref<Eigen::VectorXd> Q) const override;
  void add_force_jacobians(const Model& model, const Eigen::Ref<const Eigen::VectorXd>& q,
                           const Eigen::Ref<const Eigen::VectorXd>& v, Eigen::Ref<Eigen::MatrixXd> dQ_dq,
                           Eigen::Ref<Eigen::MatrixXd> dQ_dv) const override;
  double potential_energy(const Model& model, const Eigen::Ref<const Eigen::VectorXd>& q) const override;
  bool has_potential() const override { return planar; }
  double potential_period() const override { return 2.0 * M_PI * std::abs(tau[2]); }
};

}  // namespace mbs
