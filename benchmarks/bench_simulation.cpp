// Google Benchmark view of the same work the harness times: the whole 10 s planar-pendulum run of
// every registered case at a fixed representative setting (not tuned, so names and work are
// deterministic), plus the calibration kernel. Filter with --benchmark_filter=REGEX.
// The harness's table (bench) is the tuned comparison; this is for profiling and regressions.
#include <benchmark/benchmark.h>

#include "core/formulation.hpp"
#include "problem/problem.hpp"
#include "run/timing.hpp"

namespace {

void BM_CalibrationKernel(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(mbs::calibration_kernel());
}
BENCHMARK(BM_CalibrationKernel);

const mbs::Problem& pendulum() {
  static const mbs::Problem p = mbs::load_problem(MBS_SOURCE_DIR "/problems/planar_pendulum.yaml");
  return p;
}

// Case names: planar_pendulum/<formulation>/<integrator>/<setting>.
const bool registered = [] {
  for (const mbs::Formulation* f : mbs::Registry::instance().all())
    for (const mbs::IntegratorInfo& info : f->integrators()) {
      const double setting = info.kind == mbs::SettingKind::kFixedStep ? 1e-3 : 1e-8;
      const std::string name = "planar_pendulum/" + f->name() + "/" + info.name + "/" +
                               (info.kind == mbs::SettingKind::kFixedStep ? "h=1e-3" : "tol=1e-8");
      benchmark::RegisterBenchmark(name.c_str(), [f, info, setting](benchmark::State& state) {
        auto sim = f->create(pendulum().model, info.name, setting);
        long steps = 0;
        for (auto _ : state) steps += sim->run(pendulum().run.end_time, nullptr).steps;
        state.counters["steps"] = benchmark::Counter(static_cast<double>(steps) / state.iterations());
        state.counters["ns_per_step"] =
            benchmark::Counter(static_cast<double>(steps), benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
      });
    }
  return true;
}();

}  // namespace
