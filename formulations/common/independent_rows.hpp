// A maximal set of independent constraint rows of a model at its initial configuration, for the
// formulations that must drop redundant rows (e.g. two spherical joints on one hinge: 6 rows, rank
// 5) to keep their constraint matrices regular: a column-pivoted QR of Phi_q^T, pivots below 1e-10
// of the largest treated as zero. Setup only (allocates).
//
// The dense QR costs O(nq nc^2): minutes for a 5,000-link chain. A large model (the sparse path's
// size) whose rows are clearly independent keeps them all without it: the sparse LDLT of
// Phi_q Phi_q^T leaves every pivot at least kClearlyIndependent of its row's diagonal, far above
// the QR's threshold. Otherwise the dense QR decides, and a model too large for it is refused.
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

// Indices of independent rows of Phi_q(q0), ascending. Throws SolverError for a model too large
// for the dense test, Cancelled when the case's time budget ran out.
inline std::vector<int> independent_rows(const NaturalCoordinates& nat, const Model& model) {
  std::vector<int> rows;
  if (nat.nc() == 0) return rows;
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
  }
  const double work = static_cast<double>(nat.nq()) * nat.nc() * nat.nc();
  if (work > kMaxUninterruptibleDenseWork)  // nq nc^2 of the dense QR
    throw SolverError(fmt::format("{} constraint rows on {} coordinates are not clearly independent, and the dense rank "
                                  "test that would choose among them (O(nq nc^2) = {:.1e}) is too large: refused",
                                  nat.nc(), nat.nq(), work));
  throw_if_cancelled("set-up (independent constraint rows)");
  Eigen::MatrixXd Phi_q(nat.nc(), nat.nq());
  nat.Phi_q(model.initial_q(), Phi_q);
  Eigen::ColPivHouseholderQR<Eigen::MatrixXd> qr(Phi_q.transpose());
  qr.setThreshold(1e-10);
  for (Eigen::Index k = 0; k < qr.rank(); ++k) rows.push_back(static_cast<int>(qr.colsPermutation().indices()[k]));
  std::sort(rows.begin(), rows.end());
  return rows;
}

}  // namespace mbs
