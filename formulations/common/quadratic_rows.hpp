// The constraint functions of a small model as explicit quadratics, for the natural-coordinate
// formulations' fixed-size paths (the pendulums: 2 to 4 coordinates).
//
// Every constraint row of NaturalCoordinates is a bilinear form of affine combinations of q
// (core/element.hpp, ConstraintRow), hence exactly quadratic:
//   Phi_k(q) = 1/2 q^T H_k q + b_k^T q + c_k,   Phi_q row k = (H_k q + b_k)^T,
//   d/dt(Phi_q) v = v^T H_k v,   d2Phi_k/dq2 = H_k (constant).
// For a handful of coordinates these cost a few fixed-size flops, where the generic row loop
// (core/natural_coordinates_rows.hpp) costs most of a step: on the planar pendulum it was half of
// a RATTLE stage and of an ALI3-P Newton iteration. H_k, b_k, c_k are read from NaturalCoordinates
// at setup (Phi(0), Phi_q(0) and Phi_q(e_j), exact since Phi_q is affine), and matches() checks them
// against the generic functions at a point.
//
// ConstraintFunctions<NQ, NC> is what a formulation templated on its sizes holds: the quadratics
// when both sizes are fixed, NaturalCoordinates' members otherwise, behind one interface.
#pragma once

#include <Eigen/Dense>
#include <array>
#include <cmath>
#include <type_traits>

#include "core/natural_coordinates.hpp"

namespace mbs {

template <int NQ, int NR>
class QuadraticRows {
 public:
  using Vec = Eigen::Matrix<double, NQ, 1>;
  using CVec = Eigen::Matrix<double, NR, 1>;
  using Jac = Eigen::Matrix<double, NR, NQ>;
  using Mat = Eigen::Matrix<double, NQ, NQ>;

  explicit QuadraticRows(const NaturalCoordinates& nat) {
    Vec q = Vec::Zero();
    nat.Phi(q, c_);
    nat.Phi_q(q, B_);
    Jac G;
    for (int j = 0; j < NQ; ++j) {
      q.setZero();
      q[j] = 1.0;
      nat.Phi_q(q, G);
      for (int k = 0; k < NR; ++k) H_[k].col(j) = (G.row(k) - B_.row(k)).transpose();
    }
  }

  // Phi and G = Phi_q at q.
  void evaluate(const Vec& q, CVec& Phi, Jac& G) const {
    for (int k = 0; k < NR; ++k) {
      const Vec g = H_[k] * q + B_.row(k).transpose();
      G.row(k) = g.transpose();
      // 1/2 q^T H q + b^T q + c = 1/2 (g + b)^T q + c.
      Phi[k] = 0.5 * (g + B_.row(k).transpose()).dot(q) + c_[k];
    }
  }
  void Phi(const Vec& q, CVec& out) const {
    for (int k = 0; k < NR; ++k) out[k] = 0.5 * (H_[k] * q + 2.0 * B_.row(k).transpose()).dot(q) + c_[k];
  }
  void Phi_q(const Vec& q, Jac& out) const {
    for (int k = 0; k < NR; ++k) out.row(k) = (H_[k] * q + B_.row(k).transpose()).transpose();
  }
  void Phi_q_times(const Vec& q, const Vec& v, CVec& out) const {
    for (int k = 0; k < NR; ++k) out[k] = (H_[k] * q + B_.row(k).transpose()).dot(v);
  }
  void Phi_q_dot_v(const Vec& v, CVec& out) const {
    for (int k = 0; k < NR; ++k) out[k] = v.dot(H_[k] * v);
  }
  // K += sum_k mu_k H_k.
  void add_Phi_qq_times(const CVec& mu, Mat& K) const {
    for (int k = 0; k < NR; ++k) K += mu[k] * H_[k];
  }

  // Whether the quadratics reproduce NaturalCoordinates at q (relative to the scale of its terms).
  bool matches(const NaturalCoordinates& nat, const Vec& q) const {
    CVec phi, phi_nat;
    Jac G, G_nat;
    evaluate(q, phi, G);
    nat.Phi(q, phi_nat);
    nat.Phi_q(q, G_nat);
    const double scale = 1.0 + q.cwiseAbs().maxCoeff() * q.cwiseAbs().maxCoeff();
    return (phi - phi_nat).cwiseAbs().maxCoeff() <= 1e-12 * scale && (G - G_nat).cwiseAbs().maxCoeff() <= 1e-12 * scale;
  }

 private:
  std::array<Mat, NR> H_;
  Jac B_;
  CVec c_;
};

// Phi, Phi_q, Phi_q v, d/dt(Phi_q) v and the geometric stiffness of every row of the model, with
// NaturalCoordinates' signatures: the quadratics above when NQ and NC are fixed, the generic
// functions otherwise. nat must outlive this.
template <int NQ, int NC>
class ConstraintFunctions {
 public:
  static constexpr bool kFixed = NQ != Eigen::Dynamic && NC != Eigen::Dynamic;
  explicit ConstraintFunctions(const NaturalCoordinates& nat) : nat_(&nat), quad_(nat) {}

  template <typename Q, typename Out>
  void Phi(const Q& q, Out&& out) const {
    if constexpr (kFixed) quad_.Phi(q, out);
    else nat_->Phi(q, out);
  }
  template <typename Q, typename Out>
  void Phi_q(const Q& q, Out&& out) const {
    if constexpr (kFixed) quad_.Phi_q(q, out);
    else nat_->Phi_q(q, out);
  }
  template <typename Q, typename V, typename Out>
  void Phi_q_times(const Q& q, const V& v, Out&& out) const {
    if constexpr (kFixed) quad_.Phi_q_times(q, v, out);
    else nat_->Phi_q_times(q, v, out);
  }
  template <typename Q, typename V, typename Out>
  void Phi_q_dot_v([[maybe_unused]] const Q& q, const V& v, Out&& out) const {
    if constexpr (kFixed) quad_.Phi_q_dot_v(v, out);
    else nat_->Phi_q_dot_v(q, v, out);
  }
  template <typename Mu, typename K>
  void add_Phi_qq_times(const Mu& mu, K&& Kout) const {
    if constexpr (kFixed) quad_.add_Phi_qq_times(mu, Kout);
    else nat_->add_Phi_qq_times(mu, Kout);
  }

 private:
  struct None {
    explicit None(const NaturalCoordinates&) {}
  };
  const NaturalCoordinates* nat_;
  std::conditional_t<kFixed, QuadraticRows<kFixed ? NQ : 1, kFixed ? NC : 1>, None> quad_;
};

}  // namespace mbs
