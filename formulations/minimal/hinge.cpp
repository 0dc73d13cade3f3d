#include "minimal/hinge.hpp"

#include <fmt/format.h>

#include <cmath>
#include <utility>
#include <vector>

#include "common/erk_simulators.hpp"

namespace mbs::minimal {

std::string build_hinge(const Model& model, Hinge& hinge) {
  // The joints as they describe themselves: every element a spherical tree joint.
  std::vector<std::pair<const Element*, TreeJoint>> sphericals;
  for (const auto& e : model.elements)
    if (TreeJoint j = e->tree_joint(); j.type == TreeJointType::kSpherical) sphericals.emplace_back(e.get(), std::move(j));
  if (model.dim != 3 || model.bodies.size() != 1 || !model.points.empty() || sphericals.size() != model.elements.size())
    return "rigid bodies in joint coordinates: only a single spatial body hinged to the ground by spherical joints (no other bodies or elements)";
  const RigidBody& body = model.bodies[0];
  std::vector<Eigen::Vector3d> pins;  // ground points, distinct
  for (const auto& [e, j] : sphericals) {
    const Anchor& g = j.a->body < 0 && j.a->point == kGround ? *j.a : *j.b;
    const Anchor& b = &g == j.a ? *j.b : *j.a;
    if (g.body >= 0 || g.point != kGround || b.body != 0)
      return fmt::format("joint {} does not join the body to the ground: only a body hinged to the ground is supported", e->name);
    bool distinct = true;
    for (const Eigen::Vector3d& p : pins) distinct = distinct && (p - g.at).norm() > 1e-9 * body.length_scale;
    if (distinct) pins.push_back(g.at);
  }
  if (pins.size() < 2)
    return "a rigid body on fewer than two distinct spherical joints is not a hinge (spatial rotations are not yet in joint coordinates)";
  hinge.pivot = pins[0];
  hinge.axis = (pins[1] - pins[0]).normalized();
  for (const Eigen::Vector3d& p : pins) {
    const Eigen::Vector3d off = p - hinge.pivot;
    if ((off - off.dot(hinge.axis) * hinge.axis).norm() > 1e-9 * body.length_scale)
      return "the body's spherical joints are not collinear: it is not a hinge";
  }
  const Eigen::Vector3d& a = hinge.axis;
  const Eigen::Vector3d r0 = body.r0, arm = r0 - hinge.pivot, arm_perp = arm - arm.dot(a) * a;
  const Eigen::Vector3d a_body = body.R0.transpose() * a;
  hinge.I_axis = a_body.dot(body.principal_inertia().asDiagonal() * a_body) + body.mass * arm_perp.squaredNorm();
  const Eigen::Vector3d mg = body.mass * model.gravity;
  hinge.c1 = a.dot(arm_perp.cross(mg));
  hinge.c2 = a.dot(a.cross(arm_perp).cross(mg));
  hinge.psi_dot0 = body.omega0.dot(a);  // the loader checked the initial velocities against the joints
  return "";
}

namespace {

// y = [psi, psi'].
class HingeOde {
 public:
  using State = Eigen::Matrix<double, 2, 1>;
  HingeOde(const Model& model, const Hinge& hinge) : hinge_(hinge), body_(model.bodies[0]), offset_(model.body_offset(0)) {}
  int size() const { return 2; }
  void rhs(double /*t*/, const State& y, State& dydt) const {
    dydt[0] = y[1];
    dydt[1] = (hinge_.c1 * std::cos(y[0]) + hinge_.c2 * std::sin(y[0])) / hinge_.I_axis;
  }
  void initial_state(State& y) const { y << 0.0, hinge_.psi_dot0; }
  // Natural coordinates of the body: r_G and the axes rotated by psi, their rates psi' a x (.).
  void model_state(const State& y, Eigen::VectorXd& q, Eigen::VectorXd& v) const {
    const Eigen::Matrix3d R = Eigen::AngleAxisd(y[0], hinge_.axis).toRotationMatrix();
    const Eigen::Vector3d w = y[1] * hinge_.axis;
    const Eigen::Vector3d r = hinge_.pivot + R * (body_.r0 - hinge_.pivot);
    q.segment<3>(offset_) = r;
    v.segment<3>(offset_) = w.cross(r - hinge_.pivot);
    for (int k = 0; k < 3; ++k) {
      const Eigen::Vector3d u = R * body_.R0.col(k);
      q.segment<3>(offset_ + 3 + 3 * k) = u;
      v.segment<3>(offset_ + 3 + 3 * k) = w.cross(u);
    }
  }

 private:
  Hinge hinge_;
  const RigidBody& body_;
  int offset_;
};

}  // namespace

std::unique_ptr<Simulator> make_hinge_simulator(const ErkCase& c, const Model& model, const Hinge& hinge, double setting) {
  return make_erk_simulator<HingeOde>(c, model, setting, hinge);
}

}  // namespace mbs::minimal
