#include "problem/yaml_reader.hpp"

namespace mbs {

Eigen::VectorXd ReadContext::direction(const yaml::Node& n, const std::string& what) const {
  const Eigen::VectorXd d = frame.direction(n, what);
  if (!(d.norm() > 0.0)) rd.fail(n, fmt::format("{} must not be zero", what));
  return d / d.norm();
}

void ReadContext::joint_ends(const yaml::Node& j, const std::string& name, Anchor& a, Anchor& b) const {
  Eigen::VectorXd at;
  if (j["at"]) at = frame.point(j["at"], "'at' of joint " + name);
  a = end(j, "a", "joint " + name, j["at"] ? &at : nullptr);
  b = end(j, "b", "joint " + name, j["at"] ? &at : nullptr);
  if (a.is_ground() && b.is_ground()) rd.fail(j, fmt::format("joint {} connects ground to ground", name));
  if (a.body == b.body && a.point == b.point) rd.fail(j, fmt::format("joint {} connects body to itself", name));
  if (b.is_ground()) std::swap(a, b);
}

void ReadContext::require_orientation(const yaml::Node& j, const std::string& name, const Anchor& a, const Anchor& b,
                                      const std::string& what) const {
  for (const Anchor* an : {&a, &b})
    if (an->point >= 0) rd.fail(j, fmt::format("joint {}: point mass {} {}", name, model.points[an->point].name, what));
}

int ReadContext::find_point(const std::string& name) const {
  if (!names) return model.find_point(name);
  const auto it = names->points.find(name);
  return it == names->points.end() ? kNoPoint : it->second;
}

int ReadContext::find_body(const std::string& name) const {
  if (!names) return model.find_body(name);
  const auto it = names->bodies.find(name);
  return it == names->bodies.end() ? -1 : it->second;
}

Eigen::VectorXd ReadContext::initial_position(const Anchor& anchor) const {
  if (anchor.body >= 0) {  // r_G + sum_a p_a u_a, summed as Model::anchor_position does
    const RigidBody& b = model.bodies[anchor.body];
    Eigen::VectorXd r = b.r0;
    for (int a = 0; a < model.dim; ++a) r += anchor.at[a] * b.R0.col(a);
    return r;
  }
  if (anchor.point == kGround) return anchor.at;
  return model.points[anchor.point].r0;
}

Anchor ReadContext::end(const yaml::Node& node, const char* key, const std::string& element,
                        const Eigen::VectorXd* at_world) const {
  const yaml::Node e = rd.required(node, key, element);
  Anchor an;
  // A rigid body's point given in world coordinates at the initial configuration.
  auto on_body_at_world = [&](int body, const Eigen::VectorXd& w) {
    const RigidBody& b = model.bodies[body];
    an.body = body;
    an.point = kNoPoint;
    an.at = b.R0.transpose() * (w - b.r0);
  };
  if (e.IsScalar()) {
    const std::string s = e.Scalar();
    const size_t dot = s.find('.');
    if (dot != std::string::npos) {  // BODY.POINT
      const std::string body = s.substr(0, dot), point = s.substr(dot + 1);
      const int k = find_body(body);
      if (k < 0) rd.fail(e, fmt::format("{} names rigid body '{}', which is not defined", element, body));
      const int p = model.bodies[k].find_point(point);
      if (p < 0) rd.fail(e, fmt::format("{} names point '{}' of {}, which is not defined (its 'points')", element, point, body));
      an.body = k;
      an.point = kNoPoint;
      an.at = model.bodies[k].points[p].second;
      return an;
    }
    if (s == "ground") {
      if (!at_world) rd.fail(e, fmt::format("end '{}' of {} is the ground: give the point as {{ground: [x, y, z]}} or the element's 'at'", key, element));
      an.at = *at_world;
      return an;
    }
    an.point = find_point(s);
    if (an.point != kNoPoint) return an;
    const int k = find_body(s);
    if (k < 0) rd.fail(e, fmt::format("{} names body '{}', which is not defined", element, s));
    if (!at_world)
      rd.fail(e, fmt::format("end '{}' of {} is rigid body {}: say where, as {}.POINT, {{body: {}, at: [x, y, z]}} or the element's 'at'",
                             key, element, s, s, s));
    on_body_at_world(k, *at_world);
    return an;
  }
  rd.expect_map(e, fmt::format("end '{}' of {}", key, element), {"ground", "body", "at"});
  if (e["ground"] && e["body"]) rd.fail(e, "a joint end is either {ground: [x, y, z]} or {body: NAME}, not both");
  if (e["ground"]) {
    if (e["at"]) rd.fail(e["at"], "'at' locates a point on a rigid body; a ground end gives its position in 'ground'");
    an.at = frame.point(e["ground"], fmt::format("ground point of {}", element));
    return an;
  }
  if (!e["body"]) rd.fail(e, "a joint end needs 'ground: [x, y, z]' or 'body: NAME'");
  const std::string body = rd.text(e["body"], "body name");
  an.point = find_point(body);
  if (an.point != kNoPoint) {
    if (e["at"]) rd.fail(e["at"], fmt::format("'{}' is a point mass: a joint attaches to it without 'at'", body));
    return an;
  }
  an.body = find_body(body);
  if (an.body < 0) rd.fail(e["body"], fmt::format("{} names body '{}', which is not defined", element, body));
  if (!e["at"]) {
    if (!at_world)
      rd.required(e, "at", fmt::format("end '{}' of {} (a point on rigid body {}, body frame, m)", key, element, body));
    on_body_at_world(an.body, *at_world);
    return an;
  }
  const RigidBody& b = model.bodies[an.body];
  an.at = b.from_body_frame(rd.body_vector(e["at"], fmt::format("'at' of {}", element), model.dim));
  return an;
}

}  // namespace mbs
