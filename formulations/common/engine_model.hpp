// What the engine adapters that build the model body by body (mujoco, bullet; docs/engines.md)
// share: the model's bodies as the engine's nodes and their frames at t = 0, their inertia (a point
// mass's tiny one), each tree joint as the adapter maps it or why none does, the least-squares fit of
// the engine's initial velocities, and the engine's state written back in natural coordinates.
#pragma once

#include <Eigen/Dense>
#include <functional>
#include <string>

#include "common/joint_graph.hpp"
#include "core/model.hpp"

namespace mbs {

// A local-frame vector of dim components in 3 (planar: z = 0).
Eigen::Vector3d in_3d(const Eigen::VectorXd& x);

// A point mass's inertia about its centre, relative to m L^2 (L its rod's length, else 1 m). An
// engine body needs some (MuJoCo's compiler refuses a moving body below 1e-15; Bullet inverts a
// spherical joint's 3x3 articulated inertia): this adds 1e-9 relative to a pendulum's m L^2 (its
// period changes by half that), and the energy the harness computes without it differs from the
// engine's by 1e-9 times the kinetic energy at most.
inline constexpr double kPointInertia = 1e-9;

// The model's bodies as an engine's nodes: point masses, then rigid bodies; kGround the ground.
// Each node's frame is its natural coordinates' frame: a point mass's at the point, a rigid body's
// at its centroid along its principal axes, so that the state reads back without a transform.
class EngineNodes {
 public:
  explicit EngineNodes(const Model& model) : model_(model) {}
  int points() const { return static_cast<int>(model_.points.size()); }
  int count() const { return points() + static_cast<int>(model_.bodies.size()); }
  std::string name(int node) const;
  Eigen::Matrix3d rotation0(int node) const;  // R_GB at t = 0 (a point, the ground: identity)
  Eigen::Vector3d position0(int node) const;  // at t = 0 (the ground: the origin)
  double mass(int node) const;
  // Principal moments about the centre; a planar body is a lamina (I_x = J_2, I_y = J_1,
  // I_z = J_1 + J_2), whose in-plane motion only I_z drives; a point: kPointInertia m L^2.
  Eigen::Vector3d inertia(int node, double point_length) const;

 private:
  const Model& model_;
};

// Empty when the tree closes no loop; otherwise "joint J (kind) closes a loop: " and why_not, for the
// first joint that does (an adapter that maps no loop refuses the model).
std::string loop_refusal(const SpanningTree& tree, const char* why_not);

// A tree joint as an engine adapter maps it: a hinge pair is a revolute joint; a planar spherical
// joint a pin (revolute about the normal).
struct EngineJoint {
  TreeJointType type = TreeJointType::kNone;
  std::string name;
  Eigen::Vector3d pivot;             // at t = 0: a rod's parent end, else the child's anchor
  Eigen::Vector3d axis;              // revolute, prismatic: unit, local frame (planar revolute: z)
  double point_length = 1.0;         // a rod's length (the point's kPointInertia), else 1 m
};
// The joint of a link of the spanning tree (not a free root), or why no adapter maps it: a revolute
// or spherical joint that turns a point mass about itself (a point has no inertia there), a rod
// that holds a rigid body (rods join point masses to their parents), a kind without a mapping.
std::string engine_joint(const Model& model, const SpanningTree& tree, const SpanningTree::Link& link,
                         const char* engine, EngineJoint& out);

// A node's world pose and velocity: its position r, rotation R (columns: the principal axes),
// angular velocity w and linear velocity v, all in the model's local frame.
using NodeState = std::function<void(int node, Eigen::Vector3d& r, Eigen::Matrix3d& R, Eigen::Vector3d& w,
                                     Eigen::Vector3d& v)>;

// The least-squares fit of an engine's nu velocities to the bodies' initial velocities (a point's
// velocity; a rigid body's angular and centroid velocity), through the map the engine gives:
// set_unit(k) sets the k-th velocity to 1 and the others to 0, then state(node, ...) reports the
// bodies' velocities. Exact when the model's velocities satisfy its joints.
Eigen::VectorXd fit_initial_velocities(const Model& model, int nu, const std::function<void(int k)>& set_unit,
                                       const NodeState& state);

// The natural coordinates (q, v) of the state that `state` reports (u_k' = omega x u_k). Allocates
// nothing: a state read back while a run reports every step.
void write_natural_state(const Model& model, const NodeState& state, Eigen::VectorXd& q, Eigen::VectorXd& v);

}  // namespace mbs
