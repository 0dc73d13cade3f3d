#include "elements/spherical.hpp"

#include "elements/joint_rows.hpp"
#include "problem/element_kinds.hpp"

namespace mbs {

void SphericalJoint::add_rows(const Model& model, std::vector<ConstraintRow>& rows) const {
  elements::add_coincidence_rows(model, a, b, elements::joint_scale(model, a, b), rows);
}

namespace {

std::shared_ptr<Element> read_spherical(const ReadContext& ctx, const YAML::Node& j, const std::string& name) {
  ctx.rd.expect_map(j, "a spherical joint", {"name", "kind", "a", "b", "at"});
  auto s = std::make_shared<SphericalJoint>();
  s->name = name;
  s->mark = ctx.mark(j);
  Eigen::VectorXd at;
  if (j["at"]) at = ctx.frame.point(j["at"], "'at' of joint " + name);
  s->a = ctx.end(j, "a", "joint " + name, j["at"] ? &at : nullptr);
  s->b = ctx.end(j, "b", "joint " + name, j["at"] ? &at : nullptr);
  if (s->a.is_ground() && s->b.is_ground()) ctx.rd.fail(j, fmt::format("joint {} connects ground to ground", name));
  if (s->a.body == s->b.body && s->a.point == s->b.point) ctx.rd.fail(j, fmt::format("joint {} connects body to itself", name));
  if (s->b.is_ground()) std::swap(s->a, s->b);
  return s;
}

}  // namespace

MBS_REGISTER_ELEMENT_KIND(spherical, {"spherical", ElementRole::kJoint,
                                      "ball-and-socket joint: two anchors coincide (a pin in a plane); dim rows",
                                      read_spherical});

}  // namespace mbs
