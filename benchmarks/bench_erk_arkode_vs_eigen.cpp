// The question for the minimal formulation's adaptive integrator: SUNDIALS ARKODE's ERKStep
// or our fixed-size Eigen loop (formulations/common/explicit_rk.hpp)? Both integrate the same
// 1-DOF pendulum ODE theta'' = -(g/L) sin(theta) over 10 s (release at 90 degrees) with the same
// Butcher table and tolerance; each reports steps and the final angle error against the exact
// elliptic-function solution, so time is compared at known accuracy.
#include <arkode/arkode_erkstep.h>
#include <benchmark/benchmark.h>
#include <nvector/nvector_serial.h>

#include <cmath>
#include <stdexcept>
#include <string>

#include "common/explicit_rk.hpp"
#include "references/simple_pendulum.hpp"

namespace {

constexpr double kG = 9.81, kL = 1.0, kTheta0 = M_PI / 2, kTEnd = 10.0;

double exact_theta_end() {
  static const double th = mbs::SimplePendulumExact(kL, kG, kTheta0).theta(kTEnd);
  return th;
}

struct PendulumOde {
  using State = Eigen::Vector2d;
  int size() const { return 2; }
  void rhs(double, const State& y, State& dy) const { dy = State(y[1], -(kG / kL) * std::sin(y[0])); }
};

void BM_EigenEmbeddedRk(benchmark::State& state, const std::string& table_name, double tol) {
  PendulumOde ode;
  const mbs::ButcherTable table = mbs::ButcherTable::from_arkode(table_name);
  mbs::EmbeddedRk<PendulumOde> rk(ode, table, tol, tol);
  mbs::RunStats stats;
  Eigen::Vector2d y;
  for (auto _ : state) {
    stats = {};
    double t = 0.0;
    y = Eigen::Vector2d(kTheta0, 0.0);
    rk.initialize(t, y, stats);
    while (t < kTEnd) {
      rk.step(t, y, kTEnd, stats);
      ++stats.steps;
    }
    benchmark::DoNotOptimize(y);
  }
  state.counters["steps"] = static_cast<double>(stats.steps);
  state.counters["theta_error"] = std::abs(y[0] - exact_theta_end());
}

int arkode_rhs(realtype, N_Vector y, N_Vector ydot, void*) {
  const realtype* yy = N_VGetArrayPointer(y);
  realtype* yd = N_VGetArrayPointer(ydot);
  yd[0] = yy[1];
  yd[1] = -(kG / kL) * std::sin(yy[0]);
  return 0;
}

void check(int flag, const char* what) {
  if (flag < 0) throw std::runtime_error(std::string(what) + " failed with flag " + std::to_string(flag));
}

void BM_ArkodeErkStep(benchmark::State& state, ARKODE_ERKTableID table, double tol) {
  SUNContext ctx;
  check(SUNContext_Create(nullptr, &ctx), "SUNContext_Create");
  N_Vector y = N_VNew_Serial(2, ctx);
  realtype* yy = N_VGetArrayPointer(y);
  yy[0] = kTheta0;
  yy[1] = 0.0;
  void* mem = ERKStepCreate(arkode_rhs, 0.0, y, ctx);
  if (!mem) throw std::runtime_error("ERKStepCreate failed");
  check(ERKStepSetTableNum(mem, table), "ERKStepSetTableNum");
  check(ERKStepSStolerances(mem, tol, tol), "ERKStepSStolerances");
  check(ERKStepSetMaxNumSteps(mem, 1000000), "ERKStepSetMaxNumSteps");
  long steps = 0;
  for (auto _ : state) {
    yy[0] = kTheta0;
    yy[1] = 0.0;
    check(ERKStepReInit(mem, arkode_rhs, 0.0, y), "ERKStepReInit");  // integrator initialisation, timed
    check(ERKStepSetStopTime(mem, kTEnd), "ERKStepSetStopTime");
    realtype t = 0.0;
    check(ERKStepEvolve(mem, kTEnd, y, &t, ARK_NORMAL), "ERKStepEvolve");
    benchmark::DoNotOptimize(yy[0]);
  }
  check(ERKStepGetNumSteps(mem, &steps), "ERKStepGetNumSteps");
  state.counters["steps"] = static_cast<double>(steps);
  state.counters["theta_error"] = std::abs(yy[0] - exact_theta_end());
  ERKStepFree(&mem);
  N_VDestroy(y);
  SUNContext_Free(&ctx);
}

}  // namespace

// The tolerances near the planar pendulum's tuned ones, and a tighter pair.
BENCHMARK_CAPTURE(BM_EigenEmbeddedRk, dopri5_tol_3e-7, std::string("dopri5"), 3e-7);
BENCHMARK_CAPTURE(BM_ArkodeErkStep, dopri5_tol_3e-7, ARKODE_DORMAND_PRINCE_7_4_5, 3e-7);
BENCHMARK_CAPTURE(BM_EigenEmbeddedRk, fehlberg8_tol_3e-7, std::string("fehlberg8"), 3e-7);
BENCHMARK_CAPTURE(BM_ArkodeErkStep, fehlberg8_tol_3e-7, ARKODE_FEHLBERG_13_7_8, 3e-7);
BENCHMARK_CAPTURE(BM_EigenEmbeddedRk, fehlberg8_tol_1e-10, std::string("fehlberg8"), 1e-10);
BENCHMARK_CAPTURE(BM_ArkodeErkStep, fehlberg8_tol_1e-10, ARKODE_FEHLBERG_13_7_8, 1e-10);
