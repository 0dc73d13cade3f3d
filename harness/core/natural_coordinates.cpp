#include "core/natural_coordinates.hpp"

namespace mbs {

void NaturalCoordinates::add_anchor(Combo& d, const Anchor& anchor, double sign) const {
  if (anchor.body >= 0) {  // r_G + sum_a p_a u_a
    const int o = model_->body_offset(anchor.body);
    d.add(o, sign);
    for (int a = 0; a < 3; ++a)
      if (anchor.at[a] != 0.0) d.add(o + 3 + 3 * a, sign * anchor.at[a]);
  } else if (anchor.point == kGround) {
    d.c += sign * anchor.at;
  } else {
    d.add(dim_ * anchor.point, sign);
  }
}

NaturalCoordinates::NaturalCoordinates(const Model& model)
    : model_(&model), nq_(model.nq()), nc_(model.nc()), dim_(model.dim) {
  m_diag_ = model.mass_diagonal();
  Q_ = Eigen::VectorXd::Zero(nq_);
  for (size_t i = 0; i < model.points.size(); ++i) Q_.segment(dim_ * i, dim_) = model.points[i].mass * model.gravity;
  for (size_t k = 0; k < model.bodies.size(); ++k)  // gravity acts at the centroid, i.e. on r_G only
    Q_.segment(model.body_offset(static_cast<int>(k)), 3) = model.bodies[k].mass * model.gravity;

  rows_.reserve(nc_);
  const Small zero = Small::Zero(dim_);
  for (const Rod& rod : model.rods) {
    Row r;
    r.d1.c = zero;
    add_anchor(r.d1, Anchor{rod.a, -1, rod.ground_a}, 1.0);
    add_anchor(r.d1, Anchor{rod.b, -1, Eigen::VectorXd()}, -1.0);
    r.same = true;
    r.s = 0.5 / rod.length;
    r.c = rod.length * rod.length;
    rows_.push_back(r);
  }
  for (const SphericalJoint& j : model.sphericals) {
    for (int c = 0; c < dim_; ++c) {
      Row r;
      r.d1.c = zero;
      add_anchor(r.d1, j.a, 1.0);
      add_anchor(r.d1, j.b, -1.0);
      r.d2.c = Small::Unit(dim_, c);
      rows_.push_back(r);
    }
  }
  for (size_t k = 0; k < model.bodies.size(); ++k) {
    const int o = model.body_offset(static_cast<int>(k));
    const double l = model.bodies[k].length_scale;
    auto axis = [&](int a) {
      Combo u;
      u.c = zero;
      u.add(o + 3 + 3 * a, 1.0);
      return u;
    };
    for (int a = 0; a < 3; ++a) rows_.push_back(Row{axis(a), Combo{}, true, 0.5 * l, 1.0});
    for (int a = 0; a < 3; ++a)
      for (int b = a + 1; b < 3; ++b) rows_.push_back(Row{axis(a), axis(b), false, l, 0.0});
  }
}

void NaturalCoordinates::Phi(const Eigen::Ref<const Eigen::VectorXd>& q, Eigen::Ref<Eigen::VectorXd> out) const {
  for (int k = 0; k < nc_; ++k) {
    const Row& r = rows_[k];
    const Small d1 = eval(r.d1, q);
    out[k] = r.s * ((r.same ? d1.squaredNorm() : d1.dot(eval(r.d2, q))) - r.c);
  }
}

void NaturalCoordinates::Phi_q(const Eigen::Ref<const Eigen::VectorXd>& q, Eigen::Ref<Eigen::MatrixXd> out) const {
  out.setZero();
  for (int k = 0; k < nc_; ++k) {
    const Row& r = rows_[k];
    const Small d1 = eval(r.d1, q);
    if (r.same) {  // s d(d.d)/dq = 2 s d^T J
      for (int t = 0; t < r.d1.n; ++t) out.row(k).segment(r.d1.off[t], dim_) += (2.0 * r.s * r.d1.w[t]) * d1.transpose();
      continue;
    }
    const Small d2 = eval(r.d2, q);  // s (d2^T J1 + d1^T J2)
    for (int t = 0; t < r.d1.n; ++t) out.row(k).segment(r.d1.off[t], dim_) += (r.s * r.d1.w[t]) * d2.transpose();
    for (int t = 0; t < r.d2.n; ++t) out.row(k).segment(r.d2.off[t], dim_) += (r.s * r.d2.w[t]) * d1.transpose();
  }
}

void NaturalCoordinates::Phi_q_times(const Eigen::Ref<const Eigen::VectorXd>& q,
                                     const Eigen::Ref<const Eigen::VectorXd>& v,
                                     Eigen::Ref<Eigen::VectorXd> out) const {
  for (int k = 0; k < nc_; ++k) {
    const Row& r = rows_[k];
    const Small d1 = eval(r.d1, q), v1 = rate(r.d1, v);
    out[k] = r.same ? 2.0 * r.s * d1.dot(v1) : r.s * (v1.dot(eval(r.d2, q)) + d1.dot(rate(r.d2, v)));
  }
}

void NaturalCoordinates::Phi_q_dot_v(const Eigen::Ref<const Eigen::VectorXd>& /*q*/,
                                     const Eigen::Ref<const Eigen::VectorXd>& v,
                                     Eigen::Ref<Eigen::VectorXd> out) const {
  // Phi'' = s (d1''.d2 + 2 d1'.d2' + d1.d2''): the velocity part is 2 s d1'.d2'.
  for (int k = 0; k < nc_; ++k) {
    const Row& r = rows_[k];
    const Small v1 = rate(r.d1, v);
    out[k] = 2.0 * r.s * (r.same ? v1.squaredNorm() : v1.dot(rate(r.d2, v)));
  }
}

void NaturalCoordinates::add_Phi_qq_times(const Eigen::Ref<const Eigen::VectorXd>& mu,
                                          Eigen::Ref<Eigen::MatrixXd> K) const {
  // d2Phi_k/dq2 = s (J1^T J2 + J2^T J1), each J a row of w_t I blocks.
  for (int k = 0; k < nc_; ++k) {
    const Row& r = rows_[k];
    const Combo& d2 = r.same ? r.d1 : r.d2;
    for (int t = 0; t < r.d1.n; ++t)
      for (int u = 0; u < d2.n; ++u) {
        const double x = mu[k] * r.s * r.d1.w[t] * d2.w[u];
        for (int c = 0; c < dim_; ++c) {
          K(r.d1.off[t] + c, d2.off[u] + c) += x;
          K(d2.off[u] + c, r.d1.off[t] + c) += x;
        }
      }
  }
}

Eigen::Vector3d NaturalCoordinates::angular_velocity(int body, const Eigen::Ref<const Eigen::VectorXd>& q,
                                                     const Eigen::Ref<const Eigen::VectorXd>& v) const {
  const int o = model_->body_offset(body);
  Eigen::Vector3d w = Eigen::Vector3d::Zero();
  for (int a = 0; a < 3; ++a)
    w += Eigen::Vector3d(q.segment<3>(o + 3 + 3 * a)).cross(Eigen::Vector3d(v.segment<3>(o + 3 + 3 * a)));
  return 0.5 * w;
}

double NaturalCoordinates::kinetic_energy(const Eigen::Ref<const Eigen::VectorXd>& v) const {
  return 0.5 * (m_diag_.array() * v.array().square()).sum();
}

double NaturalCoordinates::potential_energy(const Eigen::Ref<const Eigen::VectorXd>& q) const {
  // Uniform gravity: V = -sum m g.r = -Q.q
  return -Q_.dot(q);
}

}  // namespace mbs
