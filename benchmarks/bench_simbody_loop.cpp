// The simbody rows' overhead: the planar pendulum stepped by Simbody alone (the model written
// directly against Simbody's API, as a Simbody user would: a Pin at the origin, a 1 kg point body
// 1 m away, Force::Gravity; RungeKuttaMersonIntegrator at accuracy 10^-k, stepTo(10 s) returning
// every internal step) against the same run through the adapter (simbody/rk-merson's Simulator::run,
// the harness's timed region). Ratio = adapter time / stand-alone time at the same k (docs/engines.md).
#include <Simbody.h>
#include <benchmark/benchmark.h>

#include <cmath>

#include "core/formulation.hpp"
#include "problem/problem.hpp"

namespace {

constexpr double kEndTime = 10.0;  // s, planar_pendulum's end time (checked below against the file)

const mbs::Problem& pendulum() {
  static const mbs::Problem p = mbs::load_problem(MBS_SOURCE_DIR "/problems/planar_pendulum.yaml");
  return p;
}

// Stand-alone: set-up outside the loop; each iteration resets the state, initializes the integrator
// and steps to the end, as the adapter's run() does.
void BM_SimbodyStandAlone(benchmark::State& state) {
  const double accuracy = std::pow(10.0, -static_cast<double>(state.range(0)));
  SimTK::MultibodySystem system;
  SimTK::SimbodyMatterSubsystem matter(system);
  SimTK::GeneralForceSubsystem forces(system);
  SimTK::Force::Gravity(forces, matter, SimTK::UnitVec3(0, -1, 0), 9.81);
  const SimTK::Body::Rigid point(SimTK::MassProperties(1.0, SimTK::Vec3(0), SimTK::Inertia(0)));
  // F at the pivot (ground origin), M at the pivot seen from the point (-1, 0, 0): q = 0 there.
  SimTK::MobilizedBody::Pin rod(matter.updGround(), SimTK::Transform(), point, SimTK::Transform(SimTK::Vec3(1, 0, 0)));
  const SimTK::State initial = system.realizeTopology();
  SimTK::RungeKuttaMersonIntegrator integ(system);
  integ.setAccuracy(accuracy);
  integ.setConstraintTolerance(accuracy);
  integ.setReturnEveryInternalStep(true);
  integ.setFinalTime(kEndTime);
  long steps = 0;
  for (auto _ : state) {
    integ.initialize(initial);
    while (integ.getTime() < kEndTime)  // the first return reports the start of the interval
      if (integ.stepTo(kEndTime) != SimTK::Integrator::StartOfContinuousInterval) ++steps;
  }
  state.counters["steps"] = benchmark::Counter(static_cast<double>(steps) / state.iterations());
}
BENCHMARK(BM_SimbodyStandAlone)->DenseRange(4, 8, 2)->Unit(benchmark::kMillisecond);

// The adapter's row: the same model built from problems/planar_pendulum.yaml, the same accuracy.
void BM_SimbodyAdapter(benchmark::State& state) {
  const double accuracy = std::pow(10.0, -static_cast<double>(state.range(0)));
  if (pendulum().run.end_time != kEndTime) state.SkipWithError("planar_pendulum's end time changed");
  auto sim = mbs::Registry::instance().find("simbody")->create(pendulum().model, "rk-merson", accuracy);
  long steps = 0;
  for (auto _ : state) steps += sim->run(kEndTime, nullptr).steps;
  state.counters["steps"] = benchmark::Counter(static_cast<double>(steps) / state.iterations());
}
BENCHMARK(BM_SimbodyAdapter)->DenseRange(4, 8, 2)->Unit(benchmark::kMillisecond);

}  // namespace
