#include "references/hinged_body.hpp"

#include <cmath>
#include <fmt/format.h>

#include "core/natural_coordinates.hpp"
#include "elements/spherical.hpp"
#include "run/scoring.hpp"

namespace mbs {

HingedBodyExact HingedBodyExact::from_problem(const Problem& problem) {
  // The loader has checked the preconditions (one body, pins on the axis, rest, gravity across).
  const HingedBodyReference* spec = reference_as<HingedBodyReference>(problem);
  if (!spec) throw ProblemError(fmt::format("{}: the problem has no hinged_body_energy reference", problem.file));
  const HingedBodyReference& ref = *spec;
  const Model& model = problem.model;
  const RigidBody& body = model.bodies[ref.body];
  HingedBodyExact h;
  h.pivot_ = ref.pivot;
  h.axis_ = ref.axis;
  h.offset_ = model.body_offset(ref.body);
  const Eigen::Vector3d g = model.gravity, g_perp = g - g.dot(h.axis_) * h.axis_;
  h.down_ = g_perp.normalized();
  h.sign_ = 1.0;
  h.theta0_ = h.angle(model.initial_q());
  h.sign_ = h.theta0_ < 0.0 ? -1.0 : 1.0;
  h.theta0_ = std::abs(h.theta0_);
  // I_axis = a^T R I_G R^T a + m |arm|^2 (parallel axes).
  const Eigen::Vector3d arm = (body.r0 - h.pivot_) - (body.r0 - h.pivot_).dot(h.axis_) * h.axis_;
  const Eigen::Vector3d a_body = body.R0.transpose() * h.axis_;
  h.I_axis_ = a_body.dot(body.principal_inertia().asDiagonal() * a_body) + body.mass * arm.squaredNorm();
  // The centroid drops from its initial height to the lowest point of its circle about the axis.
  const double drop = g_perp.norm() * arm.norm() * (1.0 - std::cos(h.theta0_));
  h.omega_vertical_ = std::sqrt(2.0 * body.mass * drop / h.I_axis_);
  return h;
}

double HingedBodyExact::angle(const Eigen::VectorXd& q) const {
  const Eigen::Vector3d r = q.segment<3>(offset_) - pivot_;
  const Eigen::Vector3d arm = r - r.dot(axis_) * axis_;
  return sign_ * std::atan2(down_.cross(arm).dot(axis_), down_.dot(arm));
}

double HingedBodyExact::angle_rate(const Eigen::VectorXd& q, const Eigen::VectorXd& v) const {
  // d/dt atan2(y, x) = (x y' - y x') / (x^2 + y^2), x and y linear in the centroid's position.
  const Eigen::Vector3d r = q.segment<3>(offset_) - pivot_, rd = v.segment<3>(offset_);
  const double x = down_.dot(r), y = down_.cross(r).dot(axis_);
  const double xd = down_.dot(rd), yd = down_.cross(rd).dot(axis_);
  return sign_ * (x * yd - y * xd) / (x * x + y * y);
}

namespace {

// The body's angle and |omega| at every step, for the angular speed at its first pass of the vertical.
class HingedBodyObserver final : public ReferenceObserver {
 public:
  HingedBodyObserver(const Problem& problem, int body)
      : problem_(problem), nat_(problem.model), exact_(HingedBodyExact::from_problem(problem)), body_(body) {}

  void reset() override { swing_.clear(); }

  void observe(double, const Eigen::VectorXd& q, const Eigen::VectorXd& v, double) override {
    swing_.push_back({exact_.angle(q), nat_.angular_velocity(body_, q, v).norm()});
  }

  // |omega| when the body first passes the vertical (theta falls through 0): by the source's rule,
  // at the first step with theta <= 0; interpolated, as a function of theta rather than of t: the
  // quadratic through the three steps around the crossing, evaluated at theta = 0. In time, |omega| is
  // at its maximum there, and a step's velocities are consistent with its positions only to the
  // method's order (for the trapezoidal rule the chord is the mean of the end velocities), so
  // interpolating in t leaves O(h^2) (docs/formulations.md, Method notes); along the orbit
  // |omega|(theta) is smooth and even, and the quadratic's error is O(dtheta^3) with a vanishing
  // third derivative.
  void finish(double, const Eigen::VectorXd&, Score& score) const override {
    if (swing_.empty()) return;
    size_t k = 1;
    while (k < swing_.size() && swing_[k].s > 0.0) ++k;
    for (size_t i = 0; i < problem_.checks.size(); ++i) {
      CheckValue& cv = score.checks[i];
      cv.target = exact_.angular_speed_at_vertical();
      if (k >= swing_.size()) continue;  // never reached the vertical: NaN
      if (problem_.checks[i].sampling == Check::Sampling::kStep) {
        cv.value = swing_[k].w;
        continue;
      }
      if (swing_.size() < 3) continue;
      const size_t j = std::min(k + 1, swing_.size() - 1) - 2;  // samples j, j+1, j+2 around the crossing
      double value = 0.0;
      for (size_t a = j; a < j + 3; ++a) {  // Lagrange basis at theta = 0
        double l = 1.0;
        for (size_t b = j; b < j + 3; ++b)
          if (b != a) l *= (0.0 - swing_[b].s) / (swing_[a].s - swing_[b].s);
        value += l * swing_[a].w;
      }
      cv.value = value;
    }
  }

