// Force elements as external forces on the tree bodies.
#pragma once

#include <Eigen/Dense>

#include "recursive/tree_model.hpp"

namespace mbs::recursive {

// The spatial forces on the tree bodies equivalent by virtual work to a generalized force Q in the
// model's natural coordinates (Element::add_force): on a point mass the force Q_point at the point;
// on a rigid body the force Q_rG at the centroid and the moment sum_k u_k x Q_uk (a virtual rotation
// dphi moves u_k by dphi x u_k, so Q_uk does the work dphi . u_k x Q_uk; planar: its normal
// component, on 2-vectors). qn is the natural state Q was evaluated at; reads ws.Rw as
// model_state left it at the same tree state. No allocation (f_ext sized from the tree).
void body_forces(const SpatialTree& tree, const Model& model, const Eigen::Ref<const Eigen::VectorXd>& qn,
                 const Eigen::Ref<const Eigen::VectorXd>& Q, const TreeWorkspace& ws, BodyForces& f_ext);

// The model's force elements as external forces on the tree: their Q(q_n, v_n) at the natural state
// of the tree state (model_state), mapped by body_forces. Empty (evaluate() never called) when the
// model has none, so a model without force elements pays nothing. Buffers sized once.
class TreeForces {
 public:
  TreeForces(const SpatialTree& tree, const Model& model);
  bool empty() const { return elements_.empty(); }
  const BodyForces& evaluate(const Eigen::Ref<const Eigen::VectorXd>& q, const Eigen::Ref<const Eigen::VectorXd>& qd,
                             TreeWorkspace& ws);

 private:
  const SpatialTree* tree_;
  const Model* model_;
  std::vector<const Element*> elements_;
  Eigen::VectorXd qn_, vn_, Q_;
  BodyForces f_ext_;
};

}  // namespace mbs::recursive
