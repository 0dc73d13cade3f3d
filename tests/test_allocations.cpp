// The integration loop allocates nothing: a replaced global operator new (and interposed malloc,
// since Eigen allocates with std::malloc) counts heap allocations while a simulator's run() is under
// way, after setup and one warm-up run.
#include <gtest/gtest.h>

#include <cstdio>

#include "common/linear_modes.hpp"
#include "core/formulation.hpp"
#include "problem/problem.hpp"
#include "run/reference_setup.hpp"
#include "run/scoring.hpp"
#include "support/alloc_counter.hpp"
#include "support/cases.hpp"

namespace mbs {
namespace {

// The counter must see both kinds: a std::vector (operator new) and a dynamic Eigen vector (malloc).
TEST(Allocations, CounterSeesEigenAndStdAllocations) {
  MBS_SKIP_WITHOUT_ALLOCATION_COUNTING();
  std::vector<double>* v = nullptr;
  EXPECT_EQ(testing::allocations_during([&] { v = new std::vector<double>(10); }), 2);
  delete v;
  Eigen::VectorXd x;
  EXPECT_EQ(testing::allocations_during([&] { x = Eigen::VectorXd::LinSpaced(50, 0.0, 1.0); }), 1);
  EXPECT_DOUBLE_EQ(x[49], 1.0);
}

class LoopAllocations : public ::testing::TestWithParam<testing::Case> {};

class CountingObserver final : public StepObserver {
 public:
  void on_step(double, const Eigen::VectorXd&, const Eigen::VectorXd&) override { ++steps; }
  long steps = 0;
};

TEST_P(LoopAllocations, RunAllocatesNothingAfterSetup) {
  MBS_SKIP_WITHOUT_ALLOCATION_COUNTING();
  const Formulation* formulation = GetParam().formulation;
  const IntegratorInfo& info = GetParam().info;
  const Problem p = load_problem(MBS_SOURCE_DIR "/problems/planar_pendulum.yaml");
  // A representative setting: the middle of the tuner's range (the loop's code path does not
  // depend on it), a few thousand steps at most.
  const double setting = info.kind == SettingKind::kFixedStep ? 1e-2 : 1e-6;
  // A control case is unstable by design (IntegratorInfo::expected_failure): its first second.
  const double t_end = GetParam().control() ? 1.0 : p.run.end_time;
  auto sim = formulation->create(p.model, info.name, setting);
  sim->run(t_end, nullptr);  // warm-up
  const long n = testing::allocations_during([&] { sim->run(t_end, nullptr); });
  // An engine steps in its own code, which allocates (Simbody resizes SimTK::Vector caches inside
  // Integrator::stepTo): its rows are exempt from the zero count (docs/engines.md). What the adapter
  // adds to every step, writing the state in natural coordinates for an observer, must allocate
  // nothing: a run that reports every step allocates exactly as often as one that does not.
  if (GetParam().engine()) {
    CountingObserver observer;
    const long n_observed = testing::allocations_during([&] { sim->run(t_end, &observer); });
    RecordProperty("allocations", std::to_string(n));
    EXPECT_GT(observer.steps, 1);
    EXPECT_EQ(n_observed, n) << formulation->name() << "/" << info.name << ": reporting the state allocated";
    return;
  }
  RecordProperty("allocations", std::to_string(n));
  EXPECT_EQ(n, 0) << formulation->name() << "/" << info.name << " allocated " << n << " times in run()";
}

// Recording a time history allocates nothing in the loop either: the observer sizes its buffers when
// made. Published checks are left out: their observer may allocate (scoring runs only).
TEST(Allocations, RecordingAHistoryAllocatesNothing) {
  MBS_SKIP_WITHOUT_ALLOCATION_COUNTING();
  const std::pair<const char*, const char*> cases[] = {
      {"planar_pendulum", "minimal"}, {"pendulum_large_amplitude_spatial", "projection"}, {"double_pendulum_wall", "minimal"}};
  for (const auto& [name, formulation] : cases) {
    Problem p = load_problem(std::string(MBS_SOURCE_DIR "/problems/") + name + ".yaml");
    p.checks.clear();
    attach_reference(p, ReferenceOptions{});  // with a reference trajectory, its sampler too
    ScoringObserver observer(p, true);
    auto sim = Registry::instance().find(formulation)->create(p.model, "dopri5", 1e-6);
    observer.reset();  // as score_run does before every run
    sim->run(p.run.end_time, &observer);  // warm-up: the simulator's and the impacts' first sizes
    observer.reset();
    const long n = testing::allocations_during([&] { sim->run(p.run.end_time, &observer); });
    EXPECT_EQ(n, 0) << name << ": " << formulation << "/dopri5 allocated " << n << " times while recording";
    EXPECT_EQ(observer.history().rows(), static_cast<size_t>(std::ceil(p.run.end_time / p.run.output_interval - 1e-9)) + 1) << name;
  }
}

// A linearization allocates nothing after its first call (which sizes the workspace) on the 3D
// pendulum: every formulation's pencil there takes LinearModes' manifold path. The same pencils on
// the QZ path (ModeRule::manifold = false, the method before) are counted for the record only.
TEST(Allocations, LinearizationAllocatesNothingAfterTheFirstCall) {
  MBS_SKIP_WITHOUT_ALLOCATION_COUNTING();
  const Problem p = load_problem(MBS_SOURCE_DIR "/problems/pendulum_3d_linearization.yaml");
  int linearizers = 0;
  for (const Formulation* formulation : Registry::instance().all()) {
    if (!formulation->linearization_unsupported_reason(p.model).empty()) continue;
    auto lin = formulation->create_linearizer(p.model);
    if (lin == nullptr) continue;
    ++linearizers;
    lin->linearize();  // warm-up
    const long n = testing::allocations_during([&] { lin->linearize(); });
    RecordProperty(formulation->name(), std::to_string(n));
    // An engine allocates inside its own calls (Simbody in realize; docs/engines.md): recorded, not
    // held to zero, as its simulation rows. tests/test_mujoco.cpp holds mujoco's to zero.
    if (formulation->origin() == FormulationOrigin::kEngine) {
      std::printf("%s (engine) allocated %ld times in linearize()\n", formulation->name().c_str(), n);
      continue;
    }
    EXPECT_EQ(n, 0) << formulation->name() << " allocated " << n << " times in linearize()";
  }
  EXPECT_GE(linearizers, 5);
  // The index-3 pencil (ida-index3's) on both paths.
  NaturalEquilibrium eq(p.model);
  eq.evaluate("test");
  for (const bool manifold : {true, false}) {
    ModeRule rule;
    rule.manifold = manifold;
    LinearModes modes(eq.nq(), eq.rank(), eq.nq(), eq.nc(), false, rule);
    modes.M = eq.nat().M_diag().asDiagonal();
    modes.K = eq.K_geo();
    for (int i = 0; i < eq.rank(); ++i) modes.G.row(i) = eq.Phi_q().row(eq.independent_rows()[i]);
    modes.R.setIdentity();
    modes.Phi_q = eq.Phi_q();
    std::vector<Eigenvalue> out;
    modes.prepare(out);
    modes.compute(out);
    const long n = testing::allocations_during([&] { modes.compute(out); });
    std::printf("LinearModes::compute on the index-3 pencil, %s path: %ld allocations\n",
                manifold ? "manifold" : "QZ", n);
    if (manifold) {
      EXPECT_EQ(n, 0);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllCases, LoopAllocations, ::testing::ValuesIn(testing::all_cases()),
                         testing::case_test_name<::testing::TestParamInfo<testing::Case>>);

}  // namespace
}  // namespace mbs
