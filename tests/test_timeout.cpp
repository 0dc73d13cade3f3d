// --timeout bounds every phase of a case: a set-up that would run for minutes ends at the budget
// with the phase named, and a large model's set-up is not the dense O(n^3) one.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>
#include <unistd.h>

#include "common/independent_rows.hpp"
#include "core/cancellation.hpp"
#include "core/formulation.hpp"
#include "core/initial_state.hpp"
#include "problem/problem.hpp"
#include "run/bench_case.hpp"
#include "run/watchdog.hpp"
#include "support/timeouts.hpp"

namespace mbs {
namespace {

namespace fs = std::filesystem;

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// A zig-zag chain of n point masses on rods of 0.25 m (3-4-5 triangles: positions exact in
// decimal), hanging from the origin: a model as large as wanted, written as a problem file. lift (m)
// moves the last point up, off its rod's length.
fs::path write_chain(int n, const fs::path& dir, double lift = 0.0) {
  fs::create_directories(dir);
  const fs::path path = dir / ("zigzag_" + std::to_string(n) + ".yaml");
  std::ofstream f(path);
  f << "name: zigzag_" << n << "\ntitle: zig-zag chain\nsource: tests/test_timeout.cpp\nspace: planar\n"
    << "plane: {origin: [0.0, 0.0, 0.0], e1: [1.0, 0.0, 0.0], e2: [0.0, 1.0, 0.0]}\n"
    << "gravity: [0.0, -9.81, 0.0]\nbodies:\n";
  for (int i = 1; i <= n; ++i)
    f << "  - {name: P" << i << ", kind: point_mass, mass: " << 1.0 / n << ", position: [" << (i % 2 ? 0.15 : 0.0)
      << ", " << -0.2 * i + (i == n ? lift : 0.0) << ", 0.0]}\n";
  f << "joints:\n";
  for (int i = 1; i <= n; ++i)
    f << "  - {name: rod" << i << ", kind: rod, a: " << (i == 1 ? "{ground: [0.0, 0.0, 0.0]}" : "{body: P" + std::to_string(i - 1) + "}")
      << ", b: {body: P" << i << "}, length: 0.25}\n";
  f << "run: {end_time: 1.0, output_interval: 0.01, history_point: P" << n << "}\n"
    << "score: {rule: {metric: max_energy_drift, below: 1.0e-4}, objective: cpu_time}\n";
  return path;
}

// A formulation whose set-up is a long loop that checks the budget as set-up loops do.
class EndlessSetup final : public Formulation {
 public:
  std::string name() const override { return "endless-setup"; }
  std::string description() const override { return "test double"; }
  std::vector<IntegratorInfo> integrators() const override { return {{"fixed", SettingKind::kFixedStep, 0.1, 1e-3, "", ""}}; }
  Accepts accepts() const override { return {{ElementRole::kJoint}, {}}; }
  std::unique_ptr<Simulator> create(const Model&, const std::string&, double) const override {
    for (;;) {
      throw_if_cancelled("set-up");
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
};

const Problem& pendulum() {
  static const Problem p = load_problem(MBS_SOURCE_DIR "/problems/planar_pendulum.yaml");
  return p;
}

TEST(Timeout, BoundsSetUpWhileTuning) {
  const EndlessSetup f;
  CaseOptions o;
  o.timeout_s = 0.3;
  const auto t0 = std::chrono::steady_clock::now();
  const CaseResult r = run_case(pendulum(), f, f.integrators()[0], o);
  EXPECT_LT(seconds_since(t0), 3 * o.timeout_s);
  EXPECT_EQ(r.status, CaseStatus::kError);
  EXPECT_NE(r.message.find("timed out in set-up (tuning) after 0.3"), std::string::npos) << r.message;
  EXPECT_NE(r.message.find("(--timeout 0.3)"), std::string::npos) << r.message;
  EXPECT_FALSE(cancellation_requested()) << "the budget must not leak into the next case";
}

TEST(Timeout, BoundsSetUpOfTheVerificationRun) {
  const EndlessSetup f;
  CaseOptions o;
  o.step = 0.01;
  o.timeout_s = 0.3;
  const auto t0 = std::chrono::steady_clock::now();
  const CaseResult r = run_case(pendulum(), f, f.integrators()[0], o);
  EXPECT_LT(seconds_since(t0), 3 * o.timeout_s);
  EXPECT_NE(r.message.find("timed out in set-up (verification) after"), std::string::npos) << r.message;
}

TEST(Timeout, BoundsTimingAndNamesIt) {
  // planar_pendulum's minimal/rk4 at a given step: tuning skipped, verification quick, and a timing
  // budget of 100 s of CPU that only the timeout can end.
  const Formulation* f = Registry::instance().find("minimal");
  ASSERT_NE(f, nullptr);
  CaseOptions o;
  o.step = 1e-3;
  o.min_time_s = 100;
  o.timeout_s = 0.5;
  const auto t0 = std::chrono::steady_clock::now();
  const CaseResult r = run_case(pendulum(), *f, f->integrators()[0], o);
  EXPECT_LT(seconds_since(t0), 3 * o.timeout_s);
  EXPECT_EQ(r.status, CaseStatus::kError);
  EXPECT_NE(r.message.find("timed out in timing after"), std::string::npos) << r.message;
  EXPECT_FALSE(r.timing);
}

// The set-up of projection on a 2,000-link chain once took 49 s (a dense column-pivoted QR of
// Phi_q^T, O(nq nc^2), to find independent rows): now its rows are found independent by a sparse
// LDLT of Phi_q Phi_q^T, and the case, whose tuning would run for minutes, ends at the budget.
TEST(Timeout, LargeChainUnderProjectionEndsAtTheBudget) {
  const fs::path dir = fs::temp_directory_path() / ("mbs_timeout_" + std::to_string(::getpid()));
  const Problem p = load_problem(write_chain(2000, dir).string());
  fs::remove_all(dir);
  const Formulation* f = Registry::instance().find("projection");
  ASSERT_NE(f, nullptr);
  CaseOptions o;
  o.timeout_s = 2;
  const auto t0 = std::chrono::steady_clock::now();
  const CaseResult r = run_case(p, *f, f->integrators()[0], o);
  EXPECT_LT(seconds_since(t0), 3 * o.timeout_s);
  EXPECT_EQ(r.case_name(), "projection/rk4");
  EXPECT_TRUE(testing::timed_out_while_tuning(r, "2"));
}

// Reading a problem file is under the budget too (bench ends with exit 1 naming the file): a
// 100,000-link chain takes seconds to read, far more than 10 ms.
TEST(Timeout, BoundsReadingAProblemFile) {
  const fs::path dir = fs::temp_directory_path() / ("mbs_timeout_load_" + std::to_string(::getpid()));
  const fs::path file = write_chain(100000, dir);
  std::string message;
  const auto t0 = std::chrono::steady_clock::now();
  {
    const Watchdog watchdog(0.01);
    try {
      load_problem(file.string());
    } catch (const Cancelled& e) {
      message = e.what();
    }
  }
  const double elapsed = seconds_since(t0);
  fs::remove_all(dir);
  EXPECT_NE(message.find("cancelled in parsing the problem file"), std::string::npos) << message << " after " << elapsed << " s";
  EXPECT_FALSE(cancellation_requested());
}

TEST(Timeout, IndependentRowsOfALargeChainAreAllItsRows) {
  const fs::path dir = fs::temp_directory_path() / ("mbs_timeout_rows_" + std::to_string(::getpid()));
  const Problem p = load_problem(write_chain(200, dir).string());
  fs::remove_all(dir);
  const NaturalCoordinates nat(p.model);
  const std::vector<int> rows = independent_rows(nat, p.model);
  ASSERT_EQ(rows.size(), 200u);
  EXPECT_EQ(rows.front(), 0);
  EXPECT_EQ(rows.back(), 199);
}

// A large model whose rows are redundant, too large for the dense rank test (O(nq nc^2) = 6.8e9),
// has its rank decided by the sparse QR instead of being refused: every rod kept once, the later copy
// of the doubled rod dropped (common/independent_rows.hpp's rule, the dense path's).
TEST(Timeout, ALargeRedundantModelKeepsEachRowOnce) {
  const fs::path dir = fs::temp_directory_path() / ("mbs_timeout_redundant_" + std::to_string(::getpid()));
  Problem p = load_problem(write_chain(1500, dir).string());
  fs::remove_all(dir);
  p.model.elements.push_back(p.model.elements.back());  // the last rod twice: one redundant row
  const NaturalCoordinates nat(p.model);
  const std::vector<int> rows = independent_rows(nat, p.model);
  ASSERT_EQ(rows.size(), 1500u);
  for (int k = 0; k < 1500; ++k) EXPECT_EQ(rows[k], k);
}

// --project-initial-state runs at load, within the reading budget: a small chain is projected onto
// its rods; a chain whose dense projection would take minutes is refused at load with its reason;
// a budget spent ends the projection before its next iteration.
TEST(Timeout, ProjectingALargeInitialStateIsRefusedWithItsReason) {
  const fs::path dir = fs::temp_directory_path() / ("mbs_timeout_project_" + std::to_string(::getpid()));
  const Problem small = load_problem(write_chain(20, dir, 0.01).string(), LoadOptions{true});
  const NaturalCoordinates nat(small.model);
  Eigen::VectorXd phi(nat.nc());
  nat.Phi(small.model.initial_q(), phi);
  EXPECT_LT(phi.cwiseAbs().maxCoeff(), 1e-12);  // the projection's own stopping tolerance (m)
  Model moved = small.model;
  moved.points.back().r0(0) += 0.01;
  request_cancellation(true);
  EXPECT_THROW(project_initial_state(moved), Cancelled);
  request_cancellation(false);

  const std::string large = write_chain(1200, dir, 0.01).string();
  const auto t0 = std::chrono::steady_clock::now();
  try {
    load_problem(large, LoadOptions{true});
    ADD_FAILURE() << "no refusal";
  } catch (const ProblemError& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.rfind(large + ":", 0), 0u) << what;  // file:line:col of the violated rod
    EXPECT_NE(what.find("dense projection of 1200 constraint rows on 2400 coordinates"), std::string::npos) << what;
    EXPECT_NE(what.find("too large for this model: refused"), std::string::npos) << what;
  }
  EXPECT_LT(seconds_since(t0), 10.0);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace mbs
