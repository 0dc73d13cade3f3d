// The model's constraints, mass and forces in natural (fully Cartesian) coordinates.
//
// This is the one place where energy and constraint violations are defined, so the harness scores
// every formulation the same way, and the natural-coordinate formulations reuse it.
//
// Every constraint row is a bilinear form of two affine combinations of coordinate blocks
// (core/element.hpp, ConstraintRow): each joint element contributes its rows, and each rigid body
// its rigidity rows, l (u_i.u_i - 1) / 2 and l u_i.u_j (l: the body's length scale), so that Phi is
// in metres and Phi_q v in metres per second throughout. Rows are ordered as Model::nc() says:
// joint elements in file order, then bodies.
//
// Applied forces: gravity (constant, Q0 = M g on point masses and centroids) plus the force
// elements' Q(q, v), with analytic Jacobians for implicit methods.
#pragma once

#include <Eigen/Dense>
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

  // Diagonal mass matrix M (kg) and the constant applied force Q0 = M g (N): the whole applied
  // force when the model has no force elements.
  const Eigen::VectorXd& M_diag() const { return m_diag_; }
  const Eigen::VectorXd& Q() const { return Q_; }
  // True when force elements make Q depend on q and v.
  bool has_force_elements() const { return !forces_.empty(); }
  // Q(q, v) = Q0 + the force elements' generalized forces.
  void Q(const Eigen::Ref<const Eigen::VectorXd>& q, const Eigen::Ref<const Eigen::VectorXd>& v,
         Eigen::Ref<Eigen::VectorXd> out) const;
  // dQ/dq and dQ/dv (nq x nq) are added to (gravity contributes nothing).
  void add_Q_jacobians(const Eigen::Ref<const Eigen::VectorXd>& q, const Eigen::Ref<const Eigen::VectorXd>& v,
                       Eigen::Ref<Eigen::MatrixXd> dQ_dq, Eigen::Ref<Eigen::MatrixXd> dQ_dv) const;

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

  // The rows themselves (scales for tolerances, owners for messages).
  const std::vector<ConstraintRow>& rows() const { return rows_; }
  // Which element owns row k (-1: a rigid body's rigidity rows, see row_body).
  int row_element(int k) const { return row_element_[k]; }
  int row_body(int k) const { return row_body_[k]; }

  // Angular velocity (rad/s, local frame; planar: (0, 0, w)) of rigid body k from its unit axes and
  // their rates: omega = 1/2 sum_i u_i x u_i' (exact for orthonormal axes).
  Eigen::Vector3d angular_velocity(int body, const Eigen::Ref<const Eigen::VectorXd>& q,
                                   const Eigen::Ref<const Eigen::VectorXd>& v) const;

  // Angular momentum (kg m^2/s, local frame; planar: (0, 0, H) about e1 x e2) about the point p
  // (local coordinates): sum over point masses and centroids of m (r - p) x r', plus sum_k J_k u_k x u_k'
  // over each body's axes (its spin: exact for orthonormal principal axes).
  Eigen::Vector3d angular_momentum(const Eigen::Ref<const Eigen::VectorXd>& q, const Eigen::Ref<const Eigen::VectorXd>& v,
                                   const Eigen::Ref<const Eigen::VectorXd>& p) const;
  double kinetic_energy(const Eigen::Ref<const Eigen::VectorXd>& v) const;    // J
  // J: gravity's (zero at the local origin) plus the force elements' potentials.
  double potential_energy(const Eigen::Ref<const Eigen::VectorXd>& q) const;
  double energy(const Eigen::Ref<const Eigen::VectorXd>& q, const Eigen::Ref<const Eigen::VectorXd>& v) const {
    return kinetic_energy(v) + potential_energy(q);
  }
  // The force elements (a periodic potential, a torque's -tau theta, is unwrapped by scoring), and
  // whether every one has a potential, so that the total energy is an invariant.
  const std::vector<const Element*>& force_elements() const { return forces_; }
  bool energy_is_invariant() const;

 private:
  const Model* model_;
  int nq_, nc_, dim_;
  Eigen::VectorXd m_diag_, Q_;
  std::vector<ConstraintRow> rows_;
  std::vector<int> row_element_, row_body_;
  std::vector<const Element*> forces_;
};

}  // namespace mbs
