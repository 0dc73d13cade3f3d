#include "common/partition.hpp"

#include <algorithm>
#include <cmath>

namespace mbs {

Partitioner::Partitioner(int nc, int nq, double rank_threshold) : nc_(nc), nq_(nq), lu_(nc, nq) {
  lu_.setThreshold(rank_threshold);
}

Partition Partitioner::reserved() const {
  Partition p;
  p.dependent.reserve(nq_);
  p.independent.reserve(nq_);
  p.rows.reserve(nc_);
  return p;
}

void Partitioner::choose(const Eigen::MatrixXd& Phi_q, Partition& out) {
  out.dependent.clear();
  out.independent.clear();
  out.rows.clear();
  out.rank = 0;
  out.pivot_ratio = 1.0;
  if (nc_ == 0 || nq_ == 0) {  // no constraints: every coordinate is independent
    for (int j = 0; j < nq_; ++j) out.independent.push_back(j);
    return;
  }
  lu_.compute(Phi_q);
  const int r = static_cast<int>(lu_.rank());
  out.rank = r;
  // P Phi_q Q = L U: position k of Q holds column Q(k); row i of Phi_q moves to position P(i).
  const auto& P = lu_.permutationP().indices();
  const auto& Q = lu_.permutationQ().indices();
  for (int k = 0; k < nq_; ++k) (k < r ? out.dependent : out.independent).push_back(Q[k]);
  for (int i = 0; i < nc_; ++i)
    if (P[i] < r) out.rows.push_back(i);
  std::sort(out.dependent.begin(), out.dependent.end());
  std::sort(out.independent.begin(), out.independent.end());
  const double largest = std::abs(lu_.matrixLU()(0, 0));
  out.pivot_ratio = r == 0 || largest == 0.0 ? 0.0 : std::abs(lu_.matrixLU()(r - 1, r - 1)) / largest;
}

Partition choose_partition(const Eigen::MatrixXd& Phi_q, double rank_threshold) {
  Partitioner partitioner(static_cast<int>(Phi_q.rows()), static_cast<int>(Phi_q.cols()), rank_threshold);
  Partition p = partitioner.reserved();
  partitioner.choose(Phi_q, p);
  return p;
}

}  // namespace mbs
