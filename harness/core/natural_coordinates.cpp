#include "core/natural_coordinates.hpp"

#include <fmt/format.h>

#include <cstring>
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

// The constraint functions below run in every formulation's hot loop: each dispatches once on the
// dimension to a fixed-size body (2 or 3 components a combination), which the compiler unrolls.
namespace {

template <int D>
using Vd = Eigen::Matrix<double, D, 1>;

template <int D, typename Vec>
Vd<D> eval(const Combo& d, const Vec& q) {
  Vd<D> x = d.c;
  for (int t = 0; t < d.n; ++t) x.noalias() += d.w[t] * q.template segment<D>(d.off[t]);
  return x;
}
template <int D, typename Vec>
Vd<D> rate(const Combo& d, const Vec& v) {
  Vd<D> x = Vd<D>::Zero();
  for (int t = 0; t < d.n; ++t) x.noalias() += d.w[t] * v.template segment<D>(d.off[t]);
  return x;
}

template <int D>
void phi(const std::vector<ConstraintRow>& rows, const Eigen::Ref<const Eigen::VectorXd>& q, Eigen::Ref<Eigen::VectorXd> out) {
  const int nc = static_cast<int>(rows.size());
  for (int k = 0; k < nc; ++k) {
    const ConstraintRow& r = rows[k];
    const Vd<D> d1 = eval<D>(r.d1, q);
    out[k] = r.s * ((r.same ? d1.squaredNorm() : d1.dot(eval<D>(r.d2, q))) - r.c);
  }
}

// out = 0 in one memset when contiguous, not one per column (what setZero() on a strided Ref makes of
// it): for the small Jacobians that dominate, the calls cost more than the stores.
inline void zero(Eigen::Ref<Eigen::MatrixXd>& out) {
  if (out.outerStride() == out.rows()) {
    std::memset(out.data(), 0, sizeof(double) * static_cast<size_t>(out.size()));
    return;
  }
  out.setZero();
}

template <int D>
void phi_q(const std::vector<ConstraintRow>& rows, const Eigen::Ref<const Eigen::VectorXd>& q, Eigen::Ref<Eigen::MatrixXd> out) {
  zero(out);
  const int nc = static_cast<int>(rows.size());
  for (int k = 0; k < nc; ++k) {
    const ConstraintRow& r = rows[k];
    const Vd<D> d1 = eval<D>(r.d1, q);
    if (r.same) {  // s d(d.d)/dq = 2 s d^T J
      for (int t = 0; t < r.d1.n; ++t) out.row(k).template segment<D>(r.d1.off[t]) += (2.0 * r.s * r.d1.w[t]) * d1.transpose();
      continue;
    }
    const Vd<D> d2 = eval<D>(r.d2, q);  // s (d2^T J1 + d1^T J2)
    for (int t = 0; t < r.d1.n; ++t) out.row(k).template segment<D>(r.d1.off[t]) += (r.s * r.d1.w[t]) * d2.transpose();
    for (int t = 0; t < r.d2.n; ++t) out.row(k).template segment<D>(r.d2.off[t]) += (r.s * r.d2.w[t]) * d1.transpose();
  }
}

template <int D>
void phi_q_times(const std::vector<ConstraintRow>& rows, const Eigen::Ref<const Eigen::VectorXd>& q,
                 const Eigen::Ref<const Eigen::VectorXd>& v, Eigen::Ref<Eigen::VectorXd> out) {
  const int nc = static_cast<int>(rows.size());
  for (int k = 0; k < nc; ++k) {
    const ConstraintRow& r = rows[k];
    const Vd<D> d1 = eval<D>(r.d1, q), v1 = rate<D>(r.d1, v);
    out[k] = r.same ? 2.0 * r.s * d1.dot(v1) : r.s * (v1.dot(eval<D>(r.d2, q)) + d1.dot(rate<D>(r.d2, v)));
  }
}

template <int D>
void phi_q_dot_v(const std::vector<ConstraintRow>& rows, const Eigen::Ref<const Eigen::VectorXd>& v,
                 Eigen::Ref<Eigen::VectorXd> out) {
  // Phi'' = s (d1''.d2 + 2 d1'.d2' + d1.d2''): the velocity part is 2 s d1'.d2'.
  const int nc = static_cast<int>(rows.size());
  for (int k = 0; k < nc; ++k) {
    const ConstraintRow& r = rows[k];
    const Vd<D> v1 = rate<D>(r.d1, v);
    out[k] = 2.0 * r.s * (r.same ? v1.squaredNorm() : v1.dot(rate<D>(r.d2, v)));
  }
}

template <int D>
void add_phi_qq_times(const std::vector<ConstraintRow>& rows, const Eigen::Ref<const Eigen::VectorXd>& mu,
                      Eigen::Ref<Eigen::MatrixXd> K) {
  // d2Phi_k/dq2 = s (J1^T J2 + J2^T J1), each J a row of w_t I blocks.
  const int nc = static_cast<int>(rows.size());
  for (int k = 0; k < nc; ++k) {
    const ConstraintRow& r = rows[k];
    const Combo& d2 = r.same ? r.d1 : r.d2;
    for (int t = 0; t < r.d1.n; ++t)
      for (int u = 0; u < d2.n; ++u) {
        const double x = mu[k] * r.s * r.d1.w[t] * d2.w[u];
        for (int c = 0; c < D; ++c) {
          K(r.d1.off[t] + c, d2.off[u] + c) += x;
          K(d2.off[u] + c, r.d1.off[t] + c) += x;
        }
      }
  }
}

}  // namespace

void NaturalCoordinates::Phi(const Eigen::Ref<const Eigen::VectorXd>& q, Eigen::Ref<Eigen::VectorXd> out) const {
  dim_ == 2 ? phi<2>(rows_, q, out) : phi<3>(rows_, q, out);
}

void NaturalCoordinates::Phi_q(const Eigen::Ref<const Eigen::VectorXd>& q, Eigen::Ref<Eigen::MatrixXd> out) const {
  dim_ == 2 ? phi_q<2>(rows_, q, out) : phi_q<3>(rows_, q, out);
}

void NaturalCoordinates::Phi_q_times(const Eigen::Ref<const Eigen::VectorXd>& q,
                                     const Eigen::Ref<const Eigen::VectorXd>& v,
                                     Eigen::Ref<Eigen::VectorXd> out) const {
  dim_ == 2 ? phi_q_times<2>(rows_, q, v, out) : phi_q_times<3>(rows_, q, v, out);
}

void NaturalCoordinates::Phi_q_dot_v(const Eigen::Ref<const Eigen::VectorXd>& /*q*/,
                                     const Eigen::Ref<const Eigen::VectorXd>& v,
                                     Eigen::Ref<Eigen::VectorXd> out) const {
  dim_ == 2 ? phi_q_dot_v<2>(rows_, v, out) : phi_q_dot_v<3>(rows_, v, out);
}

void NaturalCoordinates::add_Phi_qq_times(const Eigen::Ref<const Eigen::VectorXd>& mu,
                                          Eigen::Ref<Eigen::MatrixXd> K) const {
  dim_ == 2 ? add_phi_qq_times<2>(rows_, mu, K) : add_phi_qq_times<3>(rows_, mu, K);
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
