#include "recursive/velocity_transformation.hpp"

#include <array>

#include "core/natural_coordinates.hpp"
#include "recursive/crba.hpp"
#include "recursive/kinematics.hpp"

namespace mbs::recursive {

VelocityTransformation::VelocityTransformation(const SpatialTree& tree, const Model& model)
    : tree_(tree), model_(model), offset_(tree.bodies.size(), -1), ab_(tree.bodies.size(), Vec6::Zero()) {
  for (const auto& e : model.elements)
    if (e->role() == ElementRole::kForce) forces_.push_back(e.get());
  for (size_t i = 0; i < tree.bodies.size(); ++i) {
    const TreeBody& b = tree.bodies[i];
    if (b.point >= 0) offset_[i] = model.dim * b.point;
    else if (b.body >= 0) offset_[i] = model.body_offset(b.body);
  }
  const NaturalCoordinates nc(model);
  m_ = nc.M_diag();
  sqrt_m_ = m_.cwiseSqrt();
  Q0_ = nc.Q();
  const int nn = model.nq();
  qn_ = Eigen::VectorXd::Zero(nn);
  vn_ = Eigen::VectorXd::Zero(nn);
  c_ = Eigen::VectorXd::Zero(nn);
  f_ = Eigen::VectorXd::Zero(nn);
  R_ = Eigen::MatrixXd::Zero(nn, tree.nv);  // entries off the tree's pattern stay 0
  A_ = Eigen::MatrixXd::Zero(nn, tree.nv);
}

void VelocityTransformation::natural_kinematics(const Eigen::Ref<const Eigen::VectorXd>& q,
                                                const Eigen::Ref<const Eigen::VectorXd>& qd, TreeWorkspace& ws) {
  kinematics(tree_, q, qd, ws);
  world_frames(tree_, ws);
  bias_accelerations(tree_, ws, ab_);
  const int dim = model_.dim;
  const int n = static_cast<int>(tree_.bodies.size());
  for (int i = 0; i < n; ++i) {
    const int off = offset_[i];
    if (off < 0) continue;  // a free body's translation: no natural coordinates of its own
    const TreeBody& b = tree_.bodies[i];
    const Mat3& Rw = ws.Rw[i];
    // Body-frame velocity [w; vo] and bias acceleration [al; as] (spatial: as is the acceleration of
    // the body point at the origin less w x vo, so a point p accelerates as as + al x p + w x (vo + w x p)).
    const Vec3 w = ws.v[i].head<3>(), vo = ws.v[i].tail<3>();
    const Vec3 al = ab_[i].head<3>(), as = ab_[i].tail<3>();
    const Vec3 vp = vo + w.cross(b.com);
    const Vec3 x = ws.ow[i] + Rw * b.com;
    qn_.segment(off, dim) = x.head(dim);
    vn_.segment(off, dim) = (Rw * vp).head(dim);
    c_.segment(off, dim) = (Rw * (as + al.cross(b.com) + w.cross(vp))).head(dim);
    const int naxes = b.body >= 0 ? dim : 0;
    std::array<Vec3, 3> uw;  // the principal axes in world axes
    for (int k = 0; k < naxes; ++k) {
      const Vec3 u = b.axes.col(k);
      uw[k] = Rw * u;
      const int o = off + dim * (k + 1);
      qn_.segment(o, dim) = uw[k].head(dim);
      vn_.segment(o, dim) = (Rw * w.cross(u)).head(dim);
      c_.segment(o, dim) = (Rw * (al.cross(u) + w.cross(w.cross(u)))).head(dim);
    }
    // R's rows of this body: a unit rate of DOF s of an ancestor j (or of i itself) moves the body
    // with the world angular velocity Rw_j s_w and carries the point at x with Rw_j s_v + w x (x - ow_j).
    for (int j = i; j >= 0; j = tree_.bodies[j].parent) {
      const TreeBody& bj = tree_.bodies[j];
      for (int s = 0; s < bj.nv; ++s) {
        const Vec3 wk = ws.Rw[j] * bj.S.col(s).head<3>();
        const Vec3 vk = ws.Rw[j] * bj.S.col(s).tail<3>() + wk.cross(x - ws.ow[j]);
        R_.col(bj.vi + s).segment(off, dim) = vk.head(dim);
        for (int k = 0; k < naxes; ++k)
          R_.col(bj.vi + s).segment(off + dim * (k + 1), dim) = wk.cross(uw[k]).head(dim);
      }
    }
  }
}

void VelocityTransformation::accelerations(const Eigen::Ref<const Eigen::VectorXd>& q,
                                           const Eigen::Ref<const Eigen::VectorXd>& qd, TreeWorkspace& ws,
                                           Eigen::Ref<Eigen::VectorXd> qdd) {
  natural_kinematics(q, qd, ws);
  f_ = Q0_;
  for (const Element* e : forces_) e->add_force(model_, qn_, vn_, f_);
  f_ -= m_.cwiseProduct(c_);
  ws.b.noalias() = R_.transpose() * f_;
  // H = (sqrt(M) R)^T (sqrt(M) R), its lower triangle by a symmetric rank update (half the product).
  A_.noalias() = sqrt_m_.asDiagonal() * R_;
  ws.H.setZero();
  ws.H.selfadjointView<Eigen::Lower>().rankUpdate(A_.transpose());
  ltdl_factor(tree_, ws.H);
  qdd = ws.b;
  ltdl_solve(tree_, ws.H, qdd);
}

}  // namespace mbs::recursive
