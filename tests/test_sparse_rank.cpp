// The sparse rank test (SuiteSparseQR of Phi_q^T, common/sparse_rank.cpp) against the dense QR
// that decides for every problem of problems/: both keep the first rows in the model's order that
// are independent of the rows before them, so the same rows, on bricard's and pinned_bar's
// redundancies, on a chain with duplicated rods and on every problem file; the kept rows span every
// row of Phi_q.
#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <filesystem>
#include <memory>
#include <vector>

#include "common/independent_rows.hpp"
#include "core/natural_coordinates.hpp"
#include "problem/problem.hpp"
#include "support/models.hpp"

namespace mbs {
namespace {

std::vector<int> sparse_rows(const NaturalCoordinates& nat, const Model& model) {
  SparseJacobian J(nat);
  J.evaluate(model.initial_q());
  return sparse_independent_rows(J, kRankThreshold);
}

// The largest distance of a row of Phi_q from the span of the rows `kept`, relative to the row's norm.
double largest_residual_share(const Eigen::MatrixXd& Phi_q, const std::vector<int>& kept) {
  Eigen::MatrixXd K(static_cast<Eigen::Index>(kept.size()), Phi_q.cols());
  for (size_t k = 0; k < kept.size(); ++k) K.row(static_cast<Eigen::Index>(k)) = Phi_q.row(kept[k]);
  const Eigen::ColPivHouseholderQR<Eigen::MatrixXd> qr(K.transpose());
  double worst = 0.0;
  for (Eigen::Index i = 0; i < Phi_q.rows(); ++i) {
    const Eigen::VectorXd r = Phi_q.row(i).transpose();
    const Eigen::VectorXd y = qr.solve(r);
    worst = std::max(worst, (K.transpose() * y - r).norm() / r.norm());
  }
  return worst;
}

// Small models: independent_rows() takes the dense QR (its work is far below the limit). Both keep
// the same `expected_rank` rows, and they span every row of Phi_q to round-off.
std::vector<int> expect_same_rows_and_span(const Model& model, int expected_rank) {
  const NaturalCoordinates nat(model);
  const std::vector<int> dense = independent_rows(nat, model);
  const std::vector<int> sparse = sparse_rows(nat, model);
  EXPECT_EQ(static_cast<int>(dense.size()), expected_rank);
  EXPECT_EQ(sparse, dense);
  Eigen::MatrixXd Phi_q(nat.nc(), nat.nq());
  nat.Phi_q(model.initial_q(), Phi_q);
  EXPECT_LT(largest_residual_share(Phi_q, dense), 1e-12);
  return dense;
}

// The rule on a matrix whose answer is read off: row 2 = row 0 + row 1 and row 4 = 2 row 3 are the
// later copies, dropped; row 5 differs from row 3 by 1e-12 of its norm (a copy within the threshold),
// row 6 by 1e-6 (kept).
TEST(SparseRank, KeepsTheFirstIndependentRowsInOrder) {
  Eigen::MatrixXd J(7, 5);
  J << 1, 2, 0, 0, 0,  //
      0, 1, 3, 0, 0,   //
      1, 3, 3, 0, 0,   //
      0, 0, 0, 1, 1,   //
      0, 0, 0, 2, 2,   //
      0, 0, 0, 1, 1 + 1e-12,  //
      0, 0, 0, 1, 1 + 1e-6;
  const std::vector<int> expected{0, 1, 3, 6};
  EXPECT_EQ(dense_independent_rows(J, kRankThreshold), expected);
}

// Bricard: 5 rigid bodies and the ground closed by 6 revolutes, 30 rigidity and 30 joint rows of rank
// 59 (one mobility where the Gruebler count gives none).
TEST(SparseRank, BricardKeepsTheDenseRows) {
  const Problem p = load_problem(MBS_SOURCE_DIR "/problems/bricard.yaml");
  const NaturalCoordinates nat(p.model);
  expect_same_rows_and_span(p.model, nat.nc() - 1);
}

// Pinned bar: a bar on two spherical joints along one axis, 6 rigidity and 3 + 3 joint rows, rank 11
// (one rotation left).
TEST(SparseRank, PinnedBarKeepsTheDenseRows) {
  const Problem p = load_problem(MBS_SOURCE_DIR "/problems/pinned_bar.yaml");
  const NaturalCoordinates nat(p.model);
  expect_same_rows_and_span(p.model, nat.nc() - 1);
}

// A chain of 40 links with every 10th rod twice: 44 rows, rank 40, one row of each pair dropped.
TEST(SparseRank, ChainWithDuplicatedRodsKeepsTheDenseRows) {
  Model m = testing::zigzag_chain(40);
  const int n = static_cast<int>(m.elements.size());
  for (int k = 9; k < n; k += 10) m.elements.push_back(m.elements[k]);
  const std::vector<int> kept = expect_same_rows_and_span(m, 40);
  for (int k = 0; k < 40; ++k) EXPECT_EQ(kept[k], k);  // the copies, at the end of the model, dropped
}

// Every problem file: the sparse path keeps the rows the dense one keeps.
TEST(SparseRank, EveryProblemKeepsTheSameRowsInBothPaths) {
  int redundant = 0;
  for (const auto& e : std::filesystem::directory_iterator(MBS_SOURCE_DIR "/problems")) {
    const Problem p = load_problem(e.path().string());
    const NaturalCoordinates nat(p.model);
    if (nat.nc() == 0) continue;
    SCOPED_TRACE(p.name);
    const std::vector<int> dense = independent_rows(nat, p.model);
    EXPECT_EQ(sparse_rows(nat, p.model), dense);
    redundant += static_cast<int>(dense.size()) < nat.nc();
  }
  EXPECT_GE(redundant, 2);  // bricard and pinned_bar at least: the comparison saw dropped rows
}

}  // namespace
}  // namespace mbs
