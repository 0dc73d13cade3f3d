// The adaptive embedded Runge-Kutta loop (common/explicit_rk.hpp) on scalar ODEs with closed-form
// solutions: its step-size controller where stability, not accuracy, limits the step, and the
// retry of a step whose stage leaves the right-hand side's domain.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include "common/explicit_rk.hpp"
#include "core/formulation.hpp"

namespace mbs {
namespace {

// y' = -lambda (y - cos t) - sin t, y(0) = 1: the solution is cos t, and its error is damped at the
// rate lambda (Hairer & Wanner, II, IV.2). At a loose tolerance accuracy would allow steps of about
// 0.1 s; stability holds h lambda at the boundary of the method's stability region on the negative
// real axis (3.3 for Dormand-Prince 5(4)). The elementary controller grew the step past it, was
// rejected and repeated (docs/formulations.md, explicit Runge-Kutta); the PI controller settles.
struct StiffCosineOde {
  using State = Eigen::Matrix<double, 1, 1>;
  double lambda = 1e3;
  int size() const { return 1; }
  void rhs(double t, const State& y, State& dydt) { dydt[0] = -lambda * (y[0] - std::cos(t)) - std::sin(t); }
};

// Where the stability region of the propagated (b) method meets the negative real axis: the first
// x at which one step of y' = -x y from y = 1 with h = 1 grows (|R(-x)| > 1), on a grid of 1e-3.
double real_stability_boundary(const ButcherTable& tab) {
  std::vector<double> k(tab.stages);
  for (double x = 1e-3;; x += 1e-3) {
    double y1 = 1.0;
    for (int i = 0; i < tab.stages; ++i) {
      double arg = 1.0;
      for (int j = 0; j < i; ++j) arg += tab.A[i * tab.stages + j] * k[j];
      k[i] = -x * arg;
      y1 += tab.b[i] * k[i];
    }
    if (std::abs(y1) > 1.0) return x;
  }
}

TEST(EmbeddedRk, HoldsTheStepAtTheStabilityBoundaryWithFewRejections) {
  for (const char* table : {"dopri5", "fehlberg8"}) {
    const ButcherTable tab = ButcherTable::from_arkode(table);
    StiffCosineOde ode;
    StiffCosineOde::State y(1.0);
    EmbeddedRk<StiffCosineOde> rk(ode, tab, 1e-4, 1e-4);
    RunStats stats;
    double t = 0.0, max_error = 0.0;
    const double t_end = 10.0;
    rk.initialize(t, y, stats);
    while (t < t_end) {
      rk.step(t, y, t_end, stats);
      ++stats.steps;
      max_error = std::max(max_error, std::abs(y[0] - std::cos(t)));
    }
    const double boundary_steps = t_end * ode.lambda / real_stability_boundary(tab);
    std::printf("%s, stiff cosine at tol 1e-4: %ld steps (stability boundary: %.0f), %ld rejected, max error %.2e\n",
                table, stats.steps, boundary_steps, stats.failures, max_error);
    // Stable at every step: the error stays at the tolerance's size.
    EXPECT_LT(max_error, 1e-3) << table;
    // The steps stay near the boundary: no fewer than it allows, not many more.
    EXPECT_GT(stats.steps, boundary_steps) << table;
    EXPECT_LT(stats.steps, 1.5 * boundary_steps) << table;
    EXPECT_LT(stats.failures, 0.02 * stats.steps) << table << ": " << stats.failures << " rejected of " << stats.steps;
  }
}

// y' = 1 on a domain that reaches only 0.25 past the accepted state: the controller, seeing no
// error, grows the step until a stage leaves the domain and the right-hand side throws
// StageFailure. The embedded method retries the step 4x shorter instead of failing (as
// partitioned's Newton-Raphson does on andrews, where a stage turns the crank past the extremum of
// its independent coordinate), and still lands on y = t.
struct ReachLimitedOde {
  using State = Eigen::Matrix<double, 1, 1>;
  const State* accepted = nullptr;
  int out_of_reach = 0;
  int size() const { return 1; }
  void rhs(double /*t*/, const State& y, State& dydt) {
    if (y[0] - (*accepted)[0] > 0.25) {
      ++out_of_reach;
      throw StageFailure("out of reach");
    }
    dydt[0] = 1.0;
  }
};

TEST(EmbeddedRk, RetriesAStepWhoseStageIsOutOfReach) {
  for (const char* table : {"dopri5", "fehlberg8"}) {
    ReachLimitedOde ode;
    ReachLimitedOde::State y(0.0);
    ode.accepted = &y;
    EmbeddedRk<ReachLimitedOde> rk(ode, ButcherTable::from_arkode(table), 1e-8, 1e-8);
    RunStats stats;
    double t = 0.0;
    rk.initialize(t, y, stats);
    while (t < 10.0) rk.step(t, y, 10.0, stats);
    EXPECT_GT(ode.out_of_reach, 10) << table;
    EXPECT_EQ(stats.failures, ode.out_of_reach) << table;
    EXPECT_NEAR(y[0], 10.0, 1e-12) << table;
  }
}

}  // namespace
}  // namespace mbs
