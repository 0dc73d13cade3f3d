// Forward dynamics by the composite-rigid-body algorithm (Featherstone, ch. 6) and the tree-sparse
// L^T D L factorization of the joint-space mass matrix H.
#pragma once

#include <Eigen/Dense>

#include "recursive/tree_model.hpp"

namespace mbs::recursive {

// qdd as aba() gives it, by the composite-rigid-body algorithm, the bias by recursive Newton-Euler (f_ext
// subtracted from the body forces), and the tree-sparse L^T D L factorization of H (Featherstone's
// LTDL, Table 6.3), O(N d^2) for depth d.
void crba(const SpatialTree& tree, const Eigen::Ref<const Eigen::VectorXd>& q, const Eigen::Ref<const Eigen::VectorXd>& qd,
          TreeWorkspace& ws, Eigen::Ref<Eigen::VectorXd> qdd, const BodyForces* f_ext = nullptr);
// crba() on the spatial path whatever the tree: kinematics, H and the bias (mass_matrix_and_bias),
// the LTDL factor and solve (benchmarks set it beside aba_spatial).
void crba_spatial(const SpatialTree& tree, const Eigen::Ref<const Eigen::VectorXd>& q,
                  const Eigen::Ref<const Eigen::VectorXd>& qd, TreeWorkspace& ws, Eigen::Ref<Eigen::VectorXd> qdd,
                  const BodyForces* f_ext = nullptr);
// crba() on a planar tree of pins (tree.pins), on scalars as aba_planar_pins: what crba() runs there.
void crba_planar_pins(const SpatialTree& tree, const Eigen::Ref<const Eigen::VectorXd>& q,
                      const Eigen::Ref<const Eigen::VectorXd>& qd, TreeWorkspace& ws, Eigen::Ref<Eigen::VectorXd> qdd,
                      const BodyForces* f_ext = nullptr);
// What crba() factors and solves, at the state of the last kinematics() call: the bias
// b = tau - C(q, qd) (gravity and f_ext included; recursive Newton-Euler at qdd = 0) into ws.b and
// H(q)'s lower triangle into ws.H, so that H qdd = b. The spatial path whatever the tree (no pin
// path). Allocates nothing.
void mass_matrix_and_bias(const SpatialTree& tree, TreeWorkspace& ws, const BodyForces* f_ext = nullptr);
// The tree-sparse L^T D L of H in place (its lower triangle; Featherstone, Table 6.3), and H x = b
// solved in place with that factor.
void ltdl_factor(const SpatialTree& tree, MassMatrix& H);
void ltdl_solve(const SpatialTree& tree, const MassMatrix& L, Eigen::Ref<Eigen::VectorXd> x);
// H at the configuration of the last kinematics() call into ws.H, factored by ltdl_factor.
void factored_mass_matrix(const SpatialTree& tree, TreeWorkspace& ws);
// Composite inertias and H's tree pattern (H(i, j) for j an ancestor DOF of i, or of i's own joint)
// into ws.H (with_mass_matrix), from the joint transforms of the last kinematics(): the lower
// triangle of H(q); the entries off the pattern are left as they are. Allocates nothing.
void composite_mass_matrix(const SpatialTree& tree, TreeWorkspace& ws);
// The joint-space mass matrix alone (full symmetric, for tests), H(q).
void mass_matrix(const SpatialTree& tree, const Eigen::Ref<const Eigen::VectorXd>& q, TreeWorkspace& ws,
                 Eigen::MatrixXd& H);

}  // namespace mbs::recursive