 private:
  struct SwingSample {
    double s, w;  // angle (rad), |omega| (rad/s)
  };
  const Problem& problem_;
  NaturalCoordinates nat_;
  HingedBodyExact exact_;
  int body_;
  std::vector<SwingSample> swing_;
};

}  // namespace

std::unique_ptr<ReferenceObserver> HingedBodyReference::observer(const Problem& problem) const {
  return std::make_unique<HingedBodyObserver>(problem, body);
}

namespace {

std::shared_ptr<const Reference> read_hinged_body(const ReadContext& ctx, const yaml::Node& ref, Problem& p);

const ReferenceKindInfo kHingedBodyEnergy{
    "hinged_body_energy",
    "a rigid body on spherical joints along a fixed axis, released from rest: |omega| at the vertical, from energy",
    /*analysis=*/false, /*exact=*/true, /*positions_in_time=*/false, /*final_position=*/false,
    /*check_quantities=*/{"angular_speed_at_vertical"}, read_hinged_body};
MBS_REGISTER_REFERENCE_KIND(hinged_body_energy, kHingedBodyEnergy);

// A rigid body turning about a fixed axis: its spherical joints to the ground all lie on the axis
// (at least two distinct ones), nothing else is in the model, and it starts from rest. Energy then
// gives |omega| at the lowest position exactly, whatever the body's inertia.
std::shared_ptr<const Reference> read_hinged_body(const ReadContext& ctx, const yaml::Node& ref, Problem& p) {
  const Reader& rd = ctx.rd;
  const Model& model = p.model;
  rd.expect_map(ref, "reference", {"kind", "body", "pivot", "axis"});
  auto r = std::make_shared<HingedBodyReference>(kHingedBodyEnergy, ctx.mark(ref));
  const std::string name = rd.text(rd.required(ref, "body", "reference"), "reference.body");
  r->body = model.find_body(name);
  if (r->body < 0) rd.fail(ref["body"], fmt::format("reference names rigid body '{}', which is not defined", name));
  const Eigen::VectorXd pivot = ctx.frame.point(rd.required(ref, "pivot", "reference"), "reference.pivot");
  const Eigen::Vector3d axis = ctx.frame.direction(rd.required(ref, "axis", "reference"), "reference.axis");
  if (!(axis.norm() > 0.0)) rd.fail(ref["axis"], "reference.axis must not be zero");
  r->axis = axis.normalized();
  const auto sphericals = model.elements_of<SphericalJoint>();
  if (model.dim != 3 || model.bodies.size() != 1 || !model.points.empty() || sphericals.size() != model.elements.size())
    rd.fail(ref["kind"], "hinged_body_energy needs a spatial model of one rigid body and its spherical joints to the ground");
  r->pivot = pivot;
  const RigidBody& body = model.bodies[r->body];
  std::vector<Eigen::Vector3d> pins;
  for (const SphericalJoint* j : sphericals) {
    if (!j->a.is_ground() || j->b.body != r->body)
      rd.fail(ref["kind"], fmt::format("hinged_body_energy: joint {} does not join {} to the ground", j->name, name));
    const Eigen::Vector3d g = j->a.at, off = g - r->pivot;
    if ((off - off.dot(r->axis) * r->axis).norm() > 1e-9 * body.length_scale)
      rd.fail(ref["axis"], fmt::format("hinged_body_energy: joint {} is not on the axis through reference.pivot", j->name));
    bool distinct = true;
    for (const Eigen::Vector3d& pin : pins) distinct = distinct && (pin - g).norm() > 1e-9 * body.length_scale;
    if (distinct) pins.push_back(g);
  }
  if (pins.size() < 2) rd.fail(ref["kind"], "hinged_body_energy needs at least two distinct spherical joints on the axis");
  if (body.v0.norm() != 0.0 || body.omega0.norm() != 0.0)
    rd.fail(ref["kind"], fmt::format("hinged_body_energy needs {} released from rest", name));
  const Eigen::Vector3d g_perp = model.gravity - model.gravity.dot(r->axis) * r->axis;
  const Eigen::Vector3d r0 = body.r0, arm = (r0 - r->pivot) - (r0 - r->pivot).dot(r->axis) * r->axis;
  if (g_perp.norm() == 0.0 || arm.norm() == 0.0)
    rd.fail(ref["kind"], "hinged_body_energy needs gravity across the axis and the centroid off the axis");
  const double cos0 = arm.normalized().dot(g_perp.normalized());  // 1: hanging at the bottom, -1: at the top
  if (cos0 >= 1.0 - 1e-12 || cos0 <= -1.0 + 1e-12)
    rd.fail(ref["kind"], fmt::format("hinged_body_energy needs {} released off its lowest and highest positions (it would not "
                                     "swing through the vertical)", name));
  return r;
}

}  // namespace

}  // namespace mbs
