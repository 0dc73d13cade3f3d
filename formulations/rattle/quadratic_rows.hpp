// The constraint rows of a small model as explicit quadratics, Phi_k(q) = 1/2 q^T H_k q + b_k^T q + c_k,
// for rattle's fixed-size path: every row of NaturalCoordinates is a bilinear form of affine
// combinations of q (core/element.hpp, ConstraintRow), hence exactly quadratic, and for a handful of
// coordinates Phi and Phi_q from H_k, b_k, c_k cost a few flops, where the generic row loop costs most
// of a RATTLE stage (measured: Phi and Phi_q were ~50 % of the 6th-order composition's time on the
// planar pendulum). H_k, b_k, c_k are read from NaturalCoordinates at setup (Phi(0), Phi_q(0),
// Phi_q(e_j)), and matches() checks the model against it at two points before it is used.
#pragma once

#include <Eigen/Dense>
#include <array>
#include <cmath>

#include "core/natural_coordinates.hpp"

namespace mbs::rattle {

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

}  // namespace mbs::rattle
