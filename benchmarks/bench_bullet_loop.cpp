// The bullet rows' overhead: the planar pendulum stepped by Bullet alone (the model written as a
// Bullet user would: a btMultiBody with a fixed base at the origin and one link of 1 kg, its centre
// 1 m along -x from a revolute joint about z at the origin, the adapter's tiny inertia, damping and
// clamps off, in a btMultiBodyDynamicsWorld with the problem's gravity; the joint reset, then n fixed
// steps to 10 s) against the same run through the adapter (bullet/<case>'s Simulator::run, the
// harness's timed region). Ratio = adapter time / stand-alone time at the same case and n
// (docs/engines.md).
#include <BulletDynamics/Featherstone/btMultiBody.h>
#include <BulletDynamics/Featherstone/btMultiBodyConstraintSolver.h>
#include <BulletDynamics/Featherstone/btMultiBodyDynamicsWorld.h>
#include <benchmark/benchmark.h>
#include <btBulletCollisionCommon.h>

#include <limits>

#include "core/formulation.hpp"
#include "problem/problem.hpp"

namespace {

constexpr double kEndTime = 10.0;  // s, planar_pendulum's end time (checked below against the file)
constexpr const char* kCases[] = {"euler", "rk4", "direct-euler"};

const mbs::Problem& pendulum() {
  static const mbs::Problem p = mbs::load_problem(MBS_SOURCE_DIR "/problems/planar_pendulum.yaml");
  return p;
}

// Stand-alone: set-up outside the loop; each iteration resets the joint and steps to the end, as the
// adapter's run() does. Arguments: the case (0 euler, 1 rk4, 2 direct-euler) and the step count.
void BM_BulletStandAlone(benchmark::State& state) {
  const double inf = std::numeric_limits<double>::infinity();
  btMultiBody mb(1, 0.0, btVector3(0, 0, 0), true, false);
  mb.setupRevolute(0, 1.0, btVector3(1e-9, 1e-9, 1e-9), -1, btQuaternion(0, 0, 0, 1), btVector3(0, 0, 1),
                   btVector3(0, 0, 0), btVector3(-1, 0, 0), true);
  mb.finalizeMultiDof();
  mb.setLinearDamping(0.0);
  mb.setAngularDamping(0.0);
  mb.setMaxCoordinateVelocity(inf);
  mb.setMaxAppliedImpulse(inf);
  mb.setCanSleep(false);
  mb.useRK4Integration(state.range(0) == 1);
  btDefaultCollisionConfiguration config;
  btCollisionDispatcher dispatcher(&config);
  btDbvtBroadphase broadphase;
  btMultiBodyConstraintSolver solver;
  btMultiBodyDynamicsWorld world(&dispatcher, &broadphase, &solver, &config);
  const btVector3 g(0, -9.81, 0);
  world.setGravity(g);
  world.addMultiBody(&mb);
  btAlignedObjectArray<btScalar> scratch_r;
  btAlignedObjectArray<btVector3> scratch_v;
  btAlignedObjectArray<btMatrix3x3> scratch_m;
  const long n = state.range(1);
  const double h = kEndTime / n;
  const bool direct = state.range(0) == 2;
  for (auto _ : state) {
    mb.setJointPos(0, 0.0);
    mb.setJointVel(0, 0.0);
    if (direct) {
      for (long i = 0; i < n; ++i) {
        mb.addLinkForce(0, g * mb.getLinkMass(0));
        mb.computeAccelerationsArticulatedBodyAlgorithmMultiDof(h, scratch_r, scratch_v, scratch_m, false, false, false);
        mb.clearForcesAndTorques();
        mb.stepPositionsMultiDof(h);
      }
    } else {
      for (long i = 0; i < n; ++i) world.stepSimulation(h, 0, h);
    }
    benchmark::DoNotOptimize(mb.getJointPos(0));
  }
  state.counters["steps"] = static_cast<double>(n);
  world.removeMultiBody(&mb);
}

// The adapter's row: the same model built from problems/planar_pendulum.yaml, the same step.
void BM_BulletAdapter(benchmark::State& state) {
  if (pendulum().run.end_time != kEndTime) state.SkipWithError("planar_pendulum's end time changed");
  const long n = state.range(1);
  auto sim = mbs::Registry::instance().find("bullet")->create(pendulum().model, kCases[state.range(0)], kEndTime / n);
  long steps = 0;
  for (auto _ : state) steps += sim->run(kEndTime, nullptr).steps;
  state.counters["steps"] = benchmark::Counter(static_cast<double>(steps) / state.iterations());
}

// rk4 at the planar pendulum's tuned step (docs/engines.md) and 10 times finer; euler and
// direct-euler at 28,200 steps.
void args(benchmark::internal::Benchmark* b) {
  b->Args({1, 282})->Args({1, 2820})->Args({0, 28200})->Args({2, 28200});
  b->Unit(benchmark::kMillisecond);
}
BENCHMARK(BM_BulletStandAlone)->Apply(args);
BENCHMARK(BM_BulletAdapter)->Apply(args);

}  // namespace
