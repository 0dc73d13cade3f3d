#include "elements/prismatic.hpp"

#include "elements/joint_rows.hpp"
#include "problem/element_kinds.hpp"

namespace mbs {

void PrismaticJoint::add_rows(const Model& model, std::vector<ConstraintRow>& rows) const {
  const double l = elements::joint_scale(model, a, b);
  elements::add_rotation_lock_rows(model, a.body, b.body, l, rows);
  for (const Eigen::VectorXd& n : elements::normals_to(axis)) {
    ConstraintRow r;
    r.d1 = model.combo();
    model.add_anchor(r.d1, b, 1.0);
    model.add_anchor(r.d1, a, -1.0);
    r.d2 = elements::attached_vector(model, a.body, n);
    r.scale = l;
    rows.push_back(r);
  }
}

namespace {

std::shared_ptr<Element> read_prismatic(const ReadContext& ctx, const yaml::Node& j, const std::string& name) {
  const Reader& rd = ctx.rd;
  rd.expect_map(j, "a prismatic joint", {"name", "kind", "a", "b", "at", "axis"});
  auto p = std::make_shared<PrismaticJoint>();
  p->name = name;
  p->mark = ctx.mark(j);
  ctx.joint_ends(j, name, p->a, p->b);
  ctx.require_orientation(j, name, p->a, p->b, "has no orientation for a prismatic joint to lock");
  p->axis = ctx.direction(rd.required(j, "axis", "joint " + name + " (its sliding axis in world coordinates)"), "axis of joint " + name);
  return p;
}

}  // namespace

MBS_REGISTER_ELEMENT_KIND(prismatic, {"prismatic", ElementRole::kJoint,
                                      "slider along an axis, relative rotation locked; 2 rows planar, 5 spatial",
                                      read_prismatic});

}  // namespace mbs
