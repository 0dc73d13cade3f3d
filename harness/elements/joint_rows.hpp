// Building blocks of joint rows in natural coordinates, shared by the joint kinds.
#pragma once

#include <Eigen/Dense>
#include <vector>

#include "core/element.hpp"
#include "core/model.hpp"

namespace mbs::elements {

// The length (m) that scales a joint's dimensionless rows and its initial-state tolerance: the
// largest rigid body it touches, at least 1 m for coincidence tolerances (as for rods).
double joint_scale(const Model& model, const Anchor& a, const Anchor& b);

// dim rows e_c . (r_A - r_B): the two anchors coincide.
void add_coincidence_rows(const Model& model, const Anchor& a, const Anchor& b, double scale,
                          std::vector<ConstraintRow>& rows);

// A vector fixed to rigid body `body` (or to the ground, body < 0) that equals the local-frame
// direction w at the initial configuration, as a combination: sum_k p_k u_k or the constant w.
Combo attached_vector(const Model& model, int body, const Eigen::VectorXd& w);

// Unit vectors normal to a local-frame direction (dim - 1 of them; planar: the in-plane normal).
std::vector<Eigen::VectorXd> normals_to(const Eigen::VectorXd& axis);

// Rows that lock the relative rotation of two frames (rigid bodies or ground): with e_i fixed to A
// and f_j fixed to B, both equal to the local basis vectors at the initial configuration,
// l e_i . f_j = 0 for i < j (planar 1 row, spatial 3).
void add_rotation_lock_rows(const Model& model, int body_a, int body_b, double l, std::vector<ConstraintRow>& rows);
inline int rotation_lock_rows(int dim) { return dim == 2 ? 1 : 3; }

}  // namespace mbs::elements
