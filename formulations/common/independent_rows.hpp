// A maximal set of independent constraint rows of a model at its initial configuration, for the
// formulations that must drop redundant rows (e.g. two spherical joints on one hinge: 6 rows, rank
// 5) to keep their constraint matrices regular: a column-pivoted QR of Phi_q^T, pivots below 1e-10
// of the largest treated as zero. Setup only (allocates).
//
// The dense QR costs O(nq nc^2): minutes for a 5,000-link chain. A large model (the sparse path's
// size) whose rows are clearly independent keeps them all without it: the sparse LDLT of
// Phi_q Phi_q^T leaves every pivot at least kClearlyIndependent of its row's diagonal, far above
// the QR's threshold. Otherwise the dense QR decides, where its work stays within
// kMaxUninterruptibleDenseWork (every problem of problems/, whose kept rows it chose), and above
// that a sparse rank-revealing QR of Phi_q^T (SuiteSparseQR, with the same relative threshold).
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

// Indices of independent rows of J, ascending: SuiteSparseQR of J^T, a column whose remaining norm
// falls below `threshold` times J's largest row norm counted dependent (common/sparse_rank.cpp).
// Throws SolverError when SuiteSparseQR fails.
std::vector<int> sparse_independent_rows(const SparseJacobian& J, double threshold);

// Indices of independent rows of Phi_q(q0), ascending. Throws Cancelled when the case's time budget
// ran out.
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
  Eigen::ColPivHouseholderQR<Eigen::MatrixXd> qr(Phi_q.transpose());
  qr.setThreshold(kRankThreshold);
  for (Eigen::Index k = 0; k < qr.rank(); ++k) rows.push_back(static_cast<int>(qr.colsPermutation().indices()[k]));
  std::sort(rows.begin(), rows.end());
  return rows;
}

}  // namespace mbs
