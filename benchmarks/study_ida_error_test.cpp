// A study, not a test: the evidence behind the IDA formulations' error-test choice (which variables
// enter IDA's local error test), on the planar pendulum for a range of rtol. For each formulation and
// each choice it prints the steps, the energy drift, the position error against the exact solution
// at 10 s, the constraint levels, IDA's failures and the median wall time of a few reruns, or the
// failure. docs/formulations.md's Method notes for ida-index3 and ida-ggl read it.
//   build/benchmarks/mbs_study_ida_error_test
#include <Eigen/Dense>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <limits>
#include <vector>

#include "ida_ggl/ggl_dae.hpp"
#include "ida_index3/ida_residual.hpp"
#include "problem/problem.hpp"
#include "references/simple_pendulum.hpp"
#include "support/monitor.hpp"

namespace {

// One row per rtol; timing_runs reruns for the median time (one for runs of many_steps or more).
template <class Make>
void sweep(const char* label, const std::vector<double>& rtols, int timing_runs, long many_steps, Make make) {
  const mbs::Problem problem = mbs::load_problem(MBS_SOURCE_DIR "/problems/planar_pendulum.yaml");
  const Eigen::VectorXd exact = mbs::SimplePendulumExact::from_problem(problem).position(problem.run.end_time);
  std::printf("%s\n%8s %8s %11s %11s %11s %11s %6s %s\n", label, "rtol", "steps", "drift J", "pos err m", "max|Phi|",
              "max|Phiqv|", "fails", "ms / outcome");
  for (const double rtol : rtols) {
    auto sim = make(problem.model, rtol);
    mbs::testing::Monitor obs(problem.model);
    try {
      const mbs::RunStats& s = sim->run(problem.run.end_time, &obs);
      std::vector<double> ms;
      for (int i = 0; i < (s.steps < many_steps ? timing_runs : 1); ++i) {
        const auto t0 = std::chrono::steady_clock::now();
        sim->run(problem.run.end_time, nullptr);
        ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
      }
      std::sort(ms.begin(), ms.end());
      const Eigen::VectorXd r = obs.q_final.head(2);
      std::printf("%8.1e %8ld %11.3e %11.3e %11.3e %11.3e %6ld %.2f\n", rtol, s.steps, obs.max_drift, (r - exact).norm(),
                  obs.max_Phi, obs.max_Phi_dot, s.failures, ms[ms.size() / 2]);
    } catch (const mbs::SolverError& e) {
      std::printf("%8.1e %8ld %11.3e %11s %11s %11s %6ld %s\n", rtol, sim->stats().steps, obs.max_drift, "-", "-", "-",
                  sim->stats().failures, e.what());
    }
  }
}

}  // namespace

int main() {
  using namespace mbs;
  std::printf("== ida-index3\n");
  for (auto et : {ida_index3::ErrorTest::kPositionsAndVelocities, ida_index3::ErrorTest::kPositionsOnly})
    sweep(et == ida_index3::ErrorTest::kPositionsOnly ? "v and lambda excluded" : "only lambda excluded",
          {1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 1e-8, 1e-9, 1e-10, 7e-11, 5e-11, 4e-11, 3e-11, 2.5e-11, 2e-11, 1.5e-11, 1e-11,
           5e-12, 3e-12, 1e-12, 1e-13},
          5, 100000, [et](const Model& model, double rtol) { return ida_index3::make_simulator(model, rtol, et); });
  std::printf("\n== ida-ggl\n");
  for (auto et : {ida_ggl::ErrorTest::kPositionsAndVelocities, ida_ggl::ErrorTest::kPositionsOnly})
    sweep(et == ida_ggl::ErrorTest::kPositionsOnly ? "v, lambda, mu excluded" : "lambda, mu excluded",
          {1e-4, 1e-5, 1e-6, 1e-7, 1e-8, 1e-9, 1e-10, 3e-11, 1e-11, 1e-12}, 3, std::numeric_limits<long>::max(),
          [et](const Model& model, double rtol) { return ida_ggl::make_simulator(model, rtol, et); });
  return 0;
}
