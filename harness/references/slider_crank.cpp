#include "references/slider_crank.hpp"

#include <arkode/arkode_erkstep.h>
#include <cmath>
#include <fmt/format.h>
#include <nvector/nvector_serial.h>
#include <stdexcept>
#include <sundials/sundials_context.h>

#include "core/natural_coordinates.hpp"
#include "elements/prismatic.hpp"
#include "elements/revolute.hpp"
#include "elements/torque.hpp"
#include "problem/metric.hpp"
#include "references/converged.hpp"
#include "run/reference_setup.hpp"

namespace mbs {

namespace {

Eigen::Vector2d perp(const Eigen::Vector2d& x) { return {-x.y(), x.x()}; }  // rotated +90 degrees

bool joins(const Anchor& a, const Anchor& b, int i, int j) {
  return (a.body == i && b.body == j) || (a.body == j && b.body == i);
}

// The side of a two-body joint on body k.
const Anchor& side(const Anchor& a, const Anchor& b, int k) { return a.body == k ? a : b; }

}  // namespace

Eigen::Vector2d SliderCrank::rotate(double angle, const Eigen::Vector2d& x) {
  const double c = std::cos(angle), s = std::sin(angle);
  return {c * x.x() - s * x.y(), s * x.x() + c * x.y()};
}

SliderCrank::SliderCrank(const Model& model, int crank, int rod, int slider) : model_(model) {
  const int index[3] = {crank, rod, slider};
  for (int i = 0; i < 3; ++i) {
    const RigidBody& b = model.bodies[index[i]];
    body_[i] = {index[i], b.mass, b.principal_inertia()[2]};
    r0_[i] = b.r0;
  }
  const Eigen::VectorXd q0 = model.initial_q();
  for (const RevoluteJoint* j : model.elements_of<RevoluteJoint>()) {
    if (j->a.is_ground() && j->b.body == crank) O_ = j->a.at;
    if (joins(j->a, j->b, crank, rod)) P0_ = model.anchor_position(side(j->a, j->b, crank), q0);
    if (joins(j->a, j->b, rod, slider)) B0_ = model.anchor_position(side(j->a, j->b, slider), q0);
  }
  for (const PrismaticJoint* j : model.elements_of<PrismaticJoint>()) u_ = j->axis.normalized();
  for (const Torque* t : model.elements_of<Torque>()) tau_ += t->tau[2];
  n_ = perp(u_);
  g_ = model.gravity;
  const Eigen::Vector2d d0 = B0_ - P0_;
  l_ = d0.norm();
  sigma_ = d0.dot(u_) < 0.0 ? -1.0 : 1.0;
  psi0_ = std::atan2(d0.dot(n_), d0.dot(u_));
  reach_ = (std::abs((O_ - B0_).dot(n_)) + (P0_ - O_).norm()) / l_;
  const RigidBody& c = model.bodies[crank];
  theta0_ = std::atan2(c.R0(1, 0), c.R0(0, 0));
  theta_dot0_ = c.omega0[2];
}

SliderCrank::Kinematics SliderCrank::kinematics(double theta) const {
  Kinematics k;
  const double alpha = theta - theta0_;
  // Crank: a rotation about O. d/dtheta of a rotated offset e is perp(e), the second derivative -e.
  const Eigen::Vector2d dc = rotate(alpha, r0_[0] - O_), e = rotate(alpha, P0_ - O_);
  k.r[0] = O_ + dc, k.r1[0] = perp(dc), k.r2[0] = -dc;
  k.phi[0] = alpha, k.phi1[0] = 1.0, k.phi2[0] = 0.0;
  const Eigen::Vector2d P = O_ + e, P1 = perp(e), P2 = -e;
  // B = B0 + s u on the line, |B - P| = l: s = x_P + sigma sqrt(l^2 - y_P^2) in the line's frame.
  const double y = (P - B0_).dot(n_), y1 = P1.dot(n_), y2 = P2.dot(n_);
  const double x = (P - B0_).dot(u_), x1 = P1.dot(u_), x2 = P2.dot(u_);
  const double S = std::sqrt(l_ * l_ - y * y), S1 = -y * y1 / S, S2 = -(y1 * y1 + y * y2) / S - y * y * y1 * y1 / (S * S * S);
  const double s = x + sigma_ * S, s1 = x1 + sigma_ * S1, s2 = x2 + sigma_ * S2;
  // Rod direction B - P = (sigma S) u + (-y) n, of constant length l.
  const double du = sigma_ * S, dn = -y, du1 = sigma_ * S1, dn1 = -y1, du2 = sigma_ * S2, dn2 = -y2;
  const double psi1 = (du * dn1 - dn * du1) / (l_ * l_), psi2 = (du * dn2 - dn * du2) / (l_ * l_);
  const double beta = std::atan2(dn, du) - psi0_;
  const Eigen::Vector2d cr = rotate(beta, r0_[1] - P0_);
  k.r[1] = P + cr, k.r1[1] = P1 + psi1 * perp(cr), k.r2[1] = P2 + psi2 * perp(cr) - psi1 * psi1 * cr;
  k.phi[1] = beta, k.phi1[1] = psi1, k.phi2[1] = psi2;
  k.r[2] = r0_[2] + s * u_, k.r1[2] = s1 * u_, k.r2[2] = s2 * u_;
  k.phi[2] = 0.0, k.phi1[2] = 0.0, k.phi2[2] = 0.0;
  return k;
}

double SliderCrank::mass(double theta) const {
  const Kinematics k = kinematics(theta);
  double M = 0.0;
  for (int i = 0; i < 3; ++i) M += body_[i].mass * k.r1[i].squaredNorm() + body_[i].inertia * k.phi1[i] * k.phi1[i];
  return M;
}

double SliderCrank::theta_ddot(double theta, double theta_dot) const {
  const Kinematics k = kinematics(theta);
  // M = sum m |r'|^2 + I phi'^2, so (1/2) M' = sum m r' . r'' + I phi' phi''; Q = sum m g . r' + tau.
  double M = 0.0, half_dM = 0.0, Q = tau_;
  for (int i = 0; i < 3; ++i) {
    const Body& b = body_[i];
    M += b.mass * k.r1[i].squaredNorm() + b.inertia * k.phi1[i] * k.phi1[i];
    half_dM += b.mass * k.r1[i].dot(k.r2[i]) + b.inertia * k.phi1[i] * k.phi2[i];
    Q += b.mass * g_.dot(k.r1[i]);
  }
  return (Q - half_dM * theta_dot * theta_dot) / M;
}

double SliderCrank::kinetic_energy(double theta, double theta_dot) const { return 0.5 * mass(theta) * theta_dot * theta_dot; }

double SliderCrank::energy(double theta, double theta_dot) const {
  const Kinematics k = kinematics(theta);
  double V = -tau_ * (theta - theta0_);
  for (int i = 0; i < 3; ++i) V -= body_[i].mass * g_.dot(k.r[i]);
  return kinetic_energy(theta, theta_dot) + V;
}

Eigen::VectorXd SliderCrank::q(double theta) const {
  const Kinematics k = kinematics(theta);
  Eigen::VectorXd q = model_.initial_q();
  for (int i = 0; i < 3; ++i) {
    const RigidBody& b = model_.bodies[body_[i].index];
    const int o = model_.body_offset(body_[i].index);
    q.segment<2>(o) = k.r[i];
    for (int a = 0; a < 2; ++a) q.segment<2>(o + 2 + 2 * a) = rotate(k.phi[i], b.R0.col(a));
  }
  return q;
}

Eigen::VectorXd SliderCrank::v(double theta, double theta_dot) const {
  const Kinematics k = kinematics(theta);
  Eigen::VectorXd v = Eigen::VectorXd::Zero(model_.nq());
  for (int i = 0; i < 3; ++i) {
    const RigidBody& b = model_.bodies[body_[i].index];
    const int o = model_.body_offset(body_[i].index);
    v.segment<2>(o) = theta_dot * k.r1[i];
    for (int a = 0; a < 2; ++a) v.segment<2>(o + 2 + 2 * a) = theta_dot * k.phi1[i] * perp(rotate(k.phi[i], b.R0.col(a)));
  }
  return v;
}

SliderCrank::Solution SliderCrank::integrate(double dt, double t_end, double rtol) const {
  struct Resources {  // freed on every path
    SUNContext ctx = nullptr;
    N_Vector y = nullptr;
    void* mem = nullptr;
    ~Resources() {
      if (mem) ERKStepFree(&mem);
      if (y) N_VDestroy(y);
      if (ctx) SUNContext_Free(&ctx);
    }
  } r;
  auto check = [](int flag, const char* what) {
    if (flag < 0) throw std::runtime_error(fmt::format("slider_crank reference: {} failed with flag {}", what, flag));
  };
  check(SUNContext_Create(nullptr, &r.ctx), "SUNContext_Create");
  r.y = N_VNew_Serial(2, r.ctx);
  if (!r.y) throw std::runtime_error("slider_crank reference: N_VNew_Serial failed");
  NV_Ith_S(r.y, 0) = theta0_;
  NV_Ith_S(r.y, 1) = theta_dot0_;
  auto rhs = [](realtype, N_Vector y, N_Vector ydot, void* self) -> int {
    const double th = NV_Ith_S(y, 0), w = NV_Ith_S(y, 1);
    NV_Ith_S(ydot, 0) = w;
    NV_Ith_S(ydot, 1) = static_cast<const SliderCrank*>(self)->theta_ddot(th, w);
    return 0;
  };
  r.mem = ERKStepCreate(rhs, 0.0, r.y, r.ctx);
  if (!r.mem) throw std::runtime_error("slider_crank reference: ERKStepCreate failed");
  check(ERKStepSetTableNum(r.mem, ARKODE_FEHLBERG_13_7_8), "ERKStepSetTableNum");
  check(ERKStepSStolerances(r.mem, rtol, rtol), "ERKStepSStolerances");
  check(ERKStepSetUserData(r.mem, const_cast<SliderCrank*>(this)), "ERKStepSetUserData");
  check(ERKStepSetMaxNumSteps(r.mem, 1000000), "ERKStepSetMaxNumSteps");
  Solution out;
  const int samples = static_cast<int>(std::ceil(t_end / dt - 1e-9)) + 1;
  out.theta.reserve(samples);
  out.theta_dot.reserve(samples);
  out.theta.push_back(theta0_);
  out.theta_dot.push_back(theta_dot0_);
  realtype t = 0.0;
  for (int k = 1; k < samples; ++k) {
    const double tout = std::min(k * dt, t_end);
    // Step to each output time exactly (no dense-output interpolation, whose order is lower).
    check(ERKStepSetStopTime(r.mem, tout), "ERKStepSetStopTime");
    if (const int flag = ERKStepEvolve(r.mem, tout, r.y, &t, ARK_NORMAL); flag < 0)
      throw std::runtime_error(fmt::format("slider_crank reference: ERKStepEvolve to t = {:g} s failed with flag {}", tout, flag));
    out.theta.push_back(NV_Ith_S(r.y, 0));
    out.theta_dot.push_back(NV_Ith_S(r.y, 1));
  }
  check(ERKStepGetNumSteps(r.mem, &out.steps), "ERKStepGetNumSteps");
  return out;
}

std::shared_ptr<const ReferenceTrajectory> SliderCrankReference::trajectory(const Problem& problem, const ReferenceOptions&,
                                                                           ReferenceSetup& setup) const {
  const SliderCrank mech(problem.model, crank, rod, slider);
  const double dt = problem.run.output_interval, t_end = problem.run.end_time;
  const std::string where = fmt::format("{}:{}:{}", problem.file, mark().line, mark().column);
  SliderCrank::Solution tight, loose;
  try {
    tight = mech.integrate(dt, t_end, kSliderCrankTol);
    loose = mech.integrate(dt, t_end, kSliderCrankLooseTol);
  } catch (const std::runtime_error& e) {
    throw ProblemError(fmt::format("{}: {}", where, e.what()));
  }
  const int d = problem.model.dim, n_points = static_cast<int>(problem.measured_points.size());
  auto ref = std::make_shared<ReferenceTrajectory>();
  ref->kind = kind();
  ref->dim = d;
  ref->dt = dt;
  ref->t_end = t_end;
  ref->file = kConvergedReferenceFile;
  ref->x.resize(static_cast<Eigen::Index>(tight.theta.size()), d * n_points);
  double worst = 0.0, t_worst = 0.0;
  for (size_t k = 0; k < tight.theta.size(); ++k) {
    const Eigen::VectorXd q = mech.q(tight.theta[k]), q_loose = mech.q(loose.theta[k]);
    for (int p = 0; p < n_points; ++p) {
      const Combo& point = problem.measured_points[p].second;
      const Eigen::VectorXd x = point.eval(q);
      ref->x.row(static_cast<Eigen::Index>(k)).segment(d * p, d) = x.transpose();
      const double e = (Eigen::VectorXd(point.eval(q_loose)) - x).norm();
      if (e > worst) worst = e, t_worst = std::min(static_cast<double>(k) * dt, t_end);
    }
  }
  if (!ref->x.allFinite()) throw ProblemError(fmt::format("{}: slider_crank reference: non-finite positions", where));
  ref->uncertainty = worst;
  if (is_reference_metric(problem.rule.metric) && !(worst * kReferenceMargin <= problem.rule.below))
    throw ProblemError(fmt::format("{}: slider_crank reference: rtol {:g} and {:g} disagree by {:.3g} m (at t = {:g} s), not {:g}x "
                                   "below the rule's {:g} m", where, kSliderCrankTol, kSliderCrankLooseTol, worst, t_worst,
                                   kReferenceMargin, problem.rule.below));
  ref->provenance = fmt::format("the 1-DOF Lagrange equation in the crank angle, ARKODE ERKStep Fehlberg 7(8) at rtol {:g} "
                                "({} steps); uncertainty: its distance from rtol {:g}",
                                kSliderCrankTol, tight.steps, kSliderCrankLooseTol);
  setup.note = fmt::format("{}, {:.3g} m", ref->provenance, worst);
  return ref;
}

std::string SliderCrankReference::stored_text(const Problem& problem, const ReferenceTrajectory& reference) const {
  std::string out = fmt::format("# mbsbench reference of {} ({})\n", problem.name, kind());
  out += fmt::format("# problem_hash: {}\n", problem_key(problem));
  out += fmt::format("# provenance: {}\n", reference.provenance);
  out += fmt::format("# uncertainty_m: {:.6e}\n", reference.uncertainty);
  return out + reference_csv_samples(problem, reference);
}

namespace {

std::shared_ptr<const Reference> read_slider_crank(const ReadContext& ctx, const yaml::Node& ref, Problem& p);

const ReferenceKindInfo kSliderCrank{
    "slider_crank",
    "a planar slider-crank (crank, rod, slider on a prismatic joint): its 1-DOF Lagrange equation integrated at two tight tolerances",
    /*analysis=*/false, /*exact=*/false, /*positions_in_time=*/true, /*final_position=*/false,
    /*check_quantities=*/{}, read_slider_crank};
MBS_REGISTER_REFERENCE_KIND(slider_crank, kSliderCrank);

// The model must be exactly the mechanism: three rigid bodies; revolutes ground-crank, crank-rod and
// rod-slider; a prismatic ground-slider; gravity and constant torques on the crank as the only forces.
std::shared_ptr<const Reference> read_slider_crank(const ReadContext& ctx, const yaml::Node& ref, Problem& p) {
  const Reader& rd = ctx.rd;
  const Model& model = p.model;
  rd.expect_map(ref, "reference", {"kind", "crank", "rod", "slider", "points"});
  auto r = std::make_shared<SliderCrankReference>(kSliderCrank, ctx.mark(ref));
  auto body = [&](const char* key) {
    const yaml::Node n = rd.required(ref, key, "reference (slider_crank)");
    const std::string name = rd.text(n, fmt::format("reference.{}", key));
    const int k = model.find_body(name);
    if (k < 0) rd.fail(n, fmt::format("reference.{} names rigid body '{}', which is not defined", key, name));
    return k;
  };
  r->crank = body("crank");
  r->rod = body("rod");
  r->slider = body("slider");
  if (r->crank == r->rod || r->rod == r->slider || r->crank == r->slider)
    rd.fail(ref["kind"], "slider_crank: crank, rod and slider must be three different bodies");
  read_reference_points(rd, ref, p);
  if (model.dim != 2 || model.bodies.size() != 3 || !model.points.empty())
    rd.fail(ref["kind"], "slider_crank needs a planar model of three rigid bodies (crank, rod, slider) and no point masses");
  int ground_crank = 0, crank_rod = 0, rod_slider = 0, slide = 0;
  for (const auto& e : model.elements) {
    if (const auto* j = dynamic_cast<const RevoluteJoint*>(e.get())) {
      if (j->a.is_ground() && j->b.body == r->crank) ++ground_crank;
      else if (joins(j->a, j->b, r->crank, r->rod)) ++crank_rod;
      else if (joins(j->a, j->b, r->rod, r->slider)) ++rod_slider;
      else rd.fail(ref["kind"], fmt::format("slider_crank: revolute {} is not ground-crank, crank-rod or rod-slider", j->name));
    } else if (const auto* s = dynamic_cast<const PrismaticJoint*>(e.get())) {
      if (!s->a.is_ground() || s->b.body != r->slider)
        rd.fail(ref["kind"], fmt::format("slider_crank: prismatic {} does not join the slider to the ground", s->name));
      ++slide;
    } else if (const auto* t = dynamic_cast<const Torque*>(e.get())) {
      if (t->body != r->crank) rd.fail(ref["kind"], fmt::format("slider_crank: torque {} is not on the crank", t->name));
    } else {
      rd.fail(ref["kind"], fmt::format("slider_crank: element {} ({}) is not part of a slider-crank (revolute, prismatic, a torque "
                                       "on the crank)", e->name, e->kind()));
    }
  }
  if (ground_crank != 1 || crank_rod != 1 || rod_slider != 1 || slide != 1)
    rd.fail(ref["kind"], "slider_crank needs one revolute ground-crank, one crank-rod, one rod-slider and one prismatic ground-slider");
  const SliderCrank mech(model, r->crank, r->rod, r->slider);
  if (!(mech.reach() < 1.0))
    rd.fail(ref["kind"], fmt::format("slider_crank: the crank cannot turn fully (crank radius plus the pivot's offset from the "
                                     "slide line is {:.6g} of the rod): the reduction assumes it can", mech.reach()));
  // The model's kinetic energy at t = 0 is (1/2) M(theta0) theta'0^2 when every body's velocity follows the crank's.
  const NaturalCoordinates nat(model);
  const double T0 = nat.kinetic_energy(model.initial_v()), Tm = mech.kinetic_energy(mech.theta0(), mech.theta_dot0());
  if (std::abs(T0 - Tm) > 1e-9 * std::max(T0, Tm))
    rd.fail(ref["crank"], fmt::format("slider_crank: the model's kinetic energy at t = 0 is {:.9g} J, but the crank's rate {:.9g} rad/s "
                                      "gives (1/2) M theta'^2 = {:.9g} J", T0, mech.theta_dot0(), Tm));
  return r;
}

}  // namespace

}  // namespace mbs
