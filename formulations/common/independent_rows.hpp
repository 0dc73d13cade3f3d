// A maximal set of independent constraint rows of a model at its initial configuration, for the
// formulations that must drop redundant rows (e.g. two spherical joints on one hinge: 6 rows, rank
// 5) to keep their constraint matrices regular. Which rows: the first ones in the model's order
// (the problem file's), each kept unless it lies within kRankThreshold (relative to the largest row
// norm) of the span of the rows kept before it. Defined by the order alone, so the dense and the
// sparse paths keep the same rows, and a user reads off the file which copy of a redundant joint
// is dropped: the later one. Setup only (allocates).
//
// Dense: a Householder QR of Phi_q^T taken column by column in order, O(nq nc^2): minutes for a
// 5,000-link chain. A large model (the sparse path's size) whose rows are clearly independent
// keeps them all without it: the sparse LDLT of Phi_q Phi_q^T leaves every pivot at least
// kClearlyIndependent of its row's diagonal, far above the QR's threshold. Otherwise the dense QR
// decides where its work stays within kMaxUninterruptibleDenseWork (every problem of problems/),
// and above that SuiteSparseQR of Phi_q^T in the same fixed column order.
#pragma once

#include <fmt/format.h>

#include <Eigen/Dense>
#include <algorithm>
#include <numeric>
#include <vector>

#include "common/sparse_natural.hpp"
#include "core/cancellation.hpp"
#include "core/formulation.hpp"
#include "core/model.hpp"
#include "core/natural_coordinates.hpp"

namespace mbs {

inline constexpr double kClearlyIndependent = 1e-8;  // min pivot / diagonal of Phi_q Phi_q^T's LDLT
inline constexpr double kRankThreshold = 1e-10;      // a pivot below this share of the largest is zero

// The rows of J independent of the rows before them, ascending: SuiteSparseQR of J^T in J's row
// order (no fill-reducing permutation), a column whose remaining norm is at most `threshold` times
// J's largest row norm counted dependent (common/sparse_rank.cpp). Throws SolverError when
// SuiteSparseQR fails.
std::vector<int> sparse_independent_rows(const SparseJacobian& J, double threshold);

// The same rule on a dense J (nc x nq): Householder reflections of J^T built column by column in
// order, a column whose remaining norm is at most `threshold` times J's largest row norm skipped.
inline std::vector<int> dense_independent_rows(const Eigen::MatrixXd& J, double threshold) {
  std::vector<int> rows;
  Eigen::MatrixXd A = J.transpose();  // column j: row j of J
  const Eigen::Index n = A.rows(), m = A.cols();
  if (m == 0 || n == 0) return rows;
  const double tol = threshold * A.colwise().norm().maxCoeff();
  Eigen::VectorXd work(m);
  Eigen::Index k = 0;  // reflections so far: rows 0..k-1 of A are R's
  for (Eigen::Index j = 0; j < m && k < n; ++j) {
    // After k reflections, A(k:n, j) holds the part of row j outside the span of the kept rows.
    if (!(A.col(j).tail(n - k).norm() > tol)) continue;
    double tau = 0.0, beta = 0.0;
    A.col(j).tail(n - k).makeHouseholderInPlace(tau, beta);
    A(k, j) = beta;
    if (j + 1 < m)
      A.block(k, j + 1, n - k, m - j - 1).applyHouseholderOnTheLeft(A.col(j).tail(n - k - 1), tau, work.data());
    rows.push_back(static_cast<int>(j));
    ++k;
  }
  return rows;
}

// The rows of Phi_q(q0) independent of the rows before them, ascending. Throws Cancelled when the
// case's time budget ran out.
inline std::vector<int> independent_rows(const NaturalCoordinates& nat, const Model& model) {
  std::vector<int> rows;
  if (nat.nc() == 0) return rows;
  const double work = static_cast<double>(nat.nq()) * nat.nc() * nat.nc();  // nq nc^2 of the dense QR
  if (nat.nq() >= kSparseMinCoordinates) {
    SparseJacobian J(nat);
    J.evaluate(model.initial_q());
    SparseSchur gram(J);
    if (gram.assemble_and_factorize(J, Eigen::VectorXd::Ones(nat.nq()), 0.0, 0.0) &&
        gram.pivot_ratio() >= kClearlyIndependent) {
      rows.resize(nat.nc());
      std::iota(rows.begin(), rows.end(), 0);
      return rows;
    }
    throw_if_cancelled("set-up (independent constraint rows)");
    if (work > kMaxUninterruptibleDenseWork) return sparse_independent_rows(J, kRankThreshold);
  }
  throw_if_cancelled("set-up (independent constraint rows)");
  Eigen::MatrixXd Phi_q(nat.nc(), nat.nq());
  nat.Phi_q(model.initial_q(), Phi_q);
  return dense_independent_rows(Phi_q, kRankThreshold);
}

}  // namespace mbs
