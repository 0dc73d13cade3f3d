#include "recursive/kinematics.hpp"

#include <cmath>

namespace mbs::recursive {

void kinematics(const SpatialTree& tree, const Eigen::Ref<const Eigen::VectorXd>& q,
                const Eigen::Ref<const Eigen::VectorXd>& qd, TreeWorkspace& ws) {
  const int n = static_cast<int>(tree.bodies.size());
  for (int i = 0; i < n; ++i) {
    const TreeBody& b = tree.bodies[i];
    Mat3& E = ws.E[i];
    Vec3& r = ws.r[i];
    Vec6 vJ = Vec6::Zero();
    switch (b.type) {
      case JointType::kRevolute: {
        const double th = q[b.qi], co = std::cos(th), si = std::sin(th);
        const Mat3 K = skew(b.axis);
        // Rodrigues: R = I + sin K + (1 - cos) K^2 (child into parent); E = R^T.
        E = Mat3::Identity() - si * K + (1.0 - co) * (K * K);
        r = b.p;
        vJ.head<3>() = b.axis * qd[b.vi];
        break;
      }
      case JointType::kPrismatic:
        E.setIdentity();
        r = b.p + q[b.qi] * b.axis;
        vJ.tail<3>() = b.axis * qd[b.vi];
        break;
      case JointType::kSpherical:
        E = quaternion_rotation(q.data() + b.qi).transpose();
        r = b.p;
        vJ.head<3>().noalias() = b.S.topRows<3>() * qd.segment(b.vi, b.nv);
        break;
      case JointType::kTranslation:
        E.setIdentity();
        r = b.p;
        for (int d = 0; d < b.nv; ++d) {
          r[d] += q[b.qi + d];
          vJ[3 + d] = qd[b.vi + d];
        }
        break;
      case JointType::kFixed:
        E.setIdentity();
        r = b.p;
        break;
    }
    if (b.parent < 0) {
      ws.v[i] = vJ;
      ws.c[i].setZero();  // v x vJ = vJ x vJ = 0
    } else {
      ws.v[i] = xmotion(E, r, ws.v[b.parent]) + vJ;
      ws.c[i] = crm(ws.v[i], vJ);
    }
  }
}

void bias_accelerations(const SpatialTree& tree, const TreeWorkspace& ws, std::vector<Vec6>& ab) {
  for (size_t i = 0; i < tree.bodies.size(); ++i) {
    const int p = tree.bodies[i].parent;
    Vec6 ap = Vec6::Zero();
    if (p >= 0) {  // X a_parent: [E w; E (a - r x w)]
      ap.head<3>().noalias() = ws.E[i] * ab[p].head<3>();
      ap.tail<3>().noalias() = ws.E[i] * (ab[p].tail<3>() - ws.r[i].cross(ab[p].head<3>()));
    }
    ab[i] = ap + ws.c[i];
  }
}

void configuration_rate(const SpatialTree& tree, const Eigen::Ref<const Eigen::VectorXd>& q,
                        const Eigen::Ref<const Eigen::VectorXd>& qd, Eigen::Ref<Eigen::VectorXd> qdot) {
  if (!tree.has_quaternions) {
    qdot = qd;  // nq == nv, one coordinate per velocity
    return;
  }
  for (const TreeBody& b : tree.bodies) {
    if (b.type != JointType::kSpherical) {
      qdot.segment(b.qi, b.nq) = qd.segment(b.vi, b.nv);
      continue;
    }
    const double w = q[b.qi], x = q[b.qi + 1], y = q[b.qi + 2], z = q[b.qi + 3];
    Vec3 om;
    om.noalias() = b.S.topRows<3>() * qd.segment(b.vi, b.nv);
    const double ox = om[0], oy = om[1], oz = om[2];
    qdot[b.qi] = -0.5 * (x * ox + y * oy + z * oz);
    qdot[b.qi + 1] = 0.5 * (w * ox + y * oz - z * oy);
    qdot[b.qi + 2] = 0.5 * (w * oy + z * ox - x * oz);
    qdot[b.qi + 3] = 0.5 * (w * oz + x * oy - y * ox);
  }
}

void normalize(const SpatialTree& tree, Eigen::Ref<Eigen::VectorXd> q) {
  if (!tree.has_quaternions) return;
  for (const TreeBody& b : tree.bodies)
    if (b.type == JointType::kSpherical) q.segment<4>(b.qi).normalize();
}

void world_frames(const SpatialTree& tree, TreeWorkspace& ws) {
  const int n = static_cast<int>(tree.bodies.size());
  for (int i = 0; i < n; ++i) {
    const TreeBody& b = tree.bodies[i];
    if (b.parent < 0) {
      ws.Rw[i] = ws.E[i].transpose();
      ws.ow[i] = ws.r[i];
    } else {
      ws.Rw[i].noalias() = ws.Rw[b.parent] * ws.E[i].transpose();
      ws.ow[i].noalias() = ws.ow[b.parent] + ws.Rw[b.parent] * ws.r[i];
    }
  }
}

void model_state(const SpatialTree& tree, const Model& model, const Eigen::Ref<const Eigen::VectorXd>& q,
                 const Eigen::Ref<const Eigen::VectorXd>& qd, TreeWorkspace& ws, Eigen::Ref<Eigen::VectorXd> qn,
                 Eigen::Ref<Eigen::VectorXd> vn) {
  kinematics(tree, q, qd, ws);
  world_frames(tree, ws);
  const int dim = model.dim;
  const int n = static_cast<int>(tree.bodies.size());
  for (int i = 0; i < n; ++i) {
    const TreeBody& b = tree.bodies[i];
    if (b.point < 0 && b.body < 0) continue;  // a free body's translation: no model body
    const Mat3& R = ws.Rw[i];
    const Vec3 w = ws.v[i].head<3>();
    const Vec3 vo = ws.v[i].tail<3>();
    const Vec3 xc = ws.ow[i] + R * b.com;
    const Vec3 vc = R * (vo + w.cross(b.com));
    const int off = b.point >= 0 ? dim * b.point : model.body_offset(b.body);
    qn.segment(off, dim) = xc.head(dim);
    vn.segment(off, dim) = vc.head(dim);
    if (b.body >= 0) {
      const Vec3 ww = R * w;
      for (int k = 0; k < dim; ++k) {
        const Vec3 uk = R * b.axes.col(k);
        qn.segment(off + dim * (k + 1), dim) = uk.head(dim);
        vn.segment(off + dim * (k + 1), dim) = ww.cross(uk).head(dim);
      }
    }
  }
}

}  // namespace mbs::recursive
