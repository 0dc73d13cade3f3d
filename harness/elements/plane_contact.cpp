#include "elements/plane_contact.hpp"

#include "problem/element_kinds.hpp"

namespace mbs {
namespace {

std::shared_ptr<Element> read_point_plane(const ReadContext& ctx, const yaml::Node& c, const std::string& name) {
  const Reader& rd = ctx.rd;
  rd.expect_map(c, "a contact", {"name", "kind", "point", "plane", "restitution"});
  auto pc = std::make_shared<PlaneContact>();
  pc->name = name;
  pc->mark = ctx.mark(c);
  const yaml::Node pn = rd.required(c, "point", "contact " + name);
  const std::string point = rd.text(pn, "contact point");
  pc->point = ctx.find_point(point);
  if (pc->point == kNoPoint) rd.fail(pn, fmt::format("contact {} names point mass '{}', which is not defined", name, point));
  const yaml::Node plane = rd.required(c, "plane", "contact " + name);
  rd.expect_map(plane, "plane of contact " + name, {"point", "normal"});
  pc->plane_point = ctx.frame.point(rd.required(plane, "point", "plane of contact " + name), "plane point of " + name);
  const yaml::Node nn = rd.required(plane, "normal", "plane of contact " + name);
  pc->normal = ctx.frame.direction(nn, "plane normal of " + name);
  if (std::abs(pc->normal.norm() - 1.0) > 1e-9)
    rd.fail(nn, fmt::format("plane normal of {} must be a unit vector (|n| = {})", name, pc->normal.norm()));
  const yaml::Node en = rd.required(c, "restitution", "contact " + name);
  pc->restitution = rd.number(en, "restitution of " + name);
  if (pc->restitution < 0.0 || pc->restitution > 1.0)
    rd.fail(en, fmt::format("restitution of {} must be in [0, 1], got {}", name, pc->restitution));
  const double g0 = pc->normal.dot(ctx.model.points[pc->point].r0 - pc->plane_point);  // gap(q0)
  if (g0 < -kInitialTolerance)
    rd.fail(pn, fmt::format("point {} starts {:.6g} m inside the plane of contact {}", point, -g0, name));
  return pc;
}

}  // namespace

MBS_REGISTER_ELEMENT_KIND(point_plane, {"point_plane", ElementRole::kContact,
                                        "frictionless contact of a point mass with a fixed plane, Newton restitution",
                                        read_point_plane});

}  // namespace mbs
