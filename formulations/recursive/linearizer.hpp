// Linearization of formulation "recursive" about a static equilibrium, in the tree's own tangent
// coordinates (formulations/recursive/linearizer.cpp).
#pragma once

#include <Eigen/Dense>
#include <memory>
#include <string>
#include <vector>

#include "core/linearization.hpp"
#include "core/model.hpp"
#include "recursive/spatial_tree.hpp"

namespace mbs::recursive {

// Empty when the model is a tree this engine describes with gravity as its only load; otherwise why not.
std::string linearizer_unsupported_reason(const Model& model);
std::unique_ptr<Linearizer> make_linearizer(const Model& model);

// The gravity potential V = -sum_k m_k g . x_k in the tangent increments delta of q (q (+) delta,
// see linearizer.cpp) at delta = 0: the generalized gravity force tau = -dV/d delta and the
// stiffness K = d2V/d delta2, analytic, at the configuration of the workspace's last kinematics().
// K is the exact Hessian at any configuration (symmetric by construction); at an equilibrium it is
// also -d tau/d delta. Sized from the tree; evaluate() allocates nothing.
class GravityStiffness {
 public:
  explicit GravityStiffness(const SpatialTree& tree);
  // Writes tau (nv) and K (nv x nv) and returns the scale of tau, |g| |W|_F (W: the columns whose
  // products with g are tau, see linearizer.cpp), against which an equilibrium is judged.
  double evaluate(const SpatialTree& tree, TreeWorkspace& ws, Eigen::Ref<Eigen::VectorXd> tau,
                  Eigen::Ref<Eigen::MatrixXd> K);

 private:
  std::vector<double> mass_;  // per body: its subtree's mass
  std::vector<Vec3> h_;       // per body: its subtree's first moment about its joint origin (world)
  Eigen::Matrix3Xd w_, W_, c_;  // per DOF: world rotation axis omega, lever W, omega x g
};

}  // namespace mbs::recursive
