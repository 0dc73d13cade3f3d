#include "elements/torque.hpp"

#include <cmath>

#include "problem/element_kinds.hpp"

namespace mbs {

void Torque::add_force(const Model& model, const Eigen::Ref<const Eigen::VectorXd>& q,
                       const Eigen::Ref<const Eigen::VectorXd>& /*v*/, Eigen::Ref<Eigen::VectorXd> Q) const {
  const int n = model.dim, o = model.body_offset(body) + n;
  for (int a = 0; a < n; ++a) {
    if (n == 2) {  // tau z x u = tau (-u_y, u_x)
      Q[o + 2 * a] -= 0.5 * tau[2] * q[o + 2 * a + 1];
      Q[o + 2 * a + 1] += 0.5 * tau[2] * q[o + 2 * a];
    } else {
      Q.segment<3>(o + 3 * a) += 0.5 * tau.cross(Eigen::Vector3d(q.segment<3>(o + 3 * a)));
    }
  }
}

void Torque::add_force_jacobians(const Model& model, const Eigen::Ref<const Eigen::VectorXd>& /*q*/,
                                 const Eigen::Ref<const Eigen::VectorXd>& /*v*/, Eigen::Ref<Eigen::MatrixXd> dQ_dq,
                                 Eigen::Ref<Eigen::MatrixXd> /*dQ_dv*/) const {
  const int n = model.dim, o = model.body_offset(body) + n;
  Eigen::Matrix3d X;  // tau x .
  X << 0, -tau[2], tau[1], tau[2], 0, -tau[0], -tau[1], tau[0], 0;
  for (int a = 0; a < n; ++a) dQ_dq.block(o + n * a, o + n * a, n, n) += 0.5 * X.topLeftCorner(n, n);
}

double Torque::potential_energy(const Model& model, const Eigen::Ref<const Eigen::VectorXd>& q) const {
  if (model.dim != 2) return 0.0;  // no potential in space (has_potential() is false)
  const int o = model.body_offset(body) + 2;
  return -tau[2] * std::atan2(q[o + 1], q[o]);  // theta of u_1, defined up to 2 pi
}

namespace {

std::shared_ptr<Element> read_torque(const ReadContext& ctx, const yaml::Node& f, const std::string& name) {
  const Reader& rd = ctx.rd;
  rd.expect_map(f, "a torque", {"name", "kind", "body", "torque"});
  auto t = std::make_shared<Torque>();
  t->name = name;
  t->mark = ctx.mark(f);
  const yaml::Node b = rd.required(f, "body", "force " + name);
  const std::string body = rd.text(b, "body of " + name);
  t->body = ctx.find_body(body);
  if (t->body < 0)
    rd.fail(b, fmt::format("force {} names rigid body '{}', which is not defined{}", name, body,
                           ctx.find_point(body) != kNoPoint ? " (a point mass takes no torque)" : ""));
  const yaml::Node tn = rd.required(f, "torque", "force " + name + " (N m)");
  t->planar = ctx.model.dim == 2;
  if (t->planar) {
    if (!tn.IsScalar()) rd.fail(tn, fmt::format("torque of {} is one number in a planar model (N m, about e1 x e2)", name));
    t->tau[2] = rd.number(tn, "torque of " + name);
  } else {
    t->tau = ctx.frame.direction(tn, "torque of " + name);
  }
  return t;
}

}  // namespace

MBS_REGISTER_ELEMENT_KIND(torque, {"torque", ElementRole::kForce,
                                   "constant torque on a rigid body (planar: one number about the plane's normal)", read_torque});

}  // namespace mbs
