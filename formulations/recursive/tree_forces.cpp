#include "recursive/tree_forces.hpp"

#include "recursive/kinematics.hpp"

namespace mbs::recursive {

void body_forces(const SpatialTree& tree, const Model& model, const Eigen::Ref<const Eigen::VectorXd>& qn,
                 const Eigen::Ref<const Eigen::VectorXd>& Q, const TreeWorkspace& ws, BodyForces& f_ext) {
  const int dim = model.dim;
  const int n = static_cast<int>(tree.bodies.size());
  for (int i = 0; i < n; ++i) {
    const TreeBody& b = tree.bodies[i];
    if (b.point < 0 && b.body < 0) continue;  // a free body's translation: massless, no model body (f_ext stays 0)
    const int off = b.point >= 0 ? dim * b.point : model.body_offset(b.body);
    Vec3 f = Vec3::Zero(), m = Vec3::Zero();  // world force at the centroid (the point) and moment
    f.head(dim) = Q.segment(off, dim);
    if (b.body >= 0) {
      for (int k = 0; k < dim; ++k) {
        const int o = off + dim * (k + 1);
        if (dim == 3) m += Vec3(qn.segment<3>(o)).cross(Vec3(Q.segment<3>(o)));
        else m[2] += qn[o] * Q[o + 1] - qn[o + 1] * Q[o];
      }
    }
    const Mat3& R = ws.Rw[i];
    Vec6& s = f_ext.spatial[i];
    s.tail<3>().noalias() = R.transpose() * f;
    s.head<3>().noalias() = R.transpose() * m;
    s.head<3>() += b.com.cross(Vec3(s.tail<3>()));  // moved from the centroid to the joint
    if (tree.planar) {
      const Vec3 arm = R * b.com;  // the centroid from the joint, world axes
      f_ext.planar[i] = Vec3(tree.normal.dot(m + arm.cross(f)), tree.e1.dot(f), tree.e2.dot(f));
    }
  }
}

TreeForces::TreeForces(const SpatialTree& tree, const Model& model) : tree_(&tree), model_(&model) {
  for (const auto& e : model.elements)
    if (e->role() == ElementRole::kForce) elements_.push_back(e.get());
  if (elements_.empty()) return;
  qn_ = Eigen::VectorXd::Zero(model.nq());
  vn_ = Eigen::VectorXd::Zero(model.nq());
  Q_ = Eigen::VectorXd::Zero(model.nq());
  f_ext_.spatial.assign(tree.bodies.size(), Vec6::Zero());
  if (tree.planar) f_ext_.planar.assign(tree.bodies.size(), Vec3::Zero());
}

const BodyForces& TreeForces::evaluate(const Eigen::Ref<const Eigen::VectorXd>& q, const Eigen::Ref<const Eigen::VectorXd>& qd,
                                       TreeWorkspace& ws) {
  model_state(*tree_, *model_, q, qd, ws, qn_, vn_);
  Q_.setZero();
  for (const Element* e : elements_) e->add_force(*model_, qn_, vn_, Q_);
  body_forces(*tree_, *model_, qn_, Q_, ws, f_ext_);
  return f_ext_;
}

}  // namespace mbs::recursive
