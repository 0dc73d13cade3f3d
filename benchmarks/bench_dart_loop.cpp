// The dart rows' overhead: the planar pendulum stepped by DART alone (the model built as a DART user
// would: a Skeleton of one 1 kg BodyNode with the adapter's tiny inertia on a RevoluteJoint about z
// at the origin, the body starting at (-1, 0, 0), in a World with the problem's gravity; World::reset,
// the Skeleton's positions and velocities, then World::step n times to 10 s) against the same run
// through the adapter (dart/semi-implicit-euler's Simulator::run, the harness's timed region).
// Ratio = adapter time / stand-alone time at the same n (docs/engines.md).
#include <benchmark/benchmark.h>

#include <dart/dynamics/BodyNode.hpp>
#include <dart/dynamics/RevoluteJoint.hpp>
#include <dart/dynamics/Skeleton.hpp>
#include <dart/simulation/World.hpp>

#include "core/formulation.hpp"
#include "problem/problem.hpp"

namespace {

constexpr double kEndTime = 10.0;  // s, planar_pendulum's end time (checked below against the file)

// Stand-alone: set-up outside the loop; each iteration resets the world and the state and steps to
// the end, as the adapter's run() does. Argument: the step count.
void BM_DartStandAlone(benchmark::State& state) {
  auto skeleton = dart::dynamics::Skeleton::create("pendulum");
  dart::dynamics::RevoluteJoint::Properties pin;
  pin.mAxis = Eigen::Vector3d::UnitZ();
  pin.mT_ChildBodyToJoint.translation() = Eigen::Vector3d(1.0, 0.0, 0.0);  // the pivot, 1 m from the body
  auto* body = skeleton->createJointAndBodyNodePair<dart::dynamics::RevoluteJoint>(nullptr, pin).second;
  body->setMass(1.0);
  body->setMomentOfInertia(1e-9, 1e-9, 1e-9);
  auto world = dart::simulation::World::create("pendulum");
  world->addSkeleton(skeleton);
  world->setGravity(Eigen::Vector3d(0.0, -9.81, 0.0));
  const long n = state.range(0);
  world->setTimeStep(kEndTime / n);
  const Eigen::VectorXd zero = Eigen::VectorXd::Zero(1);
  for (auto _ : state) {
    world->reset();
    skeleton->setPositions(zero);
    skeleton->setVelocities(zero);
    for (long i = 0; i < n; ++i) world->step();
  }
  state.counters["steps"] = static_cast<double>(n);
}

// The adapter's row: the same model built from problems/planar_pendulum.yaml, the same step.
void BM_DartAdapter(benchmark::State& state) {
  static const mbs::Problem pendulum = mbs::load_problem(MBS_SOURCE_DIR "/problems/planar_pendulum.yaml");
  if (pendulum.run.end_time != kEndTime) state.SkipWithError("planar_pendulum's end time changed");
  const long n = state.range(0);
  auto sim = mbs::Registry::instance().find("dart")->create(pendulum.model, "semi-implicit-euler", kEndTime / n);
  long steps = 0;
  for (auto _ : state) steps += sim->run(kEndTime, nullptr).steps;
  state.counters["steps"] = benchmark::Counter(static_cast<double>(steps) / state.iterations());
}

// The case is a control (first order): no tuned step to match. Steps of 1e-2, 1e-3 and 1e-4 s.
void args(benchmark::internal::Benchmark* b) {
  b->Arg(1000)->Arg(10000)->Arg(100000);
  b->Unit(benchmark::kMillisecond);
}
BENCHMARK(BM_DartStandAlone)->Apply(args);
BENCHMARK(BM_DartAdapter)->Apply(args);

}  // namespace
