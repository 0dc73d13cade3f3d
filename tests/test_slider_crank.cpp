// slider_crank and slider_crank_motor (problems/): the reference kind slider_crank, the mechanism's
// 1-DOF Lagrange equation in the crank angle integrated by ARKODE. Its reduced kinematics satisfy the
// model's constraints, its theta'' is the natural-coordinate DAE's, it conserves the energy (free) and
// gains exactly the torque's work (motor) to the bound its tolerance gives, and a natural-coordinate
// formulation converges to it at its order. The kinematics and the equation are also checked on an
// inclined, offset slide line. A model that is not the mechanism it names, or whose crank cannot turn
// fully, is refused.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>

#include "core/formulation.hpp"
#include "core/natural_coordinates.hpp"
#include "problem/problem.hpp"
#include "references/converged.hpp"
#include "references/slider_crank.hpp"
#include "run/reference_setup.hpp"
#include "run/scoring.hpp"

namespace mbs {
namespace {

const Problem& free_problem() {
  static const Problem p = load_problem(MBS_SOURCE_DIR "/problems/slider_crank.yaml");
  return p;
}

const Problem& motor_problem() {
  static const Problem p = load_problem(MBS_SOURCE_DIR "/problems/slider_crank_motor.yaml");
  return p;
}

SliderCrank mechanism(const Problem& p) {
  const Model& m = p.model;
  return SliderCrank(m, m.find_body("crank"), m.find_body("rod"), m.find_body("slider"));
}

// Gravity's potential (J, zero at the local origin) from the centroids, apart from NaturalCoordinates.
double gravity_potential(const Model& m, const Eigen::VectorXd& q) {
  double V = 0.0;
  for (int k = 0; k < static_cast<int>(m.bodies.size()); ++k) V -= m.bodies[k].mass * m.gravity.dot(q.segment(m.body_offset(k), m.dim));
  return V;
}

TEST(SliderCrank, ModelHasOneDegreeOfFreedom) {
  for (const Problem* p : {&free_problem(), &motor_problem()}) {
    SCOPED_TRACE(p->name);
    const NaturalCoordinates nat(p->model);
    ASSERT_EQ(nat.nq(), 18);
    ASSERT_EQ(nat.nc(), 17);  // 3 revolutes and a prismatic, 2 rows each; 3 x 3 rigidity rows
    Eigen::MatrixXd J(nat.nc(), nat.nq());
    nat.Phi_q(p->model.initial_q(), J);
    Eigen::ColPivHouseholderQR<Eigen::MatrixXd> qr(J);
    qr.setThreshold(1e-10);
    EXPECT_EQ(qr.rank(), 17);
    EXPECT_TRUE(nat.energy_is_invariant());
  }
  EXPECT_EQ(mechanism(free_problem()).theta0(), M_PI / 4);
  EXPECT_EQ(mechanism(free_problem()).theta_dot0(), 2.0 * M_PI);
  EXPECT_EQ(mechanism(motor_problem()).theta_dot0(), 0.0);
}

// A slider-crank at rest at crank angle theta0 (rad) whose slide line is inclined at `incline` (rad)
// and passes at `offset` (m, along the line's left normal) from the crank pivot O = 0: the general
// geometry the problem files (no offset, horizontal) do not exercise. Crank 0.15 m, rod 0.5 m; gravity
// along -y; a 1.5 N m torque on the crank.
std::string offset_slider_crank_yaml(double theta0, double incline, double offset) {
  const double r = 0.15, l = 0.5;
  const Eigen::Vector2d u(std::cos(incline), std::sin(incline)), n(-u.y(), u.x()), C = offset * n;
  const Eigen::Vector2d P = r * Eigen::Vector2d(std::cos(theta0), std::sin(theta0));
  const double y = (P - C).dot(n), S = std::sqrt(l * l - y * y);
  const Eigen::Vector2d B = C + ((P - C).dot(u) + S) * u, G = 0.5 * (P + B);
  const double deg = 180.0 / M_PI, rod = std::atan2(B.y() - P.y(), B.x() - P.x());
  return fmt::format(
      "name: offset_slider_crank\nspace: planar\ngravity: [0.0, -9.81, 0.0]\nbodies:\n"
      "  - {{name: crank, kind: rigid_body, mass: 2.0, inertia: 0.00375, position: [{:.17g}, {:.17g}, 0.0], "
      "orientation: {{angle_deg: {:.17g}}}, points: {{O: [-0.075, 0.0], P: [0.075, 0.0]}}}}\n"
      "  - {{name: rod, kind: rigid_body, mass: 1.5, inertia: 0.03125, position: [{:.17g}, {:.17g}, 0.0], "
      "orientation: {{angle_deg: {:.17g}}}, points: {{P: [-0.25, 0.0], B: [0.25, 0.0]}}}}\n"
      "  - {{name: slider, kind: rigid_body, mass: 2.5, inertia: 0.00375, position: [{:.17g}, {:.17g}, 0.0], "
      "orientation: {{angle_deg: {:.17g}}}, points: {{B: [0.0, 0.0]}}}}\n"
      "joints:\n"
      "  - {{name: O, kind: revolute, a: ground, b: crank.O, at: [0.0, 0.0, 0.0]}}\n"
      "  - {{name: P, kind: revolute, a: crank.P, b: rod.P, at: [{:.17g}, {:.17g}, 0.0]}}\n"
      "  - {{name: B, kind: revolute, a: rod.B, b: slider.B, at: [{:.17g}, {:.17g}, 0.0]}}\n"
      "  - {{name: slide, kind: prismatic, a: ground, b: slider, at: [{:.17g}, {:.17g}, 0.0], axis: [{:.17g}, {:.17g}, 0.0]}}\n"
      "forces:\n  - {{name: motor, kind: torque, body: crank, torque: 1.5}}\n"
      "run: {{end_time: 0.5, output_interval: 0.01, history_point: slider.B}}\n"
      "score:\n  rule: {{metric: max_reference_error, below: 1.0e-4}}\n  objective: cpu_time\n"
      "reference: {{kind: slider_crank, crank: crank, rod: rod, slider: slider, points: [crank.P, slider.B]}}\n",
      0.5 * P.x(), 0.5 * P.y(), theta0 * deg, G.x(), G.y(), rod * deg, B.x(), B.y(), incline * deg, P.x(), P.y(), B.x(), B.y(),
      B.x(), B.y(), u.x(), u.y());
}

// Loading `text` fails with `message`, located at the line that holds `marker`.
void expect_refused(const std::string& text, const std::string& marker, const std::string& message) {
  const size_t line = 1 + std::count(text.begin(), text.begin() + text.find(marker), '\n');
  try {
    load_problem_text(text, "bad.yaml");
    ADD_FAILURE() << "accepted";
  } catch (const ProblemError& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.rfind(fmt::format("bad.yaml:{}:", line), 0), 0u) << what;
    EXPECT_NE(what.find(message), std::string::npos) << what;
  }
}

// An offset that leaves the crank unable to turn (r + |offset| = 0.55 m > l) is refused at the
// reference's kind; a smaller one is accepted.
TEST(SliderCrank, ACrankThatCannotTurnFullyIsRefused) {
  EXPECT_NO_THROW(load_problem_text(offset_slider_crank_yaml(-M_PI / 2, 0.0, -0.3), "offset.yaml"));
  expect_refused(offset_slider_crank_yaml(-M_PI / 2, 0.0, -0.4), "reference:", "the crank cannot turn fully");
}

// A reference that names the bodies in the wrong roles is refused at its `kind` line, naming the joint
// that does not fit.
TEST(SliderCrank, BodiesInTheWrongRolesAreRefused) {
  std::ifstream in(MBS_SOURCE_DIR "/problems/slider_crank.yaml");
  std::stringstream buffer;
  buffer << in.rdbuf();
  std::string text = buffer.str();
  const std::string roles = "  crank: crank\n  rod: rod\n";
  const size_t at = text.find(roles);
  ASSERT_NE(at, std::string::npos);
  text.replace(at, roles.size(), "  crank: rod\n  rod: crank\n");
  expect_refused(text, "  kind: slider_crank", "slider_crank: revolute O is not ground-crank, crank-rod or rod-slider");
}

// Over a full turn (and at the problem's initial state), the reduced kinematics close every joint
// of the model to round-off at position and velocity level, and give back its initial state.
TEST(SliderCrank, ReducedKinematicsSatisfyTheModelsConstraints) {
  const Problem inclined = load_problem_text(offset_slider_crank_yaml(0.7, 0.3, 0.08), "inclined.yaml");
  for (const Problem* p : {&free_problem(), &inclined}) {
    SCOPED_TRACE(p->name);
    const SliderCrank mech = mechanism(*p);
    const NaturalCoordinates nat(p->model);
    EXPECT_LT((mech.q(mech.theta0()) - p->model.initial_q()).cwiseAbs().maxCoeff(), 1e-15);
    EXPECT_LT((mech.v(mech.theta0(), mech.theta_dot0()) - p->model.initial_v()).cwiseAbs().maxCoeff(), 1e-14);
    Eigen::VectorXd phi(nat.nc()), phi_v(nat.nc());
    for (int i = 0; i < 24; ++i) {
      const double theta = mech.theta0() + i * (2.0 * M_PI / 24), rate = 7.0;
      const Eigen::VectorXd q = mech.q(theta), v = mech.v(theta, rate);
      nat.Phi(q, phi);
      nat.Phi_q_times(q, v, phi_v);
      EXPECT_LT(phi.cwiseAbs().maxCoeff(), 1e-15) << "theta " << theta;
      EXPECT_LT(phi_v.cwiseAbs().maxCoeff(), 1e-14) << "theta " << theta;
      // (1/2) M(theta) theta'^2 is the model's kinetic energy.
      EXPECT_NEAR(mech.kinetic_energy(theta, rate), nat.kinetic_energy(v), 1e-14 * nat.kinetic_energy(v));
    }
  }
}

// theta'' from the reduced equation (M, M' and Q in closed form) against the index-1 DAE of the
// natural coordinates, [M Phi_q^T; Phi_q 0] [a; lambda] = [Q; -d/dt(Phi_q) v], at states over a
// turn: the crank's angular acceleration is u1 x u1'' (|u1| = 1 turning at any rate).
TEST(SliderCrank, ReducedEquationIsTheNaturalCoordinateDae) {
  const Problem inclined = load_problem_text(offset_slider_crank_yaml(0.7, 0.3, 0.08), "inclined.yaml");
  for (const Problem* p : {&free_problem(), &motor_problem(), &inclined}) {
    SCOPED_TRACE(p->name);
    const SliderCrank mech = mechanism(*p);
    const NaturalCoordinates nat(p->model);
    const int nq = nat.nq(), nc = nat.nc(), o = p->model.body_offset(p->model.find_body("crank")) + 2;
    for (int i = 0; i < 12; ++i) {
      const double theta = 0.1 + i * (2.0 * M_PI / 12), rate = -3.0 + i;
      const Eigen::VectorXd q = mech.q(theta), v = mech.v(theta, rate);
      Eigen::MatrixXd K = Eigen::MatrixXd::Zero(nq + nc, nq + nc), J(nc, nq);
      nat.Phi_q(q, J);
      K.topLeftCorner(nq, nq) = nat.M_diag().asDiagonal();
      K.topRightCorner(nq, nc) = J.transpose();
      K.bottomLeftCorner(nc, nq) = J;
      Eigen::VectorXd rhs(nq + nc), Q(nq), gamma(nc);
      nat.Q(q, v, Q);
      nat.Phi_q_dot_v(q, v, gamma);
      rhs << Q, -gamma;
      const Eigen::VectorXd a = K.fullPivLu().solve(rhs);
      const double dae = q[o] * a[o + 1] - q[o + 1] * a[o];
      const double reduced = mech.theta_ddot(theta, rate);
      EXPECT_NEAR(reduced, dae, 1e-11 * (std::abs(dae) + rate * rate)) << "theta " << theta << " rate " << rate;
    }
  }
}

// Energy drift bound from the integrator's tolerance: each step's local error is held to about
// rtol (1 + |y_i|) in each component, and energy, an invariant, moves by dE = E_theta d theta +
// E_theta' d theta' with E_theta = -M theta'' and E_theta' = M theta'; over `steps` steps the errors
// add (they do not grow along the energy), so the drift stays below steps rtol max(|E_theta|
// (1 + |theta|) + |E_theta'| (1 + |theta'|)).
double energy_bound(const SliderCrank& mech, const SliderCrank::Solution& s, double rtol) {
  double worst = 0.0;
  for (size_t k = 0; k < s.theta.size(); ++k) {
    const double th = s.theta[k], w = s.theta_dot[k], M = mech.mass(th);
    worst = std::max(worst, std::abs(M * mech.theta_ddot(th, w)) * (1.0 + std::abs(th)) + std::abs(M * w) * (1.0 + std::abs(w)));
  }
  return static_cast<double>(s.steps) * rtol * worst;
}

TEST(SliderCrank, FreeReferenceConservesEnergy) {
  const Problem& p = free_problem();
  const SliderCrank mech = mechanism(p);
  const SliderCrank::Solution s = mech.integrate(p.run.output_interval, p.run.end_time, kSliderCrankTol);
  ASSERT_EQ(s.theta.size(), 201u);
  const NaturalCoordinates nat(p.model);
  const double E0 = nat.energy(p.model.initial_q(), p.model.initial_v());
  EXPECT_NEAR(E0, 3.460994, 1e-6);  // J: the problem file's T0 + V0
  double drift = 0.0;
  for (size_t k = 0; k < s.theta.size(); ++k)
    drift = std::max(drift, std::abs(nat.energy(mech.q(s.theta[k]), mech.v(s.theta[k], s.theta_dot[k])) - E0));
  const double bound = energy_bound(mech, s, kSliderCrankTol);
  EXPECT_LT(drift, bound) << "J";
  EXPECT_LT(bound, 1e-6 * E0) << "the bound says nothing";
  // The bound adds every step's worst case; the run itself is at round-off: 1e-12 of E0.
  EXPECT_LT(drift, 1e-12 * E0) << "J";
  // The problem file's motion: 2.77 turns in 2 s.
  EXPECT_NEAR((s.theta.back() - s.theta.front()) / (2.0 * M_PI), 2.77, 0.005);
}

// The torque's work tau (theta - theta0) is the gain of T + V_gravity, both from the model's
// natural coordinates (the kinetic energy of v and the centroids' heights).
TEST(SliderCrank, MotorReferenceGainsTheTorquesWork) {
  const Problem& p = motor_problem();
  const SliderCrank mech = mechanism(p);
  const SliderCrank::Solution s = mech.integrate(p.run.output_interval, p.run.end_time, kSliderCrankTol);
  const NaturalCoordinates nat(p.model);
  const double tau = 2.0;  // N m, the problem file's motor
  const double E0 = nat.kinetic_energy(p.model.initial_v()) + gravity_potential(p.model, p.model.initial_q());
  double worst = 0.0;
  for (size_t k = 0; k < s.theta.size(); ++k) {
    const Eigen::VectorXd q = mech.q(s.theta[k]), v = mech.v(s.theta[k], s.theta_dot[k]);
    const double gain = nat.kinetic_energy(v) + gravity_potential(p.model, q) - E0;
    worst = std::max(worst, std::abs(gain - tau * (s.theta[k] - mech.theta0())));
  }
  const double work = tau * (s.theta.back() - mech.theta0());
  EXPECT_NEAR(work, 39.5, 0.05);  // J: 3.14 turns
  const double bound = energy_bound(mech, s, kSliderCrankTol);
  EXPECT_LT(worst, bound) << "J";
  EXPECT_LT(bound, 1e-6 * work) << "the bound says nothing";
  EXPECT_LT(worst, 1e-12 * work) << "J: round-off";
}

// The reference the harness attaches (P and B at the output times) has the tight run's points and
// an uncertainty (its distance from the run at 100x the tolerance) far below the rule.
TEST(SliderCrank, AttachedReferenceIsTheTightRun) {
  Problem p = free_problem();
  attach_reference(p, ReferenceOptions{});
  ASSERT_TRUE(p.reference_trajectory);
  const ReferenceTrajectory& ref = *p.reference_trajectory;
  ASSERT_EQ(ref.x.rows(), 201);
  ASSERT_EQ(ref.x.cols(), 4);  // crank.P, slider.B
  const SliderCrank mech = mechanism(p);
  const SliderCrank::Solution s = mech.integrate(p.run.output_interval, p.run.end_time, kSliderCrankTol);
  const Eigen::VectorXd q = mech.q(s.theta.back());
  const int c = p.model.find_body("crank");
  const Eigen::Vector2d P = q.segment<2>(p.model.body_offset(c)) + 0.075 * q.segment<2>(p.model.body_offset(c) + 2);
  EXPECT_LT((ref.x.row(200).head<2>().transpose() - P).norm(), 1e-15);
  EXPECT_NEAR(P.norm(), 0.15, 1e-15);  // m: on the crank circle
  EXPECT_NEAR(ref.x(200, 3), 0.0, 1e-15);  // B stays on the slide line
  EXPECT_GT(ref.uncertainty, 0.0);
  EXPECT_LT(ref.uncertainty * kReferenceMargin, p.rule.below);
}

struct Setting {
  const char* formulation;
  const char* integrator;
  double setting;
};

Score simulate(Problem& p, const Setting& r) {
  const Formulation* f = Registry::instance().find(r.formulation);
  EXPECT_NE(f, nullptr) << r.formulation;
  if (!f) return {};
  EXPECT_EQ(f->unsupported_reason(p.model), "") << r.formulation;
  if (!p.reference_trajectory) attach_reference(p, ReferenceOptions{});
  ScoringObserver obs(p, false);
  auto sim = f->create(p.model, r.integrator, r.setting);
  return score_run(p, *sim, obs);
}

// P's and B's largest reference error at h and at h/2 (NaN for a run that did not complete).
std::pair<double, double> errors_at_h_and_half(Problem& p, const char* formulation, const char* integrator, double h) {
  const Score coarse = simulate(p, {formulation, integrator, h});
  const Score fine = simulate(p, {formulation, integrator, h / 2});
  EXPECT_TRUE(coarse.completed && fine.completed) << coarse.error << fine.error;
  if (!coarse.completed || !fine.completed) return {std::nan(""), std::nan("")};
  return {coarse.max_reference_error, fine.max_reference_error};
}

// unprojected/rk4 at h and h/2: P's and B's largest reference error falls by 2^4 within a factor of
// 1.25 (so the reference is what the natural coordinates integrate to, far below the method's error;
// projection/rk4 converges faster than h^4 at these steps, its projection removing part of the
// error, so it shows no clean ratio). projection/dopri5 at rtol 1e-10: each step's local error is held
// to about rtol times the coordinates' 1 m scale and a phase error adds up at most linearly, so the
// error stays below steps x rtol x 1 m, and it passes the rule with the reference's 100x margin.
TEST(SliderCrank, NaturalCoordinatesConvergeToTheReference) {
  for (const Problem* base : {&free_problem(), &motor_problem()}) {
    SCOPED_TRACE(base->name);
    Problem p = *base;
    const auto [coarse, fine] = errors_at_h_and_half(p, "unprojected", "rk4", p.name == "slider_crank" ? 2e-3 : 1e-3);
    EXPECT_GT(coarse / fine, 16.0 / 1.25) << coarse << " -> " << fine;
    EXPECT_LT(coarse / fine, 16.0 * 1.25) << coarse << " -> " << fine;
    const double rtol = 1e-10;
    const Score tight = simulate(p, {"projection", "dopri5", rtol});
    ASSERT_TRUE(tight.completed) << tight.error;
    EXPECT_LT(tight.max_reference_error, static_cast<double>(tight.stats.steps) * rtol * 1.0);  // m
    EXPECT_LT(tight.max_reference_error * kReferenceMargin, p.rule.below);
  }
}

// Which joint is cut changes the joint coordinates, not the motion: recursive/aba-rk4 with the loop
// cut by the rule (at the piston pin B), by the file at the crank pin P, or at the slide, converges
// to the reference at RK4's order or faster (halving h divides P's and B's largest error by at least
// 16 / 1.25; the projection after every step removes part of the error, as projection/rk4's above),
// and at h/2 meets the rule with the reference's margin.
TEST(SliderCrank, RecursiveFollowsTheReferenceWhicheverJointIsCut) {
  Problem base = free_problem();
  attach_reference(base, ReferenceOptions{});
  for (const char* cut : {"", "P", "slide"}) {
    SCOPED_TRACE(cut);
    Problem p = base;
    if (*cut) {
      std::string text = base.text;
      text.insert(text.find("\nrun:") + 1, fmt::format("cut_joints: [{}]\n", cut));
      p = load_problem_text(text, "slider_crank.yaml");
      ASSERT_EQ(p.model.cut_joints.size(), 1u);
      EXPECT_EQ(p.model.elements[p.model.cut_joints[0]]->name, cut);
      p.reference_trajectory = base.reference_trajectory;
    }
    const auto [coarse, fine] = errors_at_h_and_half(p, "recursive", "aba-rk4", 2e-3);
    EXPECT_GT(coarse / fine, 16.0 / 1.25) << coarse << " -> " << fine;
    EXPECT_LT(fine * kReferenceMargin, p.rule.below) << fine;
  }
}

}  // namespace
}  // namespace mbs
