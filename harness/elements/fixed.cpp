#include "elements/fixed.hpp"

#include "elements/joint_rows.hpp"
#include "problem/element_kinds.hpp"

namespace mbs {

void FixedJoint::add_rows(const Model& model, std::vector<ConstraintRow>& rows) const {
  const double l = elements::joint_scale(model, a, b);
  elements::add_coincidence_rows(model, a, b, l, rows);
  elements::add_rotation_lock_rows(model, a.body, b.body, l, rows);
}

namespace {

std::shared_ptr<Element> read_fixed(const ReadContext& ctx, const yaml::Node& j, const std::string& name) {
  const Reader& rd = ctx.rd;
  rd.expect_map(j, "a fixed joint", {"name", "kind", "a", "b", "at"});
  auto f = std::make_shared<FixedJoint>();
  f->name = name;
  f->mark = ctx.mark(j);
  ctx.joint_ends(j, name, f->a, f->b);
  ctx.require_orientation(j, name, f->a, f->b,
                          "has no orientation to weld; attach it to its body with 'point_masses' (folded into the body's "
                          "inertia) or a spherical joint");
  return f;
}

}  // namespace

MBS_REGISTER_ELEMENT_KIND(fixed, {"fixed", ElementRole::kJoint,
                                  "weld of two rigid bodies (or a body to the ground); 3 rows planar, 6 spatial", read_fixed});

}  // namespace mbs
