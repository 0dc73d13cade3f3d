// Forward dynamics by the articulated-body algorithm (Featherstone, ch. 7), O(N): the spatial path,
// the planar path on 3-vectors and the pin path on scalars (tree_model.hpp, "Planar trees").
#pragma once

#include <Eigen/Dense>

#include "recursive/tree_model.hpp"

namespace mbs::recursive {

// Forward dynamics, qdd = FD(q, qd, f_ext), gravity included: the articulated-body algorithm, O(N);
// aba_planar_pins on a planar tree of pins, aba_planar on another planar tree, aba_spatial otherwise
// (all public for the tests that compare them). f_ext (optional) are external forces on the bodies
// at this state, subtracted from the bias forces.
void aba(const SpatialTree& tree, const Eigen::Ref<const Eigen::VectorXd>& q, const Eigen::Ref<const Eigen::VectorXd>& qd,
         TreeWorkspace& ws, Eigen::Ref<Eigen::VectorXd> qdd, const BodyForces* f_ext = nullptr);
void aba_spatial(const SpatialTree& tree, const Eigen::Ref<const Eigen::VectorXd>& q,
                 const Eigen::Ref<const Eigen::VectorXd>& qd, TreeWorkspace& ws, Eigen::Ref<Eigen::VectorXd> qdd,
                 const BodyForces* f_ext = nullptr);
void aba_planar(const SpatialTree& tree, const Eigen::Ref<const Eigen::VectorXd>& q,
                const Eigen::Ref<const Eigen::VectorXd>& qd, TreeWorkspace& ws, Eigen::Ref<Eigen::VectorXd> qdd,
                const BodyForces* f_ext = nullptr);
// aba_planar for a tree of pins only (tree.pins), on scalars: what aba() runs there.
void aba_planar_pins(const SpatialTree& tree, const Eigen::Ref<const Eigen::VectorXd>& q,
                     const Eigen::Ref<const Eigen::VectorXd>& qd, TreeWorkspace& ws, Eigen::Ref<Eigen::VectorXd> qdd,
                     const BodyForces* f_ext = nullptr);

}  // namespace mbs::recursive
