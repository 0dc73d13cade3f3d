// Forward dynamics of the spatial tree by the velocity transformation of the model's natural
// coordinates (Jerkovsky 1978; García de Jalón & Bayo, "Kinematic and Dynamic Simulation of
// Multibody Systems", 1994, ch. 6): with the natural coordinates q_n(q), their velocities
// v_n = R(q) qd and accelerations a_n = R qdd + c(q, qd),
//   (R^T M R) qdd = R^T (Q(q_n, v_n) - M c),
// M the natural coordinates' constant diagonal mass matrix and Q their applied forces (gravity and
// every force element's add_force). R (n_n x nv) and R^T M R are dense: the method `minimal` runs,
// against which `recursive`'s O(N) and O(N d^2) recursions are measured. H = R^T M R is factored
// by the tree-sparse L^T D L (crba.hpp), so that contacts and loops read ws.H as after CRBA.
#pragma once

#include <Eigen/Dense>
#include <vector>

#include "core/model.hpp"
#include "recursive/tree_model.hpp"

namespace mbs::recursive {

class VelocityTransformation {
 public:
  // Sizes everything from the tree (ws must have been built with its mass matrix).
  VelocityTransformation(const SpatialTree& tree, const Model& model);
  VelocityTransformation(const VelocityTransformation&) = delete;
  VelocityTransformation& operator=(const VelocityTransformation&) = delete;

  // qdd at (q, qd). Leaves in ws the kinematics and world frames at (q, qd) and the L^T D L factor
  // of H = R^T M R in ws.H (R^T (Q - M c) in ws.b). Allocates nothing.
  void accelerations(const Eigen::Ref<const Eigen::VectorXd>& q, const Eigen::Ref<const Eigen::VectorXd>& qd,
                     TreeWorkspace& ws, Eigen::Ref<Eigen::VectorXd> qdd);
  // R, c, q_n and v_n at (q, qd) (tests: R against a finite difference of model_state).
  const Eigen::MatrixXd& velocity_jacobian() const { return R_; }
  const Eigen::VectorXd& convective_acceleration() const { return c_; }
  void natural_kinematics(const Eigen::Ref<const Eigen::VectorXd>& q, const Eigen::Ref<const Eigen::VectorXd>& qd,
                          TreeWorkspace& ws);

 private:
  const SpatialTree& tree_;
  const Model& model_;
  std::vector<const Element*> forces_;  // the model's force elements (their Q at q_n, v_n)
  std::vector<int> offset_;             // each tree body's first natural coordinate (-1: none)
  Eigen::VectorXd sqrt_m_, m_, Q0_;     // sqrt(M), M (diagonal) and M g
  Eigen::VectorXd qn_, vn_, c_, f_;     // natural state, convective accelerations, Q - M c
  Eigen::MatrixXd R_, A_;               // R (n_n x nv) and sqrt(M) R
  std::vector<Vec6> ab_;                // bias accelerations (qdd = 0) of every body
};

}  // namespace mbs::recursive
