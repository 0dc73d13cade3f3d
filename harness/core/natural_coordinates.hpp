// The model's constraints, mass and forces in natural (fully Cartesian) coordinates.
//
// This is the one place where energy and constraint violations are defined, so the harness scores
// every formulation the same way, and the natural-coordinate formulations reuse it.
//
// Every constraint row is a bilinear form of two affine combinations of coordinate blocks,
//   Phi_k = s_k (d1 . d2 - c_k),   d = c + sum_t w_t q[off_t .. off_t + dim),
// which covers, with Phi in metres and Phi_q v in metres per second throughout:
//   rod between anchors A, B, d = r_A - r_B:   (d.d - L^2) / (2 L)   (= |d| - L to first order)
//   spherical joint, component c:              e_c . (r_A - r_B)     (linear)
//   rigid body, unit axis u_i:                 l (u_i.u_i - 1) / 2   (l: the body's length scale)
//   rigid body, orthogonal axes u_i, u_j:      l u_i.u_j
// Rows are ordered as Model::nc() says: rods, spherical joints, bodies.
//
#pragma once

#include <Eigen/Dense>
#include <array>
#include <vector>

#include "core/model.hpp"

namespace mbs {

class NaturalCoordinates {
 public:
  explicit NaturalCoordinates(const Model& model);

  int nq() const { return nq_; }
  int nc() const { return nc_; }
  int dim() const { return dim_; }
  const Model& model() const { return *model_; }

  // Diagonal mass matrix M (kg) and the constant applied force Q = M g (N).
  const Eigen::VectorXd& M_diag() const { return m_diag_; }
  const Eigen::VectorXd& Q() const { return Q_; }

  // Phi(q), size nc.
  void Phi(const Eigen::Ref<const Eigen::VectorXd>& q, Eigen::Ref<Eigen::VectorXd> out) const;
  // Phi_q(q), nc x nq, dense; every entry is written.
  void Phi_q(const Eigen::Ref<const Eigen::VectorXd>& q, Eigen::Ref<Eigen::MatrixXd> out) const;
  // Phi_q(q) v, size nc (velocity-level constraint).
  void Phi_q_times(const Eigen::Ref<const Eigen::VectorXd>& q, const Eigen::Ref<const Eigen::VectorXd>& v,
                   Eigen::Ref<Eigen::VectorXd> out) const;
  // d/dt(Phi_q) v, size nc: the velocity-dependent part of the acceleration-level constraint
  // Phi_q a + d/dt(Phi_q) v = 0.
  void Phi_q_dot_v(const Eigen::Ref<const Eigen::VectorXd>& q, const Eigen::Ref<const Eigen::VectorXd>& v,
                   Eigen::Ref<Eigen::VectorXd> out) const;
  // K += sum_k mu_k * d2(Phi_k)/dq2 (nq x nq): the geometric stiffness of constraint forces Phi_q^T mu.
  void add_Phi_qq_times(const Eigen::Ref<const Eigen::VectorXd>& mu, Eigen::Ref<Eigen::MatrixXd> K) const;

  // Angular velocity (rad/s, local frame) of rigid body k from its unit axes and their rates:
  // omega = 1/2 sum_i u_i x u_i' (exact for orthonormal axes).
  Eigen::Vector3d angular_velocity(int body, const Eigen::Ref<const Eigen::VectorXd>& q,
                                   const Eigen::Ref<const Eigen::VectorXd>& v) const;

  double kinetic_energy(const Eigen::Ref<const Eigen::VectorXd>& v) const;    // J
  double potential_energy(const Eigen::Ref<const Eigen::VectorXd>& q) const;  // J, zero at local origin
  double energy(const Eigen::Ref<const Eigen::VectorXd>& q, const Eigen::Ref<const Eigen::VectorXd>& v) const {
    return kinetic_energy(v) + potential_energy(q);
  }

 private:
  using Small = Eigen::Matrix<double, Eigen::Dynamic, 1, 0, 3, 1>;  // dim <= 3, never allocates
  // d = c + sum_t w_t q.segment(off_t, dim): at most two anchors of 4 blocks each.
  struct Combo {
    Small c;
    int n = 0;
    std::array<int, 8> off{};
    std::array<double, 8> w{};
    void add(int offset, double weight) { off[n] = offset, w[n] = weight, ++n; }
  };
  struct Row {
    Combo d1, d2;
    bool same = false;  // d2 == d1 (rods, unit axes): evaluated once
    double s = 1.0, c = 0.0;
  };
  const Model* model_;
  int nq_, nc_, dim_;
  Eigen::VectorXd m_diag_, Q_;
  std::vector<Row> rows_;

  // r_A - r_B (sign +1) or r_A alone: appends anchor A's terms to d.
  void add_anchor(Combo& d, const Anchor& anchor, double sign) const;

  template <typename Vec>
  Small eval(const Combo& d, const Vec& q) const {
    Small x = d.c;
    for (int t = 0; t < d.n; ++t) x.noalias() += d.w[t] * q.segment(d.off[t], dim_);
    return x;
  }
  // Rate of d: the constant part does not move.
  template <typename Vec>
  Small rate(const Combo& d, const Vec& v) const {
    Small x = Small::Zero(dim_);
    for (int t = 0; t < d.n; ++t) x.noalias() += d.w[t] * v.segment(d.off[t], dim_);
    return x;
  }
};

}  // namespace mbs
