#include "references/equivalent_pendulum.hpp"

#include <cmath>
#include <fmt/format.h>
#include <stdexcept>

#include "core/natural_coordinates.hpp"
#include "references/converged.hpp"
#include "references/simple_pendulum.hpp"
#include "run/reference_setup.hpp"
#include "run/scoring.hpp"

namespace mbs {

EquivalentPendulum::EquivalentPendulum(double w0_squared, double phi0, double phi_dot0) {
  if (!(w0_squared >= 0.0) || !(phi_dot0 >= 0.0)) throw std::invalid_argument("EquivalentPendulum: w0^2 and phi_dot0 must be >= 0");
  w0_ = std::sqrt(w0_squared);
  phi0 = std::remainder(phi0, 2.0 * M_PI);  // (-pi, pi]
  const double s0 = std::sin(0.5 * phi0);
  W_ = std::sqrt(phi_dot0 * phi_dot0 + 4.0 * w0_squared * s0 * s0);
  if (W_ > 2.0 * w0_) {
    motion_ = Motion::kCirculation;
    k_ = 2.0 * w0_ / W_;
    u0_ = std::ellint_1(k_, 0.5 * phi0);
  } else if (W_ < 2.0 * w0_) {
    motion_ = Motion::kLibration;
    k_ = W_ / (2.0 * w0_);
    // am(u0) from sn(u0) = sin(phi0/2) / k and cn(u0) = phi'0 / (2 k w0) >= 0 together: asin alone
    // loses half the digits at a turning point (sn = 1).
    u0_ = k_ > 0.0 ? std::ellint_1(k_, std::atan2(s0, 0.5 * phi_dot0 / w0_)) : 0.0;
  } else {
    throw std::invalid_argument("EquivalentPendulum: the motion is on the separatrix (it takes infinite time to reach the top)");
  }
}

EquivalentPendulum EquivalentPendulum::from_point(const Eigen::VectorXd& pivot, const Eigen::VectorXd& r0,
                                                  const Eigen::VectorXd& v0, const Eigen::VectorXd& g, double inertia,
                                                  double moment) {
  const Eigen::VectorXd d0 = r0 - pivot, down = g / g.norm();
  const double L = d0.norm();
  Eigen::VectorXd side = d0 - d0.dot(down) * down;
  if (side.norm() <= 1e-12 * L) side = v0 - v0.dot(down) * down;  // straight above or below: the velocity sets the plane
  if (!(side.norm() > 0.0)) throw std::invalid_argument("EquivalentPendulum: the point hangs at rest straight below its pivot or stands straight above it");
  side.normalize();
  double phi0 = std::atan2(d0.dot(side), d0.dot(down));
  const Eigen::VectorXd tangent = -std::sin(phi0) * down + std::cos(phi0) * side;
  double phi_dot0 = v0.dot(tangent) / L;
  if (phi_dot0 < 0.0) {  // mirror the plane so that phi grows along the initial motion
    side = -side;
    phi0 = -phi0;
    phi_dot0 = -phi_dot0;
  }
  EquivalentPendulum p(g.norm() * moment / inertia, phi0, phi_dot0);
  p.L_ = L;
  p.pivot_ = pivot;
  p.down_ = down;
  p.side_ = side;
  return p;
}

double EquivalentPendulum::phi(double t) const {
  if (motion_ == Motion::kCirculation) return 2.0 * jacobi_am(0.5 * W_ * t + u0_, k_);
  if (k_ == 0.0) return 0.0;
  return 2.0 * std::asin(k_ * std::sin(jacobi_am(w0_ * t + u0_, k_)));
}

double EquivalentPendulum::phi_dot(double t) const {
  if (motion_ == Motion::kCirculation) {
    const double s = std::sin(jacobi_am(0.5 * W_ * t + u0_, k_));
    return W_ * std::sqrt(1.0 - k_ * k_ * s * s);  // W dn(u)
  }
  return 2.0 * k_ * w0_ * std::cos(jacobi_am(w0_ * t + u0_, k_));  // 2 k w0 cn(u)
}

double EquivalentPendulum::period() const {
  const double K = std::comp_ellint_1(k_);
  return motion_ == Motion::kCirculation ? 4.0 * K / W_ : 4.0 * K / w0_;
}

Eigen::VectorXd EquivalentPendulum::position(double t) const {
  const double p = phi(t);
  return pivot_ + L_ * (std::cos(p) * down_ + std::sin(p) * side_);
}

Eigen::VectorXd EquivalentPendulum::velocity(double t) const {
  const double p = phi(t), w = phi_dot(t);
  return L_ * w * (-std::sin(p) * down_ + std::cos(p) * side_);
}

EquivalentPendulum EquivalentPendulumReference::exact(const Problem& problem) const {
  const Model& model = problem.model;
  const Combo& point = problem.measured_points.front().second;
  return EquivalentPendulum::from_point(pivot, point.eval(model.initial_q()), point.eval(model.initial_v()), model.gravity,
                                        inertia, moment);
}

std::shared_ptr<const ReferenceTrajectory> EquivalentPendulumReference::trajectory(const Problem& problem, const ReferenceOptions&,
                                                                                  ReferenceSetup& setup) const {
  const EquivalentPendulum e = exact(problem);
  auto ref = sample_exact(problem, kind(), [&](double t) { return e.position(t); });
  ref->provenance = fmt::format("exact solution of the reduced pendulum J phi'' = -g c sin phi ({}, Jacobi elliptic functions)",
                                e.motion() == EquivalentPendulum::Motion::kCirculation ? "full turns" : "libration");
  ref->file = kConvergedReferenceFile;
  setup.note = ref->provenance;
  return ref;
}

std::string EquivalentPendulumReference::stored_text(const Problem& problem, const ReferenceTrajectory& reference) const {
  std::string out = fmt::format("# mbsbench exact reference of {} ({})\n", problem.name, kind());
  out += fmt::format("# problem_hash: {}\n", problem_key(problem));
  out += fmt::format("# provenance: {}\n", reference.provenance);
  out += fmt::format("# J = {:.17g} kg m^2, c = {:.17g} kg m; uncertainty_m: 0 (round-off)\n", inertia, moment);
  return out + reference_csv_samples(problem, reference);
}

namespace {

// The measured point's distance from the exact one at the last step.
class EquivalentPendulumObserver final : public ReferenceObserver {
 public:
  EquivalentPendulumObserver(const Problem& problem, EquivalentPendulum exact)
      : point_(problem.measured_points.front().second), exact_(std::move(exact)) {}
  void reset() override {}
  void observe(double, const Eigen::VectorXd&, const Eigen::VectorXd&, double) override {}
  void finish(double t_last, const Eigen::VectorXd& q_last, Score& score) const override {
    score.final_position_error = (Eigen::VectorXd(point_.eval(q_last)) - exact_.position(t_last)).norm();
  }

