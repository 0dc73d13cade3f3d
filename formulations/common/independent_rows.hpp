// A maximal set of independent constraint rows of a model at its initial configuration, for the
// formulations that must drop redundant rows (e.g. two spherical joints on one hinge: 6 rows, rank
// 5) to keep their constraint matrices regular: a column-pivoted QR of Phi_q^T, pivots below 1e-10
// of the largest treated as zero. Setup only (allocates).
#pragma once

#include <Eigen/Dense>
#include <algorithm>
#include <vector>

#include "core/model.hpp"
#include "core/natural_coordinates.hpp"

namespace mbs {

// Indices of independent rows of Phi_q(q0), ascending.
inline std::vector<int> independent_rows(const NaturalCoordinates& nat, const Model& model) {
  std::vector<int> rows;
  if (nat.nc() == 0) return rows;
  Eigen::MatrixXd Phi_q(nat.nc(), nat.nq());
  nat.Phi_q(model.initial_q(), Phi_q);
  Eigen::ColPivHouseholderQR<Eigen::MatrixXd> qr(Phi_q.transpose());
  qr.setThreshold(1e-10);
  for (Eigen::Index k = 0; k < qr.rank(); ++k) rows.push_back(static_cast<int>(qr.colsPermutation().indices()[k]));
  std::sort(rows.begin(), rows.end());
  return rows;
}

}  // namespace mbs
