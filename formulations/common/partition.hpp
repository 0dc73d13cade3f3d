// Generalized coordinate partitioning (Wehage & Haug 1982): which coordinates are independent,
// which are recovered from the constraints, and which constraint rows are kept. Shared by
// `partitioned` (natural coordinates) and `joint-partitioned` (a spanning tree's joint coordinates).
//
// Rule: LU with full pivoting of the constraint Jacobian Phi_q (nc x nq). The columns pivoted into
// the first `rank` positions are the dependent coordinates q_d, so Phi_d = Phi_q(rows, q_d) is the
// best-conditioned square block the greedy pivoting finds; the remaining columns are the
// independent coordinates q_i (ndof = nq - rank). The rows pivoted into the rank are kept; the
// others are redundant (linear combinations of the kept ones) and are dropped.
#pragma once

#include <Eigen/Dense>
#include <vector>

namespace mbs {

// Pivots below this fraction of the largest one count as zero (rank-deficient, redundant rows).
// A redundant row's pivot is of the order of the constraint violation over the rod length (the
// loader accepts initial states off by up to 1e-9 L; the run keeps them at ~1e-12 L); a genuine
// pivot is about the sine of the distance to a singular configuration. 1e-7 separates the two.
inline constexpr double kRankThreshold = 1e-7;

struct Partition {
  int rank = 0;
  std::vector<int> dependent;    // q_d: coordinates solved from the constraints, ascending, size rank
  std::vector<int> independent;  // q_i: the reduced coordinates, ascending, size nq - rank
  std::vector<int> rows;         // constraint rows kept, ascending, size rank; the others are redundant
  // |smallest kept pivot| / |largest pivot| of the full-pivoting LU: 1 is perfect, -> 0 singular.
  double pivot_ratio = 0.0;

  int ndof() const { return static_cast<int>(independent.size()); }
};

// Chooses partitions of Jacobians of one size without allocating (capacity reserved at
// construction), so that a simulator can re-partition inside its timed loop.
class Partitioner {
 public:
  Partitioner(int nc, int nq, double rank_threshold = kRankThreshold);
  // Writes the partition of Phi_q (nc x nq, the size given at construction) into `out`.
  void choose(const Eigen::MatrixXd& Phi_q, Partition& out);
  // A Partition whose lists can hold any partition of this size without allocating.
  Partition reserved() const;

 private:
  int nc_, nq_;
  Eigen::FullPivLU<Eigen::MatrixXd> lu_;
};

// One-off convenience (allocates): the partition of Phi_q by the rule above.
Partition choose_partition(const Eigen::MatrixXd& Phi_q, double rank_threshold = kRankThreshold);

}  // namespace mbs
