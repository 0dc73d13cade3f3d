// The sparse rank test (SuiteSparseQR of Phi_q^T, common/sparse_rank.cpp) against the dense
// column-pivoted QR that decides for every problem of problems/: the same rank, and rows that span
// the same space (every dropped row a combination of the kept ones), on bricard's and pinned_bar's
// redundancies and on a chain with duplicated rods. Which of several dependent rows is dropped
// differs between the two orders (the dense QR pivots on the largest remaining norm, SuiteSparseQR
// kills a column in its fill-reducing order): on the chain they agree, on bricard and pinned_bar not.
#include <gtest/gtest.h>

#include <Eigen/Dense>
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
// `expected_rank` rows, and each set spans every row of Phi_q to round-off.
std::vector<int> expect_same_rank_and_span(const Model& model, int expected_rank) {
  const NaturalCoordinates nat(model);
  const std::vector<int> dense = independent_rows(nat, model);
  const std::vector<int> sparse = sparse_rows(nat, model);
  EXPECT_EQ(static_cast<int>(dense.size()), expected_rank);
  EXPECT_EQ(static_cast<int>(sparse.size()), expected_rank);
  Eigen::MatrixXd Phi_q(nat.nc(), nat.nq());
  nat.Phi_q(model.initial_q(), Phi_q);
  EXPECT_LT(largest_residual_share(Phi_q, dense), 1e-12);
  EXPECT_LT(largest_residual_share(Phi_q, sparse), 1e-12);
  return sparse;
}

// Bricard: 5 rigid bodies and the ground closed by 6 revolutes, 30 rigidity and 30 joint rows of rank
// 59 (one mobility where the Gruebler count gives none).
TEST(SparseRank, BricardKeepsTheDenseRank) {
  const Problem p = load_problem(MBS_SOURCE_DIR "/problems/bricard.yaml");
  const NaturalCoordinates nat(p.model);
  expect_same_rank_and_span(p.model, nat.nc() - 1);
}

// Pinned bar: a bar on two spherical joints along one axis, 6 rigidity and 3 + 3 joint rows, rank 11
// (one rotation left).
TEST(SparseRank, PinnedBarKeepsTheDenseRank) {
  const Problem p = load_problem(MBS_SOURCE_DIR "/problems/pinned_bar.yaml");
  const NaturalCoordinates nat(p.model);
  expect_same_rank_and_span(p.model, nat.nc() - 1);
}

// A chain of 40 links with every 10th rod twice: 44 rows, rank 40, one row of each pair dropped.
TEST(SparseRank, ChainWithDuplicatedRodsKeepsTheDenseRows) {
  Model m = testing::zigzag_chain(40);
  const int n = static_cast<int>(m.elements.size());
  for (int k = 9; k < n; k += 10) m.elements.push_back(m.elements[k]);
  const std::vector<int> sparse = expect_same_rank_and_span(m, 40);
  const NaturalCoordinates nat(m);
  EXPECT_EQ(sparse, independent_rows(nat, m));  // a copy dropped, the same one in both
}

}  // namespace
}  // namespace mbs
