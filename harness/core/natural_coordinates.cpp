#include "core/natural_coordinates.hpp"
#include "core/natural_coordinates_rows.hpp"

#include <fmt/format.h>

#include <stdexcept>

namespace mbs {

NaturalCoordinates::NaturalCoordinates(const Model& model)
    : model_(&model), nq_(model.nq()), nc_(model.nc()), dim_(model.dim) {
  m_diag_ = model.mass_diagonal();
  Q_ = Eigen::VectorXd::Zero(nq_);
  for (size_t i = 0; i < model.points.size(); ++i) Q_.segment(dim_ * i, dim_) = model.points[i].mass * model.gravity;
  for (size_t k = 0; k < model.bodies.size(); ++k)  // gravity acts at the centroid, i.e. on r_G only
    Q_.segment(model.body_offset(static_cast<int>(k)), dim_) = model.bodies[k].mass * model.gravity;

  rows_.reserve(nc_);
  for (size_t e = 0; e < model.elements.size(); ++e) {
    const Element& el = *model.elements[e];
    const size_t before = rows_.size();
    el.add_rows(model, rows_);
    if (static_cast<int>(rows_.size() - before) != el.row_count(dim_))
      throw std::logic_error(fmt::format("element {} ({}) wrote {} rows, not the {} it counts", el.name, el.kind(),
                                         rows_.size() - before, el.row_count(dim_)));
    row_element_.resize(rows_.size(), static_cast<int>(e));
    row_body_.resize(rows_.size(), -1);
    if (el.role() == ElementRole::kForce) forces_.push_back(&el);
  }
  for (size_t k = 0; k < model.bodies.size(); ++k) {
    const int o = model.body_offset(static_cast<int>(k));
    const double l = model.bodies[k].length_scale;
    auto axis = [&](int a) {
      Combo u = model.combo();
      u.add(o + dim_ + dim_ * a, 1.0);
      return u;
    };
    for (int a = 0; a < dim_; ++a) rows_.push_back(ConstraintRow{axis(a), Combo{}, true, 0.5 * l, 1.0, l});
    for (int a = 0; a < dim_; ++a)
      for (int b = a + 1; b < dim_; ++b) rows_.push_back(ConstraintRow{axis(a), axis(b), false, l, 0.0, l});
    row_element_.resize(rows_.size(), -1);
    row_body_.resize(rows_.size(), static_cast<int>(k));
  }
  if (static_cast<int>(rows_.size()) != nc_) throw std::logic_error("constraint rows do not match Model::nc()");
}

void NaturalCoordinates::Q(const Eigen::Ref<const Eigen::VectorXd>& q, const Eigen::Ref<const Eigen::VectorXd>& v,
                           Eigen::Ref<Eigen::VectorXd> out) const {
  out = Q_;
  for (const Element* f : forces_) f->add_force(*model_, q, v, out);
}

void NaturalCoordinates::add_Q_jacobians(const Eigen::Ref<const Eigen::VectorXd>& q,
                                         const Eigen::Ref<const Eigen::VectorXd>& v, Eigen::Ref<Eigen::MatrixXd> dQ_dq,
                                         Eigen::Ref<Eigen::MatrixXd> dQ_dv) const {
  for (const Element* f : forces_) f->add_force_jacobians(*model_, q, v, dQ_dq, dQ_dv);
}

bool NaturalCoordinates::energy_is_invariant() const {
  for (const Element* f : forces_)
    if (!f->has_potential()) return false;
  return true;
}

void NaturalCoordinates::Phi(const Eigen::Ref<const Eigen::VectorXd>& q, Eigen::Ref<Eigen::VectorXd> out) const {
  dim_ == 2 ? rows::phi<2>(rows_, q, out) : rows::phi<3>(rows_, q, out);
}

void NaturalCoordinates::Phi_q(const Eigen::Ref<const Eigen::VectorXd>& q, Eigen::Ref<Eigen::MatrixXd> out) const {
  dim_ == 2 ? rows::phi_q<2>(rows_, q, out) : rows::phi_q<3>(rows_, q, out);
}

void NaturalCoordinates::Phi_q_times(const Eigen::Ref<const Eigen::VectorXd>& q,
                                     const Eigen::Ref<const Eigen::VectorXd>& v,
                                     Eigen::Ref<Eigen::VectorXd> out) const {
  dim_ == 2 ? rows::phi_q_times<2>(rows_, q, v, out) : rows::phi_q_times<3>(rows_, q, v, out);
}

void NaturalCoordinates::Phi_q_dot_v(const Eigen::Ref<const Eigen::VectorXd>& /*q*/,
                                     const Eigen::Ref<const Eigen::VectorXd>& v,
                                     Eigen::Ref<Eigen::VectorXd> out) const {
  dim_ == 2 ? rows::phi_q_dot_v<2>(rows_, v, out) : rows::phi_q_dot_v<3>(rows_, v, out);
}

void NaturalCoordinates::add_Phi_qq_times(const Eigen::Ref<const Eigen::VectorXd>& mu,
                                          Eigen::Ref<Eigen::MatrixXd> K) const {
  dim_ == 2 ? rows::add_phi_qq_times<2>(rows_, mu, K) : rows::add_phi_qq_times<3>(rows_, mu, K);
}

Eigen::Vector3d NaturalCoordinates::angular_velocity(int body, const Eigen::Ref<const Eigen::VectorXd>& q,
                                                     const Eigen::Ref<const Eigen::VectorXd>& v) const {
  const int o = model_->body_offset(body);
  Eigen::Vector3d w = Eigen::Vector3d::Zero();
  for (int a = 0; a < dim_; ++a) {
    Eigen::Vector3d u = Eigen::Vector3d::Zero(), ud = Eigen::Vector3d::Zero();
    u.head(dim_) = q.segment(o + dim_ + dim_ * a, dim_);
    ud.head(dim_) = v.segment(o + dim_ + dim_ * a, dim_);
    w += u.cross(ud);
  }
  return 0.5 * w;
}

Eigen::Vector3d NaturalCoordinates::angular_momentum(const Eigen::Ref<const Eigen::VectorXd>& q,
                                                     const Eigen::Ref<const Eigen::VectorXd>& v,
                                                     const Eigen::Ref<const Eigen::VectorXd>& p) const {
  // Every coordinate block (dim entries, one mass each) is a position (a point mass, a centroid)
  // or a unit axis of a body, whose "mass" is its second moment J_k.
  const int n_points = static_cast<int>(model_->points.size());
  Eigen::Vector3d H = Eigen::Vector3d::Zero(), x = Eigen::Vector3d::Zero(), xd = Eigen::Vector3d::Zero();
  for (int b = 0; b < nq_ / dim_; ++b) {
    const bool position = b < n_points || (b - n_points) % (1 + dim_) == 0;
    x.head(dim_) = q.segment(dim_ * b, dim_);
    if (position) x.head(dim_) -= p;
    xd.head(dim_) = v.segment(dim_ * b, dim_);
    H += m_diag_[dim_ * b] * x.cross(xd);
  }
  return H;
}

double NaturalCoordinates::kinetic_energy(const Eigen::Ref<const Eigen::VectorXd>& v) const {
  return 0.5 * (m_diag_.array() * v.array().square()).sum();
}

double NaturalCoordinates::potential_energy(const Eigen::Ref<const Eigen::VectorXd>& q) const {
  // Uniform gravity: V = -sum m g.r = -Q0.q
  double V = -Q_.dot(q);
  for (const Element* f : forces_) V += f->potential_energy(*model_, q);
  return V;
}

}  // namespace mbs
