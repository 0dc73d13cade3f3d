// The linear-solver seam of the natural-coordinate formulations, in the manner of SUNDIALS'
// SUNLinearSolver: a method's iteration matrix is dense or sparse by a choice made once, when its
// simulator is instantiated (make_simulator, from common/sparse_natural.hpp's sparse_path()), and
// the method then only sees
//   matrix()      what it assembles into: a dense Eigen matrix, or the sparse assembler (its
//                 fixed pattern and slot maps: SparseTangent, SparseKkt, SparseSchur) with its own
//                 primitives;
//   factor()      false on failure (LLT: not positive definite; sparse: a zero pivot);
//   solve(b, x)   x = A^-1 b with the last factorization.
// Dense and sparse are types, not a flag: no branch per call, and a method overloads its assembly
// on the matrix type where the two differ. Fixed sizes up to 4 keep Eigen's closed-form inverse,
// which at these sizes costs a fraction of a pivoting factorization; the method's Newton test
// guards its accuracy (its relative error is ~cond(A) eps).
//
// The constraint Jacobians beside them follow the same choice: a dense Eigen matrix or a
// SparseJacobian, evaluated by ConstraintFunctions::Phi_q (common/quadratic_rows.hpp), multiplied
// through matrix_of() with the same Eigen expressions.
#pragma once

#include <Eigen/Dense>
#include <memory>
#include <type_traits>
#include <utility>

#include "common/quadratic_rows.hpp"
#include "common/sparse_natural.hpp"
#include "core/natural_coordinates.hpp"

namespace mbs {

// |x|_inf, 0 for an empty vector: the size of a correction, as the Newton-type iterations of the
// implicit methods test it.
template <typename V>
double inf_norm(const V& x) {
  return x.size() == 0 ? 0.0 : x.cwiseAbs().maxCoeff();
}

enum class Factorization {
  kLu,    // unsymmetric (partial pivoting)
  kLdlt,  // symmetric (pivoted LDL^T)
  kLlt,   // symmetric positive definite
};

// A dense square system of size N (Eigen::Dynamic: n at construction).
template <int N, Factorization F>
class DenseSolver {
 public:
  static constexpr bool kSparse = false;
  static constexpr bool kExplicitInverse = N != Eigen::Dynamic && N <= 4;
  using Matrix = Eigen::Matrix<double, N, N>;
  using Decomposition = std::conditional_t<F == Factorization::kLu, Eigen::PartialPivLU<Matrix>,
                                           std::conditional_t<F == Factorization::kLdlt, Eigen::LDLT<Matrix>, Eigen::LLT<Matrix>>>;

  // The sparse pattern's arguments (SparseSolver's) are ignored: a simulator constructs either kind
  // with the same expression.
  template <typename... Pattern>
  explicit DenseSolver(int n, const Pattern&... /*pattern*/) : A_(n, n), decomposition_(n) {}

  Matrix& matrix() { return A_; }
  const Matrix& matrix() const { return A_; }
  bool factor() {
    if constexpr (kExplicitInverse) {
      A_inv_ = A_.inverse();
      return true;
    } else {
      decomposition_.compute(A_);
      // The pivoting ones go on whatever they meet (a singular matrix shows in Newton's test).
      if constexpr (F == Factorization::kLlt) return decomposition_.info() == Eigen::Success;
      else return true;
    }
  }
  template <typename B, typename X>
  void solve(const B& b, X& x) const {
    if constexpr (kExplicitInverse) x.noalias() = A_inv_ * b;
    else x.noalias() = decomposition_.solve(b);
  }

 private:
  struct None {
    None() = default;
    explicit None(int) {}
  };
  Matrix A_;
  std::conditional_t<kExplicitInverse, None, Decomposition> decomposition_;
  std::conditional_t<kExplicitInverse, Matrix, None> A_inv_;
};

// A sparse system on a fixed pattern (SparseTangent, SparseKkt, SparseSchur of sparse_natural.hpp):
// constructed from its pattern's arguments, assembled through its own primitives.
template <typename System>
class SparseSolver {
 public:
  static constexpr bool kSparse = true;
  using Matrix = System;

  template <typename... Pattern>
  explicit SparseSolver(int /*n*/, const Pattern&... pattern) : system_(std::make_unique<System>(pattern...)) {}

  System& matrix() { return *system_; }
  const System& matrix() const { return *system_; }
  bool factor() { return system_->factorize(); }
  template <typename B, typename X>
  void solve(const B& b, X& x) const {
    system_->solve(b, x);
  }

 private:
  std::unique_ptr<System> system_;  // SparseSystem's KLU handle does not move
};

// A Jacobian of every constraint row: Eigen matrix J (dense path) or SparseJacobian.
template <typename J>
J make_jacobian(const NaturalCoordinates& nat) {
  if constexpr (std::is_same_v<J, SparseJacobian>) return J(nat);
  else return J(nat.nc(), nat.nq());
}
// J = Phi_q at q: the quadratics (fixed sizes) or NaturalCoordinates into a dense J, or the
// SparseJacobian's values on its pattern.
template <int NQ, int NC, typename Q, typename J>
void evaluate_jacobian(const ConstraintFunctions<NQ, NC>& cf, const Q& q, J& out) {
  cf.Phi_q(q, out);
}
template <int NQ, int NC, typename Q>
void evaluate_jacobian(const ConstraintFunctions<NQ, NC>& /*cf*/, const Q& q, SparseJacobian& out) {
  out.evaluate(q);
}
// The matrix to multiply with: the dense Jacobian itself, or the SparseJacobian's compressed rows.
template <typename D>
const D& matrix_of(const Eigen::MatrixBase<D>& J) {
  return J.derived();
}
inline const SparseJacobian::Matrix& matrix_of(const SparseJacobian& J) { return J.matrix(); }

}  // namespace mbs