 private:
  Combo point_;
  EquivalentPendulum exact_;
};

std::shared_ptr<const Reference> read_equivalent_pendulum(const ReadContext& ctx, const yaml::Node& ref, Problem& p);

const ReferenceKindInfo kEquivalentPendulum{
    "equivalent_pendulum",
    "a 1-DOF mechanism the problem file reduces to J phi'' = -g c sin phi: exact motion of one point (libration or full turns)",
    /*analysis=*/false, /*exact=*/true, /*positions_in_time=*/true, /*final_position=*/true,
    /*check_quantities=*/{}, read_equivalent_pendulum};
MBS_REGISTER_REFERENCE_KIND(equivalent_pendulum, kEquivalentPendulum);

std::shared_ptr<const Reference> read_equivalent_pendulum(const ReadContext& ctx, const yaml::Node& ref, Problem& p) {
  const Reader& rd = ctx.rd;
  const Model& model = p.model;
  rd.expect_map(ref, "reference", {"kind", "point", "pivot", "inertia", "moment"});
  auto r = std::make_shared<EquivalentPendulumReference>(kEquivalentPendulum, ctx.mark(ref));
  const yaml::Node point = rd.required(ref, "point", "reference");
  p.measured_points = {{rd.text(point, "reference.point"), measured_point(rd, point, model, "reference.point")}};
  r->pivot = ctx.frame.point(rd.required(ref, "pivot", "reference"), "reference.pivot");
  r->inertia = rd.positive(rd.required(ref, "inertia", "reference"), "reference.inertia");
  r->moment = rd.positive(rd.required(ref, "moment", "reference"), "reference.moment");
  if (model.gravity.norm() == 0.0) rd.fail(ref["kind"], "equivalent_pendulum needs gravity");
  const Eigen::VectorXd q0 = model.initial_q(), v0 = model.initial_v();
  const Combo& c = p.measured_points.front().second;
  const Eigen::VectorXd r0 = c.eval(q0), rv0 = c.eval(v0), d0 = r0 - r->pivot;
  if (!(d0.norm() > 0.0)) rd.fail(ref["pivot"], "equivalent_pendulum: the point sits on the pivot");
  if (std::abs(rv0.dot(d0)) > 1e-9 * rv0.norm() * d0.norm())
    rd.fail(ref["point"], "equivalent_pendulum: the point's initial velocity is not across its arm from the pivot (not on a circle about it)");
  if (model.dim == 3) {  // the circle lies in the vertical plane through the pivot and the point
    const Eigen::Vector3d n = Eigen::Vector3d(model.gravity).cross(Eigen::Vector3d(d0));
    if (n.norm() > 1e-12 * model.gravity.norm() * d0.norm() && std::abs(n.normalized().dot(Eigen::Vector3d(rv0))) > 1e-9 * rv0.norm())
      rd.fail(ref["point"], "equivalent_pendulum: the point's initial velocity leaves the vertical plane through the pivot");
  }
  // Kinetic energy at t = 0 is (1/2) J phi'^2 with phi' = |v0| / L: a wrong J shows here.
  const NaturalCoordinates nat(model);
  const double T0 = nat.kinetic_energy(v0), Tj = 0.5 * r->inertia * rv0.squaredNorm() / d0.squaredNorm();
  if (std::abs(T0 - Tj) > 1e-9 * std::max(T0, Tj))
    rd.fail(ref["inertia"], fmt::format("equivalent_pendulum: the model's kinetic energy at t = 0 is {:.9g} J, but (1/2) J phi'^2 = "
                                        "{:.9g} J with this inertia (phi' = {:.9g} rad/s)", T0, Tj, rv0.norm() / d0.norm()));
  try {
    (void)EquivalentPendulum::from_point(r->pivot, r0, rv0, model.gravity, r->inertia, r->moment);
  } catch (const std::invalid_argument& e) {
    rd.fail(ref["kind"], e.what());
  }
  return r;
}

}  // namespace

std::unique_ptr<ReferenceObserver> EquivalentPendulumReference::observer(const Problem& problem) const {
  return std::make_unique<EquivalentPendulumObserver>(problem, exact(problem));
}

}  // namespace mbs
