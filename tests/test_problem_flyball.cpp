// flyball_governor (IFToMM A05, stiff flyball governor): the model the problem file describes
// (masses and inertias with the flyballs folded into the rods, the initial spring lengths, the
// degrees of freedom, a consistent initial state spinning rigidly at 2 pi rad/s), and its
// invariants over a short run of an implicit formulation: the angular momentum about the shaft is
// conserved (gravity is parallel to it, the joints are frictionless, nothing drives the shaft) and
// the mechanical energy never increases (the dampers only dissipate).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "core/formulation.hpp"
#include "core/natural_coordinates.hpp"
#include "elements/spring_damper.hpp"
#include "problem/problem.hpp"

namespace mbs {
namespace {

const Problem& problem() {
  static const Problem p = load_problem(MBS_SOURCE_DIR "/problems/flyball_governor.yaml");
  return p;
}

// Closed forms from the spec, independent of the loader: prisms a x a x L of density rho, the
// flyball m_b at the rod's end, the rods alpha below the horizontal from hinges +-e on top.
constexpr double kRho = 3000.0, kA = 0.01, kL = 1.0, kBall = 5.0, kE = 0.05, kOmega0 = 2 * M_PI;
const double kPrism = kRho * kA * kA * kL;                           // 0.3 kg
const double kPrismAxial = kPrism * 2 * kA * kA / 12;                 // 5e-6 kg m^2
const double kPrismTransverse = kPrism * (kL * kL + kA * kA) / 12;    // 2.50025e-2 kg m^2
const double kCos = std::cos(M_PI / 6), kSin = 0.5;

int rank(const Eigen::MatrixXd& A) {
  Eigen::ColPivHouseholderQR<Eigen::MatrixXd> qr(A);
  qr.setThreshold(1e-10);
  return static_cast<int>(qr.rank());
}

// Angular momentum about the origin (N m s) in natural coordinates: a body's is
// m r_G x r_G' + sum_k J_k u_k x u_k' (its central inertia I = tr(J) 1 - sum_k J_k u_k u_k^T, and
// u_k' = omega x u_k), so no angular velocity need be extracted.
Eigen::Vector3d angular_momentum(const Model& m, const Eigen::VectorXd& q, const Eigen::VectorXd& v) {
  Eigen::Vector3d H = Eigen::Vector3d::Zero();
  for (int k = 0; k < static_cast<int>(m.bodies.size()); ++k) {
    const int o = m.body_offset(k);
    H += m.bodies[k].mass * Eigen::Vector3d(q.segment<3>(o)).cross(Eigen::Vector3d(v.segment<3>(o)));
    for (int a = 0; a < 3; ++a)
      H += m.bodies[k].second_moments[a] *
           Eigen::Vector3d(q.segment<3>(o + 3 + 3 * a)).cross(Eigen::Vector3d(v.segment<3>(o + 3 + 3 * a)));
  }
  return H;
}

TEST(FlyballGovernor, MassesAndInertiasWithTheFlyballsFolded) {
  const Model& m = problem().model;
  ASSERT_EQ(m.dim, 3);
  ASSERT_EQ(m.bodies.size(), 4u);
  ASSERT_TRUE(m.points.empty());
  const RigidBody& shaft = m.bodies[m.find_body("shaft")];
  const RigidBody& slider = m.bodies[m.find_body("slider")];
  EXPECT_NEAR(shaft.mass, 0.3, 1e-14);
  EXPECT_NEAR(slider.mass, 3.0, 1e-14);
  // Spec, derived: prism Ixx = Iyy = 2.500250e-2, Izz = 5e-6; slider 5e-3 about every axis.
  EXPECT_NEAR(kPrismTransverse, 2.500250e-2, 1e-9);
  EXPECT_LT((shaft.principal_inertia() - Eigen::Vector3d(kPrismTransverse, kPrismTransverse, kPrismAxial)).norm(), 1e-15);
  EXPECT_LT((slider.principal_inertia() - Eigen::Vector3d::Constant(5e-3)).norm(), 1e-15);

  // A rod with its flyball: 5.3 kg, centroid 0.971698 m from the hinge (spec, derived), central
  // inertia axial 5e-6 (the ball is on the axis) and transverse by the parallel-axis theorem.
  const double M = kPrism + kBall, c = kBall * kL / 2 / M;  // centroid from the rod's midpoint
  const double transverse = kPrismTransverse + kPrism * c * c + kBall * (kL / 2 - c) * (kL / 2 - c);
  for (const char* name : {"rod_AC", "rod_BD"}) {
    SCOPED_TRACE(name);
    const RigidBody& rod = m.bodies[m.find_body(name)];
    EXPECT_NEAR(rod.mass, 5.3, 1e-14);
    EXPECT_NEAR(kL / 2 + c, 0.971698, 1e-6);
    EXPECT_LT((rod.principal_inertia() - Eigen::Vector3d(kPrismAxial, transverse, transverse)).norm(), 1e-14);
    // Centroid at hinge + 0.971698 m along the rod, 30 deg below the horizontal, outward.
    const double side = std::string(name) == "rod_AC" ? 1.0 : -1.0;
    const Eigen::Vector3d hinge(side * kE, 0.0, 1.0), dir(side * kCos, 0.0, -kSin);
    EXPECT_LT((rod.r0 - (hinge + (kL / 2 + c) * dir)).norm(), 1e-15);
    // EXU's initial centroid speed 5.60155553 m/s = 2 pi (0.05 + 0.971698 cos 30 deg), along +-y.
    EXPECT_NEAR(rod.v0.norm(), 5.60155553, 1e-8);
    EXPECT_LT((rod.v0 - kOmega0 * Eigen::Vector3d::UnitZ().cross(Eigen::Vector3d(rod.r0))).norm(), 1e-14);
  }
}

TEST(FlyballGovernor, SpringsStartAtTheirRestLength) {
  const Model& m = problem().model;
  const auto springs = m.elements_of<SpringDamper>();
  ASSERT_EQ(springs.size(), 2u);
  const Eigen::VectorXd q0 = m.initial_q(), v0 = m.initial_v();
  for (const SpringDamper* s : springs) {
    SCOPED_TRACE(s->name);
    EXPECT_EQ(s->k, 8e5);
    EXPECT_EQ(s->c, 4e4);
    EXPECT_EQ(s->rest_length, 0.5);
    // E (or F), the hinge and the rod's midpoint form an equilateral triangle of side 0.5 m.
    EXPECT_NEAR(s->d.eval(q0).norm(), 0.5, 1e-15);
    // A rigid rotation does not stretch it: l' = 0.
    EXPECT_NEAR(s->d.eval(q0).dot(s->d.rate(v0)), 0.0, 1e-14);
  }
  // So no force at t = 0: the spring-dampers' Q is gravity's alone.
  const NaturalCoordinates nat(m);
  Eigen::VectorXd Q(nat.nq());
  nat.Q(q0, v0, Q);
  EXPECT_LT((Q - nat.Q()).cwiseAbs().maxCoeff(), 1e-9);
}

// 4 bodies x 12 natural coordinates, 4 joints x 5 rows + 4 x 6 rigidity rows, all independent:
// 48 - 44 = 4 degrees of freedom (shaft angle, slider height, one angle per rod). The springs couple
// the slider and the rods by forces only, so the rods' angles stay independent coordinates.
TEST(FlyballGovernor, FourDegreesOfFreedomAndAConsistentInitialState) {
  const Model& m = problem().model;
  const NaturalCoordinates nat(m);
  EXPECT_EQ(nat.nq(), 48);
  EXPECT_EQ(nat.nc(), 44);
  const Eigen::VectorXd q0 = m.initial_q(), v0 = m.initial_v();
  Eigen::MatrixXd J(nat.nc(), nat.nq());
  nat.Phi_q(q0, J);
  EXPECT_EQ(rank(J), nat.nc());
  EXPECT_EQ(nat.nq() - rank(J), 4);
  Eigen::VectorXd phi(nat.nc()), phi_v(nat.nc());
  nat.Phi(q0, phi);
  nat.Phi_q_times(q0, v0, phi_v);
  EXPECT_LT(phi.cwiseAbs().maxCoeff(), 1e-15);   // m
  EXPECT_LT(phi_v.cwiseAbs().maxCoeff(), 1e-14); // m/s
  // Every body turns at omega0 about z.
  for (int k = 0; k < 4; ++k)
    EXPECT_LT((nat.angular_velocity(k, q0, v0) - kOmega0 * Eigen::Vector3d::UnitZ()).norm(), 1e-14) << m.bodies[k].name;
  // The angular momentum about z from the spec's closed forms: shaft and slider about their axis;
  // each rod's prism about its centroid (axis 30 deg below the horizontal: sin^2 = 1/4 of the axial
  // moment, cos^2 = 3/4 of the transverse) plus its midpoint and its ball off the axis.
  const double x_mid = kE + kL / 2 * kCos, x_ball = kE + kL * kCos;
  const double rod = kPrismAxial / 4 + 3 * kPrismTransverse / 4 + kPrism * x_mid * x_mid + kBall * x_ball * x_ball;
  const double Izz = kPrismAxial + 5e-3 + 2 * rod;
  const Eigen::Vector3d H = angular_momentum(m, q0, v0);
  EXPECT_NEAR(H[2], kOmega0 * Izz, 1e-12 * H[2]);
  EXPECT_LT(H.head<2>().norm(), 1e-13);  // symmetric about the shaft
  // The slider's centre is at s = 0.5 m and the history records it.
  EXPECT_EQ(q0[m.position_offset("slider") + 2], 0.5);
  EXPECT_EQ(problem().history_name, "slider");
}

// Invariants along a run, at every reported step: the angular momentum about z (its drift from the
// initial value), the energy's largest rise above its lowest value so far, and the energy balance
// E(t) - E(0) + W(t) with W the work the dampers dissipate, c l'^2 integrated by the trapezoidal rule
// over the steps (exactly zero in the exact motion, and W never decreases).
struct Invariants final : StepObserver {
  explicit Invariants(const Model& model) : m(model), nat(model), springs(model.elements_of<SpringDamper>()) {}
  double dissipation_rate(const Eigen::VectorXd& q, const Eigen::VectorXd& v) const {
    double p = 0.0;
    for (const SpringDamper* s : springs) {
      const auto x = s->d.eval(q);
      const double l_dot = x.dot(s->d.rate(v)) / x.norm();
      p += s->c * l_dot * l_dot;
    }
    return p;
  }
  void on_step(double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v) override {
    const double Hz = angular_momentum(m, q, v)[2], E = nat.energy(q, v), P = dissipation_rate(q, v);
    if (steps == 0) H0 = Hz, E0 = E, E_min = E;
    else W += 0.5 * (P + P_prev) * (t - t_prev);
    max_dH = std::max(max_dH, std::abs(Hz - H0));
    E_min = std::min(E_min, E);
    max_rise = std::max(max_rise, E - E_min);
    max_balance = std::max(max_balance, std::abs(E - E0 + W));
    t_prev = t, P_prev = P;
    s_final = q[m.position_offset("slider") + 2];
    ++steps;
  }
  const Model& m;
  NaturalCoordinates nat;
  std::vector<const SpringDamper*> springs;
  double H0 = 0, E0 = 0, E_min = 0, W = 0, t_prev = 0, P_prev = 0;
  double max_dH = 0, max_rise = 0, max_balance = 0, s_final = 0;
  long steps = 0;
};

Invariants run(const char* formulation, const char* integrator, double setting, double t_end) {
  const Formulation* f = Registry::instance().find(formulation);
  EXPECT_NE(f, nullptr);
  EXPECT_EQ(f->unsupported_reason(problem().model), "");
  Invariants obs(problem().model);
  auto sim = f->create(problem().model, integrator, setting);
  sim->run(t_end, &obs);
  EXPECT_DOUBLE_EQ(obs.t_prev, t_end);
  return obs;
}

// alm-index3 (trapezoidal rule, second order) over the first half swing, 0.5 s, in which the
// flyballs rise and the slider climbs 0.24 m, at h = 1e-3 s and 5e-4 s. Nothing applies a moment
// about z, so the angular momentum about the shaft keeps its initial value (53.87 N m s) up to the
// method's error, which falls as h^2 (measured: 6.3e-5 -> 1.6e-5 N m s). The energy falls only
// by what the dampers dissipate: the balance E - E0 + W closes up to the method's error, also
// O(h^2); the energy's rises above its running minimum (which the exact motion never has) are
// that same error: the trapezoidal rule trades energy between the stiff damped modes, which it
// does not damp (|R(h lambda)| -> 1), and the swing (measured 4.0e-4 J at h = 1e-3 s, 7.8e-5 J at
// 5e-4 s; the balance 4.4e-4 and 1.1e-4 J).
TEST(FlyballGovernor, AngularMomentumAboutTheShaftIsConservedAndEnergyOnlyDissipated) {
  constexpr double kTEnd = 0.5;  // s
  const Invariants coarse = run("alm-index3", "trapezoidal", 1e-3, kTEnd);
  const Invariants fine = run("alm-index3", "trapezoidal", 5e-4, kTEnd);
  SCOPED_TRACE(::testing::Message() << "H0 " << coarse.H0 << " N m s; dH " << coarse.max_dH << " -> " << fine.max_dH
                                    << "; balance " << coarse.max_balance << " -> " << fine.max_balance << " J; rise "
                                    << coarse.max_rise << " -> " << fine.max_rise << " J; dissipated " << fine.W << " J");
  EXPECT_NEAR(coarse.H0, 53.869, 1e-3);  // N m s
  // Order 2: halving h divides the errors by about 4 (3 allows for the higher-order terms).
  EXPECT_LT(coarse.max_dH, 1e-4);  // N m s, 2e-6 of H0
  EXPECT_LT(fine.max_dH, coarse.max_dH / 3);
  EXPECT_LT(coarse.max_balance, 1e-3);  // J
  EXPECT_LT(fine.max_balance, coarse.max_balance / 3);
  EXPECT_LT(coarse.max_rise, 1e-3);  // J
  EXPECT_LT(fine.max_rise, coarse.max_rise / 3);
  // The dampers take a few mJ (2.5e-3 J by 0.5 s), and the energy ends below where it started.
  EXPECT_GT(fine.W, 1e-3);
  EXPECT_LT(fine.E_min, fine.E0 - 1e-3);
  // The slider has climbed to near the top of the swing, 0.74 m, the same for both steps.
  EXPECT_NEAR(fine.s_final, 0.7432, 1e-3);
  EXPECT_NEAR(coarse.s_final, fine.s_final, 1e-6);
}

// A converged run never gains energy at all: projection/dopri5 at tol 1e-9 (explicit, its step held
// below RK's stability limit by the controller, ~1e-4 s) over the first 0.2 s. From step to step the
// energy (239 J) never rises by more than round-off (measured: never above 3e-14 J, one ulp), and
// the angular momentum about the shaft stays at its initial value to round-off (measured 3e-13).
TEST(FlyballGovernor, AConvergedRunNeverGainsEnergy) {
  struct Steps final : StepObserver {
    explicit Steps(const Model& model) : m(model), nat(model) {}
    void on_step(double, const Eigen::VectorXd& q, const Eigen::VectorXd& v) override {
      const double E = nat.energy(q, v), Hz = angular_momentum(m, q, v)[2];
      if (n++ == 0) E_prev = E0 = E, H0 = Hz;
      max_step_rise = std::max(max_step_rise, E - E_prev);
      max_dH = std::max(max_dH, std::abs(Hz - H0));
      E_prev = E;
    }
    const Model& m;
    NaturalCoordinates nat;
    double E0 = 0, E_prev = 0, H0 = 0, max_step_rise = 0, max_dH = 0;
    long n = 0;
  } obs(problem().model);
  auto sim = Registry::instance().find("projection")->create(problem().model, "dopri5", 1e-9);
  sim->run(0.2, &obs);
  EXPECT_GT(obs.n, 1000);
  EXPECT_LT(obs.max_step_rise, 1e-12);          // J: 4e-15 of the energy
  EXPECT_LT(obs.max_dH, 1e-10);                 // N m s
  EXPECT_LT(obs.E_prev, obs.E0 - 1e-3);         // J: the dampers took 2.4e-3 J by then
}

}  // namespace
}  // namespace mbs
