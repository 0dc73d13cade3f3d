#include "core/natural_coordinates.hpp"

namespace mbs {

NaturalCoordinates::NaturalCoordinates(const Model& model)
    : model_(&model), nq_(model.nq()), nc_(model.nc()), dim_(model.dim) {
  m_diag_ = model.mass_diagonal();
  Q_.resize(nq_);
  for (size_t i = 0; i < model.points.size(); ++i)
    Q_.segment(dim_ * i, dim_) = model.points[i].mass * model.gravity;
  ground_ = Eigen::MatrixXd::Zero(dim_, nc_);
  rods_.reserve(nc_);
  for (int k = 0; k < nc_; ++k) {
    const Rod& rod = model.rods[k];
    RodTerm rt{rod.a >= 0 ? dim_ * rod.a : -1, dim_ * rod.b, 1.0 / rod.length, rod.length};
    if (rod.a == kGround) ground_.col(k) = rod.ground_a;
    rods_.push_back(rt);
  }
}

void NaturalCoordinates::Phi(const Eigen::Ref<const Eigen::VectorXd>& q, Eigen::Ref<Eigen::VectorXd> out) const {
  for (int k = 0; k < nc_; ++k) {
    const auto d = rod_vector(q, k);
    out[k] = 0.5 * (d.squaredNorm() - rods_[k].length * rods_[k].length) * rods_[k].inv_length;
  }
}

void NaturalCoordinates::Phi_q(const Eigen::Ref<const Eigen::VectorXd>& q, Eigen::Ref<Eigen::MatrixXd> out) const {
  out.setZero();
  for (int k = 0; k < nc_; ++k) {
    const auto d = rod_vector(q, k);
    const RodTerm& rt = rods_[k];
    if (rt.a >= 0) out.row(k).segment(rt.a, dim_) = rt.inv_length * d.transpose();
    out.row(k).segment(rt.b, dim_) = -rt.inv_length * d.transpose();
  }
}

void NaturalCoordinates::Phi_q_times(const Eigen::Ref<const Eigen::VectorXd>& q,
                                     const Eigen::Ref<const Eigen::VectorXd>& v,
                                     Eigen::Ref<Eigen::VectorXd> out) const {
  for (int k = 0; k < nc_; ++k) {
    const auto d = rod_vector(q, k);
    const auto dv = rod_vector_rate(v, k);
    out[k] = rods_[k].inv_length * d.dot(dv);
  }
}

void NaturalCoordinates::Phi_q_dot_v(const Eigen::Ref<const Eigen::VectorXd>& /*q*/,
                                     const Eigen::Ref<const Eigen::VectorXd>& v,
                                     Eigen::Ref<Eigen::VectorXd> out) const {
  // d/dt(d^T/L) v = |d_dot|^2 / L for a rod.
  for (int k = 0; k < nc_; ++k) out[k] = rods_[k].inv_length * rod_vector_rate(v, k).squaredNorm();
}

void NaturalCoordinates::add_Phi_qq_times(const Eigen::Ref<const Eigen::VectorXd>& mu,
                                          Eigen::Ref<Eigen::MatrixXd> K) const {
  // d2Phi_k/dq2 = (1/L) [I -I; -I I] on the rod's two ends (only the free ends appear).
  for (int k = 0; k < nc_; ++k) {
    const RodTerm& rt = rods_[k];
    const double s = mu[k] * rt.inv_length;
    for (int c = 0; c < dim_; ++c) {
      K(rt.b + c, rt.b + c) += s;
      if (rt.a >= 0) {
        K(rt.a + c, rt.a + c) += s;
        K(rt.a + c, rt.b + c) -= s;
        K(rt.b + c, rt.a + c) -= s;
      }
    }
  }
}

double NaturalCoordinates::kinetic_energy(const Eigen::Ref<const Eigen::VectorXd>& v) const {
  return 0.5 * (m_diag_.array() * v.array().square()).sum();
}

double NaturalCoordinates::potential_energy(const Eigen::Ref<const Eigen::VectorXd>& q) const {
  // Uniform gravity: V = -sum m g.r = -Q.q
  return -Q_.dot(q);
}

}  // namespace mbs
