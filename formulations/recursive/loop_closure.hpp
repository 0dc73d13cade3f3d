// Closed loops on the spatial tree: the joints left out of the spanning tree (SpatialTree::cuts)
// close the loops with their own constraint rows. Each row is the element's natural-coordinate row
// (core/element.hpp, ConstraintRow: Phi = s (d1 . d2 - c), d an affine combination of the bodies'
// points and axes) evaluated at the tree's configuration, so every joint kind that closes a loop in
// natural coordinates closes one here, with no code of its own. In the tree's coordinates:
//   Phi(q)    from the bodies' world frames (points o + R p, axes R u);
//   Phi_q     d(block)/dq_k = v_k + w_k x (x - o_j) for a point, w_k x x for an axis, over the DOFs
//             k of the block's ancestors j (w_k, v_k: DOF k's world motion at o_j);
//   gamma     = -s (d1b . d2 + 2 d1' . d2' + d1 . d2b), with d' the rates and db the accelerations at
//             qdd = 0 (the tree's bias accelerations, kinematics.hpp), so that Phi_q qdd = gamma.
// Redundant rows (a hinge's pair of spherical joints: 6 rows of rank 5; Bricard's loop: 5 rows of
// rank 4 along the whole motion) are dropped once, at the initial configuration, by a column-pivoted
// QR of Phi_q^T (pivots below 1e-10 of the largest), as the natural-coordinate formulations drop
// theirs (common/independent_rows.hpp).
//
// The dynamics keep the tree's: qdd = qdd_free + H^-1 G^T lambda, (G H^-1 G^T) lambda = gamma - G
// qdd_free, with H the joint-space mass matrix by CRBA and its tree-sparse L^T D L; G H^-1 G^T is
// factored with common/shifted_llt.hpp's regularization at singular positions. After a step the
// state is projected onto Phi = 0 (Gauss-Newton in the metric H, to round-off) and Phi_q v = 0 (one
// solve), as projection's natural-coordinate ODE is (common/kept_constraints.hpp). Dense in the
// rows: O(m^2 nv) a right-hand side for m kept rows. Trees without quaternions (the joints'
// coordinates are their velocities' integrals, so a projection's dq is a coordinate update).
#pragma once

#include <Eigen/Dense>
#include <array>
#include <string>
#include <vector>

#include "common/shifted_llt.hpp"
#include "core/formulation.hpp"
#include "core/model.hpp"
#include "recursive/tree_model.hpp"

namespace mbs::recursive {

class LoopClosure {
 public:
  // stats: the simulator's counters (projection iterations), or nullptr. Throws SolverError when a
  // cut row reads a coordinate the tree does not describe.
  LoopClosure(const Model& model, const SpatialTree& tree, RunStats* stats);
  LoopClosure(const LoopClosure&) = delete;
  LoopClosure& operator=(const LoopClosure&) = delete;

  bool empty() const { return n_r_ == 0; }
  int kept_rows() const { return n_r_; }
  int cut_rows() const { return static_cast<int>(rows_.size()); }

  // The kept rows at the last kinematics() + world_frames() into ws: Phi (m), G = Phi_q.
  void positions(const TreeWorkspace& ws, Eigen::VectorXd& Phi) const;
  void jacobian(const TreeWorkspace& ws, Eigen::MatrixXd& G) const;
  // Phi_q v and gamma at the same state (bias accelerations from bias_accelerations()).
  void velocities(const TreeWorkspace& ws, const std::vector<Vec6>& ab, Eigen::VectorXd& Phi_q_v,
                  Eigen::VectorXd& gamma) const;

  // qdd_free (from aba or crba at (q, v)) corrected by the loops' forces: G qdd = gamma.
  void constrain(const Eigen::Ref<const Eigen::VectorXd>& q, const Eigen::Ref<const Eigen::VectorXd>& v,
                 TreeWorkspace& ws, Eigen::Ref<Eigen::VectorXd> qdd);
  // The same where ws already holds the kinematics, world frames and factored H at (q, v), as the
  // velocity transformation leaves them: H is not formed a second time.
  void constrain_factored(TreeWorkspace& ws, Eigen::Ref<Eigen::VectorXd> qdd);
  // The projections after a step ending at t (file comment); SolverError when the positions'
  // does not converge.
  void project(double t, Eigen::Ref<Eigen::VectorXd> q, Eigen::Ref<Eigen::VectorXd> v, TreeWorkspace& ws);

 private:
  // One block of natural coordinates a row reads: a tree body's point (local p) or axis (local u).
  struct Term {
    int body = 0;
    bool axis = false;
    Vec3 local = Vec3::Zero();
    double w = 0.0;
  };
  struct Side {
    Vec3 c = Vec3::Zero();
    std::array<Term, 8> t{};
    int n = 0;
  };
  struct Row {
    Side d1, d2;
    double s = 1.0, c = 0.0;
  };
  Side side(const Model& model, const Combo& d, const std::vector<int>& block_body,
            const std::vector<int>& block_kind, const std::string& element) const;
  Vec3 value(const Side& d, const TreeWorkspace& ws) const;
  // d' and db (the acceleration at qdd = 0).
  void rates(const Side& d, const TreeWorkspace& ws, const std::vector<Vec6>& ab, Vec3& rate, Vec3& bias) const;
  // G.row(r) += s J_d^T x.
  void add_jacobian(const Side& d, const TreeWorkspace& ws, double s, const Vec3& x, Eigen::MatrixXd& G, int r) const;
  // Kinematics at (q, v), world frames, factored H, G and Y = H^-1 G^T, G Y factored.
  void prepare(const Eigen::Ref<const Eigen::VectorXd>& q, const Eigen::Ref<const Eigen::VectorXd>& v, TreeWorkspace& ws);
  // The same from the world frames already in ws.
  void factor_at_frames(TreeWorkspace& ws);
  // G, Y and G Y factored, from the world frames and factored H already in ws.
  void factor_rows(TreeWorkspace& ws);
  // qdd corrected by the loops' forces, from the factors of prepare() or factor_rows().
  void correct(TreeWorkspace& ws, Eigen::Ref<Eigen::VectorXd> qdd);

  const SpatialTree& tree_;
  RunStats* stats_;
  std::vector<Row> rows_;  // every cut row; kept_ the independent ones
  std::vector<int> kept_;
  int n_r_ = 0;
  double tol_Phi_ = 0.0, tol_dq_ = 0.0;
  Eigen::MatrixXd G_, Y_;
  ShiftedLlt<Eigen::MatrixXd, Eigen::VectorXd> llt_;  // S = G H^-1 G^T and its factor
  Eigen::VectorXd Phi_, b_, lambda_, dq_, zero_v_;
  std::vector<Vec6> ab_;
};

}  // namespace mbs::recursive
