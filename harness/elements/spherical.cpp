#include "elements/spherical.hpp"

#include "elements/joint_rows.hpp"
#include "problem/element_kinds.hpp"

namespace mbs {

void SphericalJoint::add_rows(const Model& model, std::vector<ConstraintRow>& rows) const {
  elements::add_coincidence_rows(model, a, b, elements::joint_scale(model, a, b), rows);
}

namespace {

std::shared_ptr<Element> read_spherical(const ReadContext& ctx, const yaml::Node& j, const std::string& name) {
  ctx.rd.expect_map(j, "a spherical joint", {"name", "kind", "a", "b", "at"});
  auto s = std::make_shared<SphericalJoint>();
  s->name = name;
  s->mark = ctx.mark(j);
  ctx.joint_ends(j, name, s->a, s->b);
  return s;
}

}  // namespace

MBS_REGISTER_ELEMENT_KIND(spherical, {"spherical", ElementRole::kJoint,
                                      "ball-and-socket joint: two anchors coincide (a pin in a plane); dim rows",
                                      read_spherical});

}  // namespace mbs
