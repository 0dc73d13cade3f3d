// Formulations "projection" and "unprojected" (natural coordinates, index-1 equations through
// G M^-1 G^T, explicit Runge-Kutta; with and without the mass-orthogonal projection after every
// step): constraints at round-off with projection and drifting without, the methods' orders, the
// redundant pinned bar, a closed four-bar loop, solver errors and allocation-free dynamic paths.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "core/formulation.hpp"
#include "elements/rod.hpp"
#include "core/natural_coordinates.hpp"
#include "problem/problem.hpp"
#include "projection/projection.hpp"
#include "projection/projection_ode.hpp"
#include "run/bench_case.hpp"
#include "support/alloc_counter.hpp"
#include "support/models.hpp"
#include "support/monitor.hpp"

namespace mbs {
namespace {

using testing::Monitor;

const Problem& pendulum() {
  static const Problem p = load_problem(MBS_SOURCE_DIR "/problems/planar_pendulum.yaml");
  return p;
}
const Problem& pinned_bar() {
  static const Problem p = load_problem(MBS_SOURCE_DIR "/problems/pinned_bar.yaml");
  return p;
}

const Formulation& formulation(const char* name) {
  const Formulation* f = Registry::instance().find(name);
  EXPECT_NE(f, nullptr) << name;
  return *f;
}

Monitor run(const char* name, const Model& model, const std::string& integrator, double setting, double t_end,
            long* steps = nullptr) {
  Monitor m(model);
  auto sim = formulation(name).create(model, integrator, setting);
  sim->run(t_end, &m);
  if (steps != nullptr) *steps = sim->stats().steps;
  return m;
}

using testing::four_bar;

constexpr const char* kIntegrators[] = {"rk4", "fehlberg8-fixed", "dop853-fixed", "dopri5", "fehlberg8"};
double setting_for(const std::string& integrator, double h, double tol) {
  return integrator == "rk4" || integrator == "fehlberg8-fixed" || integrator == "dop853-fixed" ? h : tol;
}

// ---------------------------------------------------------------------------------------------
// DOP853's table (typed in common/butcher_tables.cpp, not read from ARKODE): its order conditions

TEST(Dop853, TableMeetsTheQuadratureAndSecondLevelOrderConditions) {
  const ButcherTable t = ButcherTable::dop853();
  const int s = t.stages;
  ASSERT_EQ(s, 12);
  for (int i = 0; i < s; ++i) {  // c_i = sum_j a_ij
    double row = 0.0;
    for (int j = 0; j < i; ++j) row += t.A[i * s + j];
    EXPECT_NEAR(row, t.c[i], 1e-14) << "stage " << i + 1;
    for (int j = i; j < s; ++j) EXPECT_EQ(t.A[i * s + j], 0.0) << "explicit: a_" << i + 1 << j + 1;
  }
  for (int k = 0; k < 8; ++k) {  // sum b_i c_i^k = 1 / (k + 1): the bushy trees up to order 8
    double sum = 0.0;
    for (int i = 0; i < s; ++i) sum += t.b[i] * std::pow(t.c[i], k);
    EXPECT_NEAR(sum, 1.0 / (k + 1), 1e-14) << "k = " << k;
  }
  for (int k = 0; k < 7; ++k) {  // sum b_i a_ij c_j^k = 1 / ((k + 1)(k + 2)) up to order 8
    double sum = 0.0;
    for (int i = 0; i < s; ++i)
      for (int j = 0; j < i; ++j) sum += t.b[i] * t.A[i * s + j] * std::pow(t.c[j], k);
    EXPECT_NEAR(sum, 1.0 / ((k + 1) * (k + 2)), 1e-14) << "k = " << k;
  }
}

// The pendulum's angle ODE theta'' = -sin(theta) from theta = 2 rad at rest over 2 s: the global
// error of an 8th-order method falls by 2^8 = 256 when h halves (h = 0.4 -> 0.2 -> 0.1 s against
// h = 0.005 s; measured 2e-9, 7e-12, 3e-14, ratios 269 and 278; below 0.1 s round-off takes over);
// bounds 256 / 1.5 to 256 x 1.5.
TEST(Dop853, GlobalErrorFallsAtEighthOrder) {
  struct AngleOde {
    using State = Eigen::Vector2d;
    int size() const { return 2; }
    void rhs(double /*t*/, const State& y, State& dydt) const { dydt << y[1], -std::sin(y[0]); }
  };
  AngleOde ode;
  FixedButcherRk<AngleOde> rk(ode, ButcherTable::dop853());
  RunStats stats;
  auto solve = [&](double h) {
    AngleOde::State y(2.0, 0.0);
    const int n = static_cast<int>(std::lround(2.0 / h));
    for (int i = 0; i < n; ++i) rk.step(i * h, h, y, stats);
    return y;
  };
  const AngleOde::State ref = solve(0.005);
  const double e1 = (solve(0.4) - ref).norm(), e2 = (solve(0.2) - ref).norm(), e3 = (solve(0.1) - ref).norm();
  EXPECT_GT(e1 / e2, 256 / 1.5) << e1 << ", " << e2;
  EXPECT_LT(e1 / e2, 256 * 1.5) << e1 << ", " << e2;
  EXPECT_GT(e2 / e3, 256 / 1.5) << e2 << ", " << e3;
  EXPECT_LT(e2 / e3, 256 * 1.5) << e2 << ", " << e3;
}

// ---------------------------------------------------------------------------------------------
// Projection keeps the constraints at round-off; without it they drift

TEST(Projection, PendulumConstraintsAtRoundOffAfterEveryStepWithProjectionOnly) {
  const Model& model = pendulum().model;  // L = 1 m, |v| <= 4.43 m/s
  for (const char* integrator : kIntegrators) {
    SCOPED_TRACE(integrator);
    const double setting = setting_for(integrator, 0.02, 1e-6);
    const Monitor p = run("projection", model, integrator, setting, 10.0);
    // Gauss-Newton stops at |Phi| <= 1e-14 L (kProjectionPhiTol) or after a correction below
    // 1e-8 L (which leaves ~|dq|^2 / 2L ~ 5e-17 m); the velocity projection leaves round-off of
    // |v| ~ 4 m/s (a few 1e-16 m/s).
    EXPECT_LE(p.max_Phi, kProjectionPhiTol);
    EXPECT_LT(p.max_Phi_dot, 1e-14);
    const Monitor u = run("unprojected", model, integrator, setting, 10.0);
    // Without projection the index-1 equations only keep Phi'' = 0 as well as the integrator does:
    // the violations grow far above round-off.
    EXPECT_GT(u.max_Phi, 100 * std::max(p.max_Phi, 1e-15));
    EXPECT_GT(u.max_Phi_dot, 100 * std::max(p.max_Phi_dot, 1e-15));
  }
}

// ---------------------------------------------------------------------------------------------
// Orders

// Energy drift of the index-1 method without projection ("unprojected") when h halves. RK4: the global error of a
// 4th-order method, ratio 16 (measured 15.8-16.0 from h = 0.04 to 0.005 s), within a factor 1.5.
// Fehlberg's 8th-order weights at a fixed step: measured 102 (0.04 / 0.02 s) and 128 (0.02 / 0.01 s),
// i.e. the max drift falls at ~7th order in this range, not the 2^8 = 256 of the asymptotic
// global error; the bound admits 2^7 / 1.5 to 2^8 x 1.5 (below 0.01 s the drift reaches round-off,
// ~3e-13 J).
TEST(Unprojected, EnergyDriftFallsAtTheMethodsOrderWhenTheStepHalves) {
  const Model& model = pendulum().model;
  struct Order {
    const char* integrator;
    double h;
    double low, high;  // bounds of the ratio
  };
  for (const Order& o : {Order{"rk4", 0.02, 16 / 1.5, 16 * 1.5}, Order{"rk4", 0.01, 16 / 1.5, 16 * 1.5},
                         Order{"fehlberg8-fixed", 0.04, 128 / 1.5, 256 * 1.5},
                         Order{"fehlberg8-fixed", 0.02, 128 / 1.5, 256 * 1.5}}) {
    SCOPED_TRACE(std::string(o.integrator) + " at h = " + std::to_string(o.h));
    const Monitor coarse = run("unprojected", model, o.integrator, o.h, 10.0);
    const Monitor fine = run("unprojected", model, o.integrator, o.h / 2, 10.0);
    const double ratio = coarse.max_drift / fine.max_drift;
    EXPECT_GT(ratio, o.low) << coarse.max_drift << " J, " << fine.max_drift << " J";
    EXPECT_LT(ratio, o.high) << coarse.max_drift << " J, " << fine.max_drift << " J";
  }
}

// With projection RK4's max energy drift falls at least at its order: measured 29-31 per halving
// (h = 0.04 to 0.005 s), ~2^5: the energy error of each step, O(h^5), which the projection keeps
// from accumulating over this periodic orbit. Bounds: 16 / 1.5 to 32 x 1.5.
TEST(Projection, EnergyDriftFallsAtTheMethodsOrderWhenTheStepHalves) {
  const Model& model = pendulum().model;
  for (double h : {0.02, 0.01}) {
    SCOPED_TRACE(h);
    const Monitor coarse = run("projection", model, "rk4", h, 10.0);
    const Monitor fine = run("projection", model, "rk4", h / 2, 10.0);
    const double ratio = coarse.max_drift / fine.max_drift;
    EXPECT_GT(ratio, 16.0 / 1.5) << coarse.max_drift << " J, " << fine.max_drift << " J";
    EXPECT_LT(ratio, 32.0 * 1.5) << coarse.max_drift << " J, " << fine.max_drift << " J";
  }
}

// ---------------------------------------------------------------------------------------------
// Redundant constraints: the pinned bar (12 rows, rank 11)

TEST(Projection, PinnedBarDropsOneRedundantRowAndReproducesOmegaAtTheVertical) {
  const Problem& p = pinned_bar();
  for (const char* name : {"projection", "unprojected"}) {
    SCOPED_TRACE(name);
    auto sim = formulation(name).create(p.model, "rk4", 1.0 / 256);
    const auto& run_info = dynamic_cast<const projection::ProjectionRun&>(*sim);
    EXPECT_EQ(run_info.dropped_rows(), 1);
    EXPECT_EQ(run_info.kept_rows(), p.model.nc() - 1);
    EXPECT_EQ(run_info.projects(), std::string(name) == "projection");
    for (const char* integrator : {"rk4", "fehlberg8-fixed"}) {
      SCOPED_TRACE(integrator);
      CaseOptions o;
      o.min_time_s = 1e-4;
      o.step = *p.published_step;  // h = 2^-8 s
      const CaseResult row = run_case(p, formulation(name), IntegratorInfo{integrator, SettingKind::kFixedStep, 0.5, 1e-5, "", ""}, o);
      ASSERT_TRUE(row.score.completed) << row.message;
      ASSERT_EQ(row.score.checks.size(), 2u);
      // Exact 2.11565 rad/s; interpolated, within the rule's 1e-4 relative (RK4's energy error at
      // 2^-8 s is ~1e-9 J of the 3.3e-3 J gained, the quadratic's sampling error smaller).
      EXPECT_NEAR(row.score.checks[1].target, 2.11565, 1e-5);
      EXPECT_NEAR(row.score.checks[1].value, row.score.checks[1].target, 1e-4 * row.score.checks[1].target);
      EXPECT_LT(row.score.max_energy_drift, 3e-7);
    }
  }
  // All 12 rows, the dropped one included, hold to round-off with projection.
  const Monitor m = run("projection", p.model, "rk4", 1.0 / 256, 1.0);
  EXPECT_LE(m.max_Phi, kProjectionPhiTol);
  EXPECT_LT(m.max_Phi_dot, 1e-14);
}

// ---------------------------------------------------------------------------------------------
// A closed loop

TEST(Projection, FourBarClosesTheLoopAtEveryStepAndConservesEnergyToTheMethodsOrder) {
  const Model model = four_bar();  // E = 14.2 J
  const double t_end = 2.0;
  const Monitor coarse = run("projection", model, "rk4", 0.0025, t_end);
  const Monitor fine = run("projection", model, "rk4", 0.00125, t_end);
  const double ratio = coarse.max_drift / fine.max_drift;
  EXPECT_GT(ratio, 16.0 / 1.5) << coarse.max_drift << " J, " << fine.max_drift << " J";
  EXPECT_LT(ratio, 16.0 * 1.5) << coarse.max_drift << " J, " << fine.max_drift << " J";
  EXPECT_LT(fine.max_Phi, 1e-14 * 2);      // scale: the largest coordinate, 2 m (O2's x)
  EXPECT_LT(fine.max_Phi_dot, 1e-13);
  // Against an independent formulation: the augmented Lagrangian at h = 1e-4 s (O(h^2) error ~5e-7 m).
  Monitor alm(model);
  formulation("alm-index3").create(model, "trapezoidal", 1e-4)->run(t_end, &alm);
  EXPECT_LT((fine.q_final - alm.q_final).cwiseAbs().maxCoeff(), 2e-6);
  // The 8th-order methods agree with RK4 (whose error at 1.25e-3 s is ~2e-8 m).
  for (const char* integrator : {"fehlberg8-fixed", "dopri5", "fehlberg8"}) {
    SCOPED_TRACE(integrator);
    const Monitor m = run("projection", model, integrator, setting_for(integrator, 0.01, 1e-10), t_end);
    EXPECT_LT((m.q_final - fine.q_final).cwiseAbs().maxCoeff(), 1e-7);
    EXPECT_LT(m.max_Phi, 1e-14 * 2);
    EXPECT_LT(m.max_Phi_dot, 1e-13);
  }
}

// ---------------------------------------------------------------------------------------------
// What is refused, and errors

// Contacts are accepted (their physics: tests/test_contacts.cpp); Baumgarte's feedback, which has
// no row for a closed contact, is not.
TEST(Projection, TakesContactsRefusesUnknownIntegratorsAndBadSettings) {
  const Problem wall = load_problem(MBS_SOURCE_DIR "/problems/double_pendulum_wall.yaml");
  for (const char* name : {"projection", "unprojected"}) {
    EXPECT_EQ(formulation(name).unsupported_reason(wall.model), "");
    EXPECT_EQ(formulation(name).unsupported_reason(pendulum().model), "");
    EXPECT_THROW(formulation(name).create(pendulum().model, "euler", 0.01), SolverError);
    EXPECT_THROW(formulation(name).create(pendulum().model, "rk4", -1.0), SolverError);
    EXPECT_NE(formulation(name).linearization_unsupported_reason(pendulum().model), "");
  }
  EXPECT_NE(formulation("baumgarte").unsupported_reason(wall.model).find("contacts"), std::string::npos);
}

// ---------------------------------------------------------------------------------------------
// Allocation-free on the dynamic-size paths (the pendulum's fixed-size path is in test_allocations)

TEST(Projection, DynamicSizePathsAllocateNothing) {
  MBS_SKIP_WITHOUT_ALLOCATION_COUNTING();
  Model redundant = four_bar();
  redundant.elements.push_back(redundant.elements[1]);
  const Model double_pendulum = testing::chain_model(2, {{1.0, {1.0, 0.0, 0.0}}, {0.5, {1.7, 0.0, 0.0}}});
  const Model bar_on_pins = pinned_bar().model, loop = four_bar();
  for (const Model* model : std::initializer_list<const Model*>{&loop, &redundant, &double_pendulum, &bar_on_pins}) {
    for (const char* name : {"projection", "unprojected"}) {
      for (const char* integrator : kIntegrators) {
        SCOPED_TRACE(std::string(name) + "/" + integrator + ", nq = " + std::to_string(model->nq()));
        auto sim = formulation(name).create(*model, integrator, setting_for(integrator, 1e-2, 1e-7));
        sim->run(1.0, nullptr);  // warm-up
        EXPECT_EQ(testing::allocations_during([&] { sim->run(1.0, nullptr); }), 0);
      }
    }
  }
}

}  // namespace
}  // namespace mbs
