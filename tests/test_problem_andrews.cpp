// andrews (IFToMM A03, Andrews' squeezing mechanism): the problem file against the Test Set for IVP
// solvers, the data it is written from. The initial configuration rebuilt from the Test Set's
// angles by its own formulas, the spring's initial length and force, one degree of freedom, the
// consistent initial accelerations and multipliers the Test Set prints, the energy balance
// T + V_spring - tau (beta - beta0) at the integrators' orders, ida-index3 and partitioned's
// adaptive cases running (both used to stop), and the point F at 0.03 s against the Test Set's
// reference solution.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "core/formulation.hpp"
#include "core/natural_coordinates.hpp"
#include "elements/spring_damper.hpp"
#include "problem/problem.hpp"
#include "run/scoring.hpp"

namespace mbs {
namespace {

const Problem& problem() {
  static const Problem p = load_problem(MBS_SOURCE_DIR "/problems/andrews.yaml");
  return p;
}

// The Test Set's data (andrews.F, revision 1.2; deTestSet's ex_andrews.R), SI units.
constexpr double kXa = -0.06934, kYa = -0.00227, kXb = -0.03635, kYb = 0.03273, kXc = 0.014, kYc = 0.072;
constexpr double kC0 = 4530.0, kL0 = 0.07785, kMom = 0.033;
constexpr double kRr = 0.007, kD = 0.028, kSs = 0.035, kSc = 0.018, kSd = 0.02, kE = 0.02, kZt = 0.04, kZf = 0.02, kU = 0.04;
constexpr double kMasses[7] = {0.04325, 0.00365, 0.02373, 0.00706, 0.07050, 0.00706, 0.05498};
// Initial angles beta, Theta, gamma, Phi, delta, Omega, epsilon (rad).
constexpr double kBeta = -0.0617138900142764496358948458001, kTheta = 0.0, kGamma = 0.455279819163070380255912382449,
                 kPhi = 0.222668390165885884674473185609, kDelta = 0.487364979543842550225598953530,
                 kOmega = -0.222668390165885884674473185609, kEps = 1.23054744454982119249735015568;
// Consistent initial accelerations of beta and Theta (the others are 0) and multipliers of g1, g2
// (E through the crank chain minus E through the triangle; the others are 0).
constexpr double kBetaDDot = 14222.4439199541138705911625887, kThetaDDot = -10666.8329399655854029433719415;
constexpr double kLambda1 = 98.5668703962410896057654982170, kLambda2 = -6.12268834425566265503114393122;
// beta at t = 0.03 s in the Test Set's reference solution (PSIDE, rtol = atol = 1e-14).
constexpr double kBetaEnd = 15.81077119629904;

Eigen::Vector2d dir(double a) { return {std::cos(a), std::sin(a)}; }
Eigen::Vector2d perp_down(double a) { return {std::sin(a), -std::cos(a)}; }  // dir(a - pi/2)

// World position of BODY.POINT in the initial configuration.
Eigen::Vector2d point(const std::string& body, const std::string& name) {
  const Model& m = problem().model;
  const int k = m.find_body(body);
  EXPECT_GE(k, 0) << body;
  const RigidBody& b = m.bodies[k];
  const int p = b.find_point(name);
  EXPECT_GE(p, 0) << body << "." << name;
  return m.anchor_position(Anchor{kNoPoint, k, b.points[p].second}, m.initial_q());
}

int rank(const Eigen::MatrixXd& A) {
  Eigen::ColPivHouseholderQR<Eigen::MatrixXd> qr(A);
  qr.setThreshold(1e-10);
  return static_cast<int>(qr.rank());
}

TEST(Andrews, ModelHasSevenBodiesOneDegreeOfFreedomAndTheTestSetsMasses) {
  const Model& m = problem().model;
  ASSERT_EQ(m.dim, 2);
  ASSERT_EQ(m.bodies.size(), 7u);
  EXPECT_TRUE(m.points.empty());
  EXPECT_EQ(m.gravity.norm(), 0.0);
  double total = 0.0;
  for (int k = 0; k < 7; ++k) {
    EXPECT_DOUBLE_EQ(m.bodies[k].mass, kMasses[k]) << m.bodies[k].name;
    total += m.bodies[k].mass;
  }
  EXPECT_NEAR(total, 0.21023, 1e-15);
  EXPECT_DOUBLE_EQ(m.bodies[4].principal_inertia()[2], 1.169e-5);  // GA, I5 about its centroid
  // 7 x 6 natural coordinates; 10 revolutes x 2 + 7 x 3 rigidity rows, all independent: 1 DOF.
  const NaturalCoordinates nat(m);
  ASSERT_EQ(nat.nq(), 42);
  ASSERT_EQ(nat.nc(), 41);
  Eigen::MatrixXd J(nat.nc(), nat.nq());
  nat.Phi_q(m.initial_q(), J);
  EXPECT_EQ(rank(J), 41);
  // Closed to round-off as written (the loader only asks 1e-9 m).
  Eigen::VectorXd phi(nat.nc());
  nat.Phi(m.initial_q(), phi);
  EXPECT_LT(phi.cwiseAbs().maxCoeff(), 1e-16);
  EXPECT_TRUE(nat.energy_is_invariant());
}

// The points of the file, against the Test Set's kinematics evaluated at its initial angles.
TEST(Andrews, InitialConfigurationIsTheTestSets) {
  const Eigen::Vector2d O(0.0, 0.0), A(kXa, kYa), B(kXb, kYb);
  const Eigen::Vector2d F = kRr * dir(kBeta);
  const Eigen::Vector2d E = F - kD * dir(kBeta + kTheta);
  const Eigen::Vector2d G = A + kZt * dir(kDelta);
  const Eigen::Vector2d H = A + kU * perp_down(kEps);
  const Eigen::Vector2d D = B + kSd * dir(kGamma) + kSc * perp_down(kGamma);
  // Every loop of the Test Set closes at E.
  EXPECT_LT((B + kSs * perp_down(kGamma) - E).norm(), 1e-16);
  EXPECT_LT((G + kE * perp_down(kPhi + kDelta) - E).norm(), 1e-16);
  EXPECT_LT((H + kZf * dir(kOmega + kEps) - E).norm(), 1e-16);
  const double tol = 1e-16;  // m: 17 digits in the file
  EXPECT_LT((point("OF", "O") - O).norm(), tol);
  EXPECT_LT((point("OF", "F") - F).norm(), tol);
  EXPECT_LT((point("FE", "F") - F).norm(), tol);
  for (const char* body : {"FE", "BDE", "EG", "EH"}) EXPECT_LT((point(body, "E") - E).norm(), tol) << body;
  EXPECT_LT((point("BDE", "B") - B).norm(), tol);
  EXPECT_LT((point("BDE", "D") - D).norm(), tol);
  EXPECT_LT((point("EG", "G") - G).norm(), tol);
  EXPECT_LT((point("GA", "G") - G).norm(), tol);
  EXPECT_LT((point("GA", "A") - A).norm(), tol);
  EXPECT_LT((point("EH", "H") - H).norm(), tol);
  EXPECT_LT((point("HA", "H") - H).norm(), tol);
  EXPECT_LT((point("HA", "A") - A).norm(), tol);
  // The measured point is F.
  EXPECT_EQ(problem().history_name, "OF.F");
  EXPECT_LT((problem().history_point.eval(problem().model.initial_q()) - F).norm(), tol);
}

// The spring from D to C: 0.0526725 m long against l0 = 0.07785 m, pushing with 114.05 N; its
// energy, 1.4358 J, is all the mechanism's initial energy (at rest).
TEST(Andrews, SpringIsCompressedBy114Newtons) {
  const Model& m = problem().model;
  const auto springs = m.elements_of<SpringDamper>();
  ASSERT_EQ(springs.size(), 1u);
  const SpringDamper& s = *springs[0];
  EXPECT_EQ(s.k, kC0);
  EXPECT_EQ(s.c, 0.0);
  EXPECT_EQ(s.rest_length, kL0);
  const Eigen::Vector2d D = Eigen::Vector2d(kXb, kYb) + kSd * dir(kGamma) + kSc * perp_down(kGamma);
  const double l = (D - Eigen::Vector2d(kXc, kYc)).norm();
  const double l_model = s.d.eval(m.initial_q()).norm();
  EXPECT_NEAR(l_model, l, 1e-16);
  EXPECT_NEAR(l, 0.0526725, 1e-7);
  EXPECT_NEAR(kC0 * (l_model - kL0), -114.054, 1e-3);  // N: negative, a compression
  const double V = 0.5 * kC0 * (l - kL0) * (l - kL0);
  EXPECT_NEAR(s.potential_energy(m, m.initial_q()), V, 1e-14);
  EXPECT_NEAR(V, 1.4358, 1e-4);
  const NaturalCoordinates nat(m);
  EXPECT_EQ(nat.kinetic_energy(m.initial_v()), 0.0);
  // The rest of the potential is the motor's -tau theta at theta = beta0.
  EXPECT_NEAR(nat.potential_energy(m.initial_q()), V - kMom * kBeta, 1e-14);
}

// The index-1 equations at rest, [M Phi_q^T; Phi_q 0] [a; lambda] = [Q; 0], give the Test Set's
// consistent accelerations (beta'' and Theta'', from the crank's and the coupler's unit axes; E and
// everything beyond it at rest) and its multipliers (the joint at E between coupler and triangle
// carries lambda1, lambda2 with the Test Set's sign, the other E joints nothing).
TEST(Andrews, InitialAccelerationsAndMultipliersAreTheTestSets) {
  const Model& m = problem().model;
  const NaturalCoordinates nat(m);
  const Eigen::VectorXd q = m.initial_q(), v = m.initial_v();
  Eigen::MatrixXd J(nat.nc(), nat.nq());
  nat.Phi_q(q, J);
  Eigen::VectorXd Q(nat.nq());
  nat.Q(q, v, Q);
  const Eigen::VectorXd Minv = nat.M_diag().cwiseInverse();
  const Eigen::MatrixXd S = J * Minv.asDiagonal() * J.transpose();
  const Eigen::VectorXd lambda = S.fullPivLu().solve(J * Minv.cwiseProduct(Q));
  const Eigen::VectorXd a = Minv.cwiseProduct(Q - J.transpose() * lambda);
  auto angular_acceleration = [&](int k) {  // u1 x u1'' at rest
    const int o = m.body_offset(k) + 2;
    return q[o] * a[o + 1] - q[o + 1] * a[o];
  };
  const double beta_dd = angular_acceleration(m.find_body("OF"));
  const double theta_dd = angular_acceleration(m.find_body("FE")) - beta_dd;
  EXPECT_NEAR(beta_dd / kBetaDDot, 1.0, 1e-12);  // (2e-15 and 5e-14 found)
  EXPECT_NEAR(theta_dd / kThetaDDot, 1.0, 1e-12);
  for (const char* body : {"BDE", "EG", "GA", "EH", "HA"})
    EXPECT_LT(std::abs(angular_acceleration(m.find_body(body))), 1e-9 * kBetaDDot) << body;
  auto multipliers = [&](const std::string& joint) {
    Eigen::Vector2d l = Eigen::Vector2d::Constant(NAN);
    int c = 0;
    for (int k = 0; k < nat.nc(); ++k)
      if (nat.row_element(k) >= 0 && m.elements[nat.row_element(k)]->name == joint) l[c++] = lambda[k];
    EXPECT_EQ(c, 2) << joint;
    return l;
  };
  const Eigen::Vector2d l_bde = multipliers("E_BDE");
  EXPECT_NEAR(l_bde[0], kLambda1, 1e-12 * kLambda1);
  EXPECT_NEAR(l_bde[1], kLambda2, 1e-12 * kLambda1);
  EXPECT_LT(multipliers("E_EG").norm(), 1e-9 * kLambda1);
  EXPECT_LT(multipliers("E_EH").norm(), 1e-9 * kLambda1);
}

struct Setting {
  const char* formulation;
  const char* integrator;
  double setting;
};

Score simulate(const Problem& p, const Setting& r, Eigen::VectorXd* final_q = nullptr) {
  const Formulation* f = Registry::instance().find(r.formulation);
  EXPECT_NE(f, nullptr) << r.formulation;
  if (!f) return {};
  EXPECT_EQ(f->unsupported_reason(p.model), "") << r.formulation;
  ScoringObserver obs(p, false);
  auto sim = f->create(p.model, r.integrator, r.setting);
  Score s = score_run(p, *sim, obs);
  if (final_q) *final_q = obs.final_q();
  return s;
}

// The energy balance T + V_spring - tau (beta - beta0) over the first millisecond: halving the
// step divides the drift by 2^p for methods whose energy error is their truncation error (rk4
// without projection, p = 4: ~15.5 from 1e-4 s; the trapezoidal rule, p = 2: ~4.1), and an
// 8th-order method closes it to round-off. (projection and partitioned also solve constraints to a
// tolerance each step, which puts a floor of 1e-13 and 4e-11 J under their drift here.)
TEST(Andrews, EnergyBalanceClosesAtTheMethodsOrder) {
  Problem p = problem();
  p.run.end_time = 1e-3;
  struct Ordered {
    Setting setting;
    int order;
  };
  const Ordered cases[] = {{{"unprojected", "rk4", 1e-4}, 4}, {{"alm-index3", "trapezoidal", 1e-4}, 2}};
  for (const Ordered& c : cases) {
    SCOPED_TRACE(std::string(c.setting.formulation) + "/" + c.setting.integrator);
    const Score s = simulate(p, c.setting);
    ASSERT_TRUE(s.completed) << s.error;
    Setting half = c.setting;
    half.setting /= 2;
    const Score h = simulate(p, half);
    ASSERT_TRUE(h.completed) << h.error;
    const double ratio = s.max_energy_drift / h.max_energy_drift, expected = std::pow(2.0, c.order);
    EXPECT_GT(ratio, expected / 1.5) << s.max_energy_drift << " -> " << h.max_energy_drift;
    EXPECT_LT(ratio, expected * 1.5) << s.max_energy_drift << " -> " << h.max_energy_drift;
    EXPECT_LT(h.max_energy_drift, 1e-10);  // J
  }
  const Score tight = simulate(p, {"projection", "fehlberg8-fixed", 1e-4});
  ASSERT_TRUE(tight.completed) << tight.error;
  EXPECT_LT(tight.max_energy_drift, 2e-14);  // J: tens of ulps of the 1.44 J in play
}

// ida-index3 used to fail at t = 0 at every rtol (IDA_CONV_FAIL, h cut to 1e-10 s): the weights
// of its first step were computed for h = 1 s with the lightest "mass" a second moment of 2.2e-7
// kg m^2, holding the multipliers that start at zero to 1e-17 N. Now it starts at every rtol, meets
// the rule at 1e-10 with F near the reference, and a second run of the same simulator (as timing
// does) repeats the first exactly.
TEST(Andrews, IdaIndex3StartsAtEveryToleranceAndRepeatsItsRun) {
  Problem first_ms = problem();
  first_ms.run.end_time = 1e-3;
  for (double rtol : {1e-4, 1e-6, 1e-8, 1e-10, 1e-12}) {
    const Score s = simulate(first_ms, {"ida-index3", "bdf", rtol});
    EXPECT_TRUE(s.completed) << "rtol " << rtol << ": " << s.error;
  }
  const Problem& p = problem();
  const Formulation* f = Registry::instance().find("ida-index3");
  auto sim = f->create(p.model, "bdf", 1e-10);
  ScoringObserver obs(p, false), again(p, false);
  const Score s = score_run(p, *sim, obs);
  ASSERT_TRUE(s.completed) << s.error;
  EXPECT_LT(s.max_energy_drift, p.rule.below);  // 1e-5 J
  EXPECT_LT((p.history_point.eval(obs.final_q()) - kRr * dir(kBetaEnd)).norm(), 1e-6);  // m
  const Score r = score_run(p, *sim, again);
  ASSERT_TRUE(r.completed) << r.error;
  EXPECT_EQ(r.stats.steps, s.stats.steps);
  EXPECT_EQ(again.final_q(), obs.final_q());
}

// partitioned's adaptive cases used to stop near t = 0.009 s at every tolerance from 1e-2 to
// 3e-9 (Newton-Raphson on the dependent coordinates not converging): the independent coordinate,
// -sin(beta) of the crank, nears its extremum at beta = pi/2, and a long step's stages turn the
// crank past it, where no dependent coordinates exist. They now retry such a step shorter.
TEST(Andrews, PartitionedAdaptiveRunsAtEveryTolerance) {
  for (const char* integrator : {"dopri5", "fehlberg8"})
    for (double tol : {1e-2, 1e-4, 1e-6, 1e-8}) {
      const Score s = simulate(problem(), {"partitioned", integrator, tol});
      EXPECT_TRUE(s.completed) << integrator << " tol " << tol << ": " << s.error;
      if (tol <= 1e-8) {
        EXPECT_LT(s.max_energy_drift, 1e-6) << integrator;
      }
    }
}

// The whole 0.03 s: two formulations at tight tolerances put F where the Test Set's reference
// solution does, rr (cos beta, sin beta) at beta(0.03) = 15.81077119629904 rad.
TEST(Andrews, PointFAtTheEndAgreesWithTheTestSetsReference) {
  const Problem& p = problem();
  const Eigen::Vector2d F_ref = kRr * dir(kBetaEnd);
  for (const Setting& r : {Setting{"projection", "fehlberg8", 1e-10}, Setting{"partitioned", "fehlberg8", 1e-10}}) {
    SCOPED_TRACE(std::string(r.formulation) + "/" + r.integrator);
    Eigen::VectorXd q;
    const Score s = simulate(p, r, &q);
    ASSERT_TRUE(s.completed) << s.error;
    EXPECT_DOUBLE_EQ(s.final_time, 0.03);
    const Eigen::Vector2d F = p.history_point.eval(q);
    EXPECT_LT((F - F_ref).norm(), 1e-9) << F.transpose();  // m: 1e4 times inside the A03 rule's 1e-5 m
    EXPECT_LT(s.max_energy_drift, 1e-8);
    // The whole state in the Test Set's seven angles (run.final_angles) against its reference at 0.03 s.
    ASSERT_EQ(s.final_angles.size(), 7u);
    for (size_t i = 0; i < 7; ++i)
      EXPECT_NEAR(s.final_angles[i], p.run.final_angles[i].published, 1e-7) << p.run.final_angles[i].name;
  }
}

}  // namespace
}  // namespace mbs
