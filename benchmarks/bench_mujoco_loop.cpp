// The mujoco rows' overhead: the planar pendulum stepped by MuJoCo alone (the model written as a
// MuJoCo user would, in MJCF: a 1 kg body at (-1, 0, 0) on a hinge about z at the origin, the
// adapter's tiny inertia, the problem's gravity, contacts off; mj_resetData then mj_step n times to
// 10 s) against the same run through the adapter (mujoco/<integrator>'s Simulator::run, the
// harness's timed region). Ratio = adapter time / stand-alone time at the same integrator and n
// (docs/engines.md).
#include <benchmark/benchmark.h>
#include <mujoco/mujoco.h>

#include <cstring>
#include <memory>
#include <string>

#include "core/formulation.hpp"
#include "problem/problem.hpp"

namespace {

constexpr double kEndTime = 10.0;  // s, planar_pendulum's end time (checked below against the file)

const mbs::Problem& pendulum() {
  static const mbs::Problem p = mbs::load_problem(MBS_SOURCE_DIR "/problems/planar_pendulum.yaml");
  return p;
}

constexpr const char* kMjcf = R"(<mujoco model="planar_pendulum">
  <compiler angle="radian" inertiafromgeom="false"/>
  <option gravity="0 -9.81 0"><flag contact="disable"/></option>
  <worldbody>
    <body pos="-1 0 0">
      <inertial pos="0 0 0" mass="1" diaginertia="1e-9 1e-9 1e-9"/>
      <joint type="hinge" pos="1 0 0" axis="0 0 1"/>
    </body>
  </worldbody>
</mujoco>
)";

constexpr int kIntegrators[] = {mjINT_EULER, mjINT_RK4, mjINT_IMPLICIT};
constexpr const char* kCases[] = {"euler", "rk4", "implicit"};

mjModel* load() {
  auto vfs = std::make_unique<mjVFS>();
  mj_defaultVFS(vfs.get());
  mj_makeEmptyFileVFS(vfs.get(), "pendulum.xml", static_cast<int>(std::strlen(kMjcf)));
  std::memcpy(vfs->filedata[mj_findFileVFS(vfs.get(), "pendulum.xml")], kMjcf, std::strlen(kMjcf));
  char error[1000] = "";
  mjModel* m = mj_loadXML("pendulum.xml", vfs.get(), error, sizeof error);
  mj_deleteVFS(vfs.get());
  return m;
}

// Stand-alone: set-up outside the loop; each iteration resets the data and steps to the end, as the
// adapter's run() does. Arguments: the integrator (0 euler, 1 rk4, 2 implicit) and the step count.
void BM_MujocoStandAlone(benchmark::State& state) {
  mjModel* m = load();
  if (m == nullptr) {
    state.SkipWithError("MuJoCo rejected the MJCF text");
    return;
  }
  const long n = state.range(1);
  m->opt.integrator = kIntegrators[state.range(0)];
  m->opt.timestep = kEndTime / n;
  mjData* d = mj_makeData(m);
  for (auto _ : state) {
    mj_resetData(m, d);
    for (long i = 0; i < n; ++i) mj_step(m, d);
  }
  state.counters["steps"] = static_cast<double>(n);
  mj_deleteData(d);
  mj_deleteModel(m);
}

// The adapter's row: the same model built from problems/planar_pendulum.yaml, the same step.
void BM_MujocoAdapter(benchmark::State& state) {
  if (pendulum().run.end_time != kEndTime) state.SkipWithError("planar_pendulum's end time changed");
  const long n = state.range(1);
  auto sim = mbs::Registry::instance().find("mujoco")->create(pendulum().model, kCases[state.range(0)], kEndTime / n);
  long steps = 0;
  for (auto _ : state) steps += sim->run(kEndTime, nullptr).steps;
  state.counters["steps"] = benchmark::Counter(static_cast<double>(steps) / state.iterations());
}

// rk4 at the planar pendulum's tuned step (282 steps) and 10 and 100 times finer; euler and
// implicit at 28,200 steps.
void args(benchmark::internal::Benchmark* b) {
  b->Args({1, 282})->Args({1, 2820})->Args({1, 28200})->Args({0, 28200})->Args({2, 28200});
  b->Unit(benchmark::kMillisecond);
}
BENCHMARK(BM_MujocoStandAlone)->Apply(args);
BENCHMARK(BM_MujocoAdapter)->Apply(args);

}  // namespace
