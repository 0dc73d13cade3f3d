#include "references/hinged_body.hpp"

#include <cmath>
#include <fmt/format.h>

namespace mbs {

HingedBodyExact HingedBodyExact::from_problem(const Problem& problem) {
  // The loader has checked the preconditions (one body, pins on the axis, rest, gravity across).
  if (!problem.reference || problem.reference->kind != "hinged_body_energy")
    throw ProblemError(fmt::format("{}: the problem has no hinged_body_energy reference", problem.file));
  const ReferenceSpec& ref = *problem.reference;
  const Model& model = problem.model;
  const RigidBody& body = model.bodies[ref.body];
  HingedBodyExact h;
  h.pivot_ = ref.pivot;
  h.axis_ = ref.axis;
  h.offset_ = model.body_offset(ref.body);
  const Eigen::Vector3d g = model.gravity, g_perp = g - g.dot(h.axis_) * h.axis_;
  h.down_ = g_perp.normalized();
  h.sign_ = 1.0;
  h.theta0_ = h.angle(model.initial_q());
  h.sign_ = h.theta0_ < 0.0 ? -1.0 : 1.0;
  h.theta0_ = std::abs(h.theta0_);
  // I_axis = a^T R I_G R^T a + m |arm|^2 (parallel axes).
  const Eigen::Vector3d arm = (body.r0 - h.pivot_) - (body.r0 - h.pivot_).dot(h.axis_) * h.axis_;
  const Eigen::Vector3d a_body = body.R0.transpose() * h.axis_;
  h.I_axis_ = a_body.dot(body.principal_inertia().asDiagonal() * a_body) + body.mass * arm.squaredNorm();
  // The centroid drops from its initial height to the lowest point of its circle about the axis.
  const double drop = g_perp.norm() * arm.norm() * (1.0 - std::cos(h.theta0_));
  h.omega_vertical_ = std::sqrt(2.0 * body.mass * drop / h.I_axis_);
  return h;
}

double HingedBodyExact::angle(const Eigen::VectorXd& q) const {
  const Eigen::Vector3d r = q.segment<3>(offset_) - pivot_;
  const Eigen::Vector3d arm = r - r.dot(axis_) * axis_;
  return sign_ * std::atan2(down_.cross(arm).dot(axis_), down_.dot(arm));
}

double HingedBodyExact::angle_rate(const Eigen::VectorXd& q, const Eigen::VectorXd& v) const {
  // d/dt atan2(y, x) = (x y' - y x') / (x^2 + y^2), x and y linear in the centroid's position.
  const Eigen::Vector3d r = q.segment<3>(offset_) - pivot_, rd = v.segment<3>(offset_);
  const double x = down_.dot(r), y = down_.cross(r).dot(axis_);
  const double xd = down_.dot(rd), yd = down_.cross(rd).dot(axis_);
  return sign_ * (x * yd - y * xd) / (x * x + y * y);
}

}  // namespace mbs
