// Kinematics of the spatial tree: joint transforms and velocities, world frames, the quaternion
// rates and normalization, and the model's natural coordinates of a tree state.
#pragma once

#include <Eigen/Dense>
#include <vector>

#include "recursive/tree_model.hpp"

namespace mbs::recursive {

// Joint transforms (E, r), velocities v and velocity-product accelerations c of every body.
void kinematics(const SpatialTree& tree, const Eigen::Ref<const Eigen::VectorXd>& q,
                const Eigen::Ref<const Eigen::VectorXd>& qd, TreeWorkspace& ws);
// The ground's acceleration in the recursions: gravity as an upward acceleration of the base
// (Featherstone, section 5.3), so that no body needs a gravity force of its own.
inline Vec6 base_acceleration(const SpatialTree& tree) {
  Vec6 a0;
  a0.head<3>().setZero();
  a0.tail<3>() = -tree.gravity;
  return a0;
}
// World (model local) orientation Rw and origin ow of every body, from the last kinematics() call.
void world_frames(const SpatialTree& tree, TreeWorkspace& ws);
// The bias accelerations ab (qdd = 0, no gravity; body coordinates) of every body, from the
// velocity-product accelerations of the last kinematics(): ab_i = X_i ab_parent + c_i.
void bias_accelerations(const SpatialTree& tree, const TreeWorkspace& ws, std::vector<Vec6>& ab);
// q' from the velocities (quaternions: 1/2 q (x) (0, omega)).
void configuration_rate(const SpatialTree& tree, const Eigen::Ref<const Eigen::VectorXd>& q,
                        const Eigen::Ref<const Eigen::VectorXd>& qd, Eigen::Ref<Eigen::VectorXd> qdot);
// Renormalizes every quaternion of q.
void normalize(const SpatialTree& tree, Eigen::Ref<Eigen::VectorXd> q);
// The model's natural coordinates (point positions and velocities; rigid bodies' centroid and
// principal axes) of the tree state.
void model_state(const SpatialTree& tree, const Model& model, const Eigen::Ref<const Eigen::VectorXd>& q,
                 const Eigen::Ref<const Eigen::VectorXd>& qd, TreeWorkspace& ws, Eigen::Ref<Eigen::VectorXd> qn,
                 Eigen::Ref<Eigen::VectorXd> vn);

}  // namespace mbs::recursive
