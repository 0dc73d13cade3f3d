#include "elements/rod.hpp"

#include "problem/element_kinds.hpp"

namespace mbs {

void Rod::add_rows(const Model& model, std::vector<ConstraintRow>& rows) const {
  ConstraintRow r;
  r.d1 = model.combo();
  model.add_anchor(r.d1, a, 1.0);
  model.add_anchor(r.d1, b, -1.0);
  r.same = true;
  r.s = 0.5 / length;
  r.c = length * length;
  r.scale = length;
  rows.push_back(r);
}

namespace {

std::shared_ptr<Element> read_rod(const ReadContext& ctx, const yaml::Node& j, const std::string& name) {
  const Reader& rd = ctx.rd;
  rd.expect_map(j, "a rod", {"name", "kind", "a", "b", "length"});
  auto rod = std::make_shared<Rod>();
  rod->name = name;
  rod->mark = ctx.mark(j["length"] ? j["length"] : j);
  ctx.joint_ends(j, name, rod->a, rod->b);  // no 'at' key: expect_map rejects it
  const double initial = (ctx.initial_position(rod->a) - ctx.initial_position(rod->b)).norm();
  rod->length = j["length"] ? rd.positive(j["length"], "length of " + name) : initial;
  if (!(rod->length > 0.0)) rd.fail(j, fmt::format("joint {} has zero length in the initial configuration", name));
  return rod;
}

}  // namespace

MBS_REGISTER_ELEMENT_KIND(rod, {"rod", ElementRole::kJoint,
                                "massless rigid rod between two points (pins in a plane, spherical ends in space); 1 row",
                                read_rod});

}  // namespace mbs
