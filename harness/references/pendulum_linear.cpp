#include "references/pendulum_linear.hpp"

#include <fmt/format.h>

#include "elements/rod.hpp"
#include "run/linearization_case.hpp"

namespace mbs {

std::vector<std::complex<double>> PendulumLinearReference::eigenvalues(const Problem& problem) const {
  return exact_pendulum_eigenvalues(problem);
}

namespace {

std::shared_ptr<const Reference> read_pendulum_linear(const ReadContext& ctx, const yaml::Node& ref, Problem& p);

const ReferenceKindInfo kPendulumLinear{
    "pendulum_linear",
    "(linearization) a point mass hanging at rest on one rod: the exact spectrum +-i sqrt(g/l)",
    /*analysis=*/true, /*exact=*/true, /*positions_in_time=*/false, /*final_position=*/false,
    /*check_quantities=*/{}, read_pendulum_linear};
MBS_REGISTER_REFERENCE_KIND(pendulum_linear, kPendulumLinear);

std::shared_ptr<const Reference> read_pendulum_linear(const ReadContext& ctx, const yaml::Node& ref, Problem& p) {
  const Reader& rd = ctx.rd;
  const Model& model = p.model;
  rd.expect_map(ref, "reference", {"kind", "point", "pivot"});
  auto r = std::make_shared<PendulumLinearReference>(kPendulumLinear, ctx.mark(ref));
  const std::string point = rd.text(rd.required(ref, "point", "reference"), "reference.point");
  r->point = model.find_point(point);
  if (r->point == kNoPoint) rd.fail(ref["point"], fmt::format("reference names body '{}', which is not defined", point));
  r->pivot = ctx.frame.point(rd.required(ref, "pivot", "reference"), "reference.pivot");
  const auto rods = model.elements_of<Rod>();
  if (rods.size() != 1 || model.elements.size() != 1 || model.points.size() != 1 || !model.bodies.empty() ||
      !rods[0]->a.is_ground() || (rods[0]->a.at - r->pivot).norm() > 1e-12 * rods[0]->length)
    rd.fail(ref["kind"], "pendulum_linear needs a model of one point on one rod from the ground at the pivot");
  if (model.gravity.norm() == 0.0) rd.fail(ref["kind"], "pendulum_linear needs gravity");
  // The linearization is about the static equilibrium: hanging straight down, at rest.
  const PointMass& pm = model.points[r->point];
  const Eigen::VectorXd d = pm.r0 - r->pivot;
  if (pm.v0.norm() != 0.0 || (d.normalized() - model.gravity.normalized()).norm() > 1e-9)
    rd.fail(ref["kind"], fmt::format("pendulum_linear needs {} at rest straight below the pivot (the equilibrium)", point));
  return r;
}

}  // namespace

}  // namespace mbs
