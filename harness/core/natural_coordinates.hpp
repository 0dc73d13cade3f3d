// The model's constraints, mass and forces in natural (fully Cartesian) coordinates.
//
// This is the one place where energy and constraint violations are defined, so the harness scores
// every formulation the same way, and the natural-coordinate formulations reuse it.
//
// Constraint form, per rod k between points i and j with d = r_i - r_j:
//   Phi_k = (d.d - L^2) / (2 L)
// which equals |d| - L to first order, so position violations are in metres and
// velocity violations (Phi_q v) in metres per second, whatever the formulation.
//
// All evaluation functions write into caller-owned storage and allocate nothing.
#pragma once

#include <Eigen/Dense>

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

  double kinetic_energy(const Eigen::Ref<const Eigen::VectorXd>& v) const;    // J
  double potential_energy(const Eigen::Ref<const Eigen::VectorXd>& q) const;  // J, zero at local origin
  double energy(const Eigen::Ref<const Eigen::VectorXd>& q, const Eigen::Ref<const Eigen::VectorXd>& v) const {
    return kinetic_energy(v) + potential_energy(q);
  }

 private:
  struct RodTerm {
    int a, b;               // coordinate offsets of the two ends (-1 for a ground end)
    double inv_length;      // 1/L
    double length;          // L
  };
  const Model* model_;
  int nq_, nc_, dim_;
  Eigen::VectorXd m_diag_, Q_;
  std::vector<RodTerm> rods_;
  Eigen::MatrixXd ground_;  // dim x nc, ground end of each rod (unused columns are zero)

  using Small = Eigen::Matrix<double, Eigen::Dynamic, 1, 0, 3, 1>;  // dim <= 3, never allocates
  // d = r_a - r_b for rod k.
  template <typename Vec>
  Small rod_vector(const Vec& q, int k) const {
    const RodTerm& rt = rods_[k];
    Small d = rt.a >= 0 ? Small(q.segment(rt.a, dim_)) : Small(ground_.col(k));
    d -= q.segment(rt.b, dim_);
    return d;
  }
  // d_dot = v_a - v_b for rod k (a ground end does not move).
  template <typename Vec>
  Small rod_vector_rate(const Vec& v, int k) const {
    const RodTerm& rt = rods_[k];
    Small d = -v.segment(rt.b, dim_);
    if (rt.a >= 0) d += v.segment(rt.a, dim_);
    return d;
  }
};

}  // namespace mbs
