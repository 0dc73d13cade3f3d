#include "elements/point_force.hpp"

#include "problem/element_kinds.hpp"

namespace mbs {
namespace {

std::shared_ptr<Element> read_force(const ReadContext& ctx, const yaml::Node& f, const std::string& name) {
  const Reader& rd = ctx.rd;
  rd.expect_map(f, "a force", {"name", "kind", "at", "force"});
  auto p = std::make_shared<PointForce>();
  p->name = name;
  p->mark = ctx.mark(f);
  p->at = ctx.end(f, "at", "force " + name, nullptr);
  if (p->at.is_ground()) rd.fail(f["at"], fmt::format("force {} acts on the ground, which does not move", name));
  p->F = ctx.frame.direction(rd.required(f, "force", "force " + name + " (N, world)"), "force of " + name);
  p->r = ctx.model.combo();
  ctx.model.add_anchor(p->r, p->at, 1.0);
  return p;
}

}  // namespace

MBS_REGISTER_ELEMENT_KIND(force, {"force", ElementRole::kForce, "constant force (N, world direction) at a point", read_force});

}  // namespace mbs
