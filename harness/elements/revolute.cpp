#include "elements/revolute.hpp"

#include "elements/joint_rows.hpp"
#include "problem/element_kinds.hpp"

namespace mbs {

void RevoluteJoint::add_rows(const Model& model, std::vector<ConstraintRow>& rows) const {
  const double l = elements::joint_scale(model, a, b);
  elements::add_coincidence_rows(model, a, b, l, rows);
  if (model.dim == 2) return;
  const Combo a_axis = elements::attached_vector(model, a.body, axis);
  for (const Eigen::VectorXd& n : elements::normals_to(axis)) {
    ConstraintRow r;
    r.d1 = a_axis;
    r.d2 = elements::attached_vector(model, b.body, n);
    r.s = l;
    r.scale = l;
    rows.push_back(r);
  }
}

namespace {

std::shared_ptr<Element> read_revolute(const ReadContext& ctx, const yaml::Node& j, const std::string& name) {
  const Reader& rd = ctx.rd;
  rd.expect_map(j, "a revolute joint", {"name", "kind", "a", "b", "at", "axis"});
  auto r = std::make_shared<RevoluteJoint>();
  r->name = name;
  r->mark = ctx.mark(j);
  ctx.joint_ends(j, name, r->a, r->b);
  if (ctx.model.dim == 2) {
    if (j["axis"]) rd.fail(j["axis"], fmt::format("joint {}: a planar revolute turns about the plane's normal; 'axis' is for spatial models", name));
    return r;
  }
  ctx.require_orientation(j, name, r->a, r->b, "has no orientation for a spatial revolute to keep (use a spherical joint)");
  r->axis = ctx.direction(rd.required(j, "axis", "joint " + name + " (its axis in world coordinates)"), "axis of joint " + name);
  return r;
}

}  // namespace

MBS_REGISTER_ELEMENT_KIND(revolute, {"revolute", ElementRole::kJoint,
                                     "hinge: a point of each body coincides and (spatial) an axis stays common; 2 rows planar, 5 spatial",
                                     read_revolute});

}  // namespace mbs
