// Sweeps: bench --list-cases prints one command per case, --case runs one into a partial summary,
// --merge combines them into the results folder a serial run writes, --jobs N does both on one
// machine. A merged sweep must equal the serial run (statuses, settings and every figure but the
// timings), refuse partials that do not belong together, and reject bad --case strings with exit 2.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <sys/wait.h>
#include <unistd.h>

#include "run/children.hpp"
#include "run/sweep.hpp"
#include "support/shell.hpp"

namespace mbs {
namespace {
namespace fs = std::filesystem;

const auto run = &testing::run_command;
const auto read = &testing::read_text;

const std::string kBench = MBS_BENCH_EXE;
// Cheap and varied: explicit and adaptive, fixed-step with the planar pendulum's published step.
// Named case by case, so that the counts below do not change when a formulation gains a case.
const std::string kCases = "minimal/rk4,minimal/dopri5,minimal/fehlberg8,projection/rk4";

// Rows of a summary.json without what differs between runs by nature (timings).
std::vector<std::string> comparable_rows(const fs::path& summary) {
  const YAML::Node root = YAML::LoadFile(summary.string());
  std::vector<std::string> rows;
  for (YAML::Node r : root["rows"]) {
    for (const char* k : {"cpu_time_median_s", "cpu_time_min_s", "normalized_time", "relative_to_fastest"}) r.remove(k);
    YAML::Emitter e;
    e << r;
    rows.push_back(e.c_str());
  }
  return rows;
}

class Sweep : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("mbs_sweep_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  // Runs every command bench --list-cases prints (as the shell would from a pipe).
  void run_listed(const std::string& partials) {
    auto [code, list] = run(kBench + " -p planar_pendulum -f " + kCases + " --no-timing --results " + (dir_ / "merged").string() +
                            " --partials " + partials + " --list-cases");
    ASSERT_EQ(code, 0) << list;
    std::stringstream ss(list);
    int n = 0;
    for (std::string line; std::getline(ss, line); ++n) {
      EXPECT_NE(line.find(" --case planar_pendulum:"), std::string::npos) << line;
      auto [c, out] = run(line);
      EXPECT_EQ(c, 0) << line << "\n" << out;
    }
    EXPECT_EQ(n, 4);  // minimal/rk4, dopri5, fehlberg8, projection/rk4
  }
  fs::path dir_;
};

TEST(SweepCaseSpec, SplitsAtTheLastColon) {
  const CaseSpec s = parse_case_spec("planar_pendulum:minimal/rk4");
  EXPECT_EQ(s.problem, "planar_pendulum");
  EXPECT_EQ(s.case_name, "minimal/rk4");
  EXPECT_EQ(parse_case_spec("C:/p/x.yaml:a/b").problem, "C:/p/x.yaml");
  for (const char* bad : {"planar_pendulum", ":minimal/rk4", "planar_pendulum:minimal", "planar_pendulum:minimal/",
                          "planar_pendulum:/rk4", "planar_pendulum:minimal/rk4/x", "planar_pendulum:minimal/rk4,minimal/dopri5"})
    EXPECT_THROW(parse_case_spec(bad), SweepError) << bad;
}

TEST(SweepCaseSpec, ShellQuoting) {
  EXPECT_EQ(shell_join({"bench", "--case", "p:a/b", "it's here"}), "bench --case p:a/b 'it'\\''s here'");
}

TEST_F(Sweep, BadCaseStringsAreAClearErrorWithExitTwo) {
  const std::string out = " --results " + dir_.string();
  const std::pair<const char*, const char*> cases[] = {
      {"planar_pendulum", "--case 'planar_pendulum': no ':'"},
      {"planar_pendulum:minimal", "is not one formulation/integrator"},
      {"no_such_problem:minimal/rk4", "unknown problem 'no_such_problem'"},
      {"planar_pendulum:minimal/rk5", "unknown formulation 'minimal/rk5'"},
  };
  for (const auto& [arg, message] : cases) {
    auto [code, log] = run(kBench + " --case " + arg + out);
    EXPECT_EQ(code, 2) << arg << "\n" << log;
    EXPECT_NE(log.find(message), std::string::npos) << arg << "\n" << log;
  }
  auto [code, log] = run(kBench + " -p pinned_bar --case planar_pendulum:minimal/rk4" + out);
  EXPECT_EQ(code, 2) << log;
  EXPECT_NE(log.find("but --problem is 'pinned_bar'"), std::string::npos) << log;
  std::tie(code, log) = run(kBench + " -p planar_pendulum --merge --jobs 2" + out);
  EXPECT_EQ(code, 2) << log;
  EXPECT_FALSE(fs::exists(dir_ / "planar_pendulum"));
}

// The "done when": a sweep merged from --list-cases' commands equals a serial run.
TEST_F(Sweep, MergedPartialsEqualTheSerialRun) {
  auto [code, log] = run(kBench + " -p planar_pendulum -f " + kCases + " --no-timing --results " + (dir_ / "serial").string());
  ASSERT_EQ(code, 0) << log;
  const fs::path partials = dir_ / "partials";
  run_listed(partials.string());
  EXPECT_TRUE(fs::exists(partials / "planar_pendulum" / "minimal__dopri5.yaml"));
  std::tie(code, log) = run(kBench + " -p planar_pendulum -f " + kCases + " --merge --partials " + partials.string() +
                            " --results " + (dir_ / "merged").string());
  ASSERT_EQ(code, 0) << log;
  const fs::path serial = dir_ / "serial" / "planar_pendulum", merged = dir_ / "merged" / "planar_pendulum";
  const std::vector<std::string> a = comparable_rows(serial / "summary.json"), b = comparable_rows(merged / "summary.json");
  ASSERT_EQ(a.size(), 4u);  // minimal/rk4, dopri5, fehlberg8, projection/rk4
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i], b[i]);
  for (const auto& e : fs::directory_iterator(serial / "histories"))
    EXPECT_EQ(read(e.path()), read(merged / "histories" / e.path().filename())) << e.path().filename();
  EXPECT_EQ(read(serial / "summary.csv"), read(merged / "summary.csv"));
  EXPECT_NE(read(merged / "summary.json").find("\"sweep\": \"merged from 4 partial summaries"), std::string::npos);
  EXPECT_EQ(read(serial / "summary.json").find("\"sweep\""), std::string::npos);
}

TEST_F(Sweep, MergeRefusesMissingAndIncompatiblePartials) {
  const fs::path partials = dir_ / "partials";
  run_listed(partials.string());
  const std::string merge = kBench + " -p planar_pendulum -f " + kCases + " --merge --partials " + partials.string() +
                            " --results " + (dir_ / "merged").string();
  const fs::path dopri5 = partials / "planar_pendulum" / "minimal__dopri5.yaml";
  const std::string original = read(dopri5);
  auto edit = [&](const std::string& key, const std::string& value) {
    std::string text = original;
    const size_t at = text.find("\n" + key + ": ");
    ASSERT_NE(at, std::string::npos) << key;
    const size_t end = text.find('\n', at + 1);
    text.replace(at, end - at, "\n" + key + ": " + value);
    std::ofstream(dopri5) << text;
  };

  edit("problem_hash", "0123456789abcdef");
  auto [code, log] = run(merge);
  EXPECT_EQ(code, 2) << log;
  EXPECT_NE(log.find("minimal__dopri5.yaml: was run on another version of"), std::string::npos) << log;
  edit("build_id", "0123456789abcdef");
  std::tie(code, log) = run(merge);
  EXPECT_EQ(code, 2) << log;
  EXPECT_NE(log.find("was run by another build of bench"), std::string::npos) << log;
  edit("reference", "0123456789abcdef");
  std::tie(code, log) = run(merge);
  EXPECT_EQ(code, 2) << log;
  EXPECT_NE(log.find("was scored against another reference trajectory"), std::string::npos) << log;
  edit("options", "timed for 9 s; timeout none; step tuned; tol tuned; project initial state no");
  std::tie(code, log) = run(merge);
  EXPECT_EQ(code, 2) << log;
  EXPECT_NE(log.find("was run with other options"), std::string::npos) << log;
  std::ofstream(dopri5) << "rows: [";
  std::tie(code, log) = run(merge);
  EXPECT_EQ(code, 2) << log;
  EXPECT_NE(log.find("minimal__dopri5.yaml:"), std::string::npos) << log;
  EXPECT_FALSE(fs::exists(dir_ / "merged" / "planar_pendulum")) << "a refused merge wrote results";

  fs::remove(dopri5);
  std::tie(code, log) = run(merge);
  EXPECT_EQ(code, 2) << log;
  EXPECT_NE(log.find("no partial summary for 1 of 4 cases"), std::string::npos) << log;
  EXPECT_NE(log.find("minimal/dopri5"), std::string::npos) << log;
  EXPECT_FALSE(fs::exists(dir_ / "merged" / "planar_pendulum"));
  std::tie(code, log) = run(merge + " --allow-missing");
  EXPECT_EQ(code, 0) << log;
  const std::string json = read(dir_ / "merged" / "planar_pendulum" / "summary.json");
  EXPECT_NE(json.find("cases missing: minimal/dopri5"), std::string::npos);
  EXPECT_EQ(comparable_rows(dir_ / "merged" / "planar_pendulum" / "summary.json").size(), 3u);
}

// --jobs: the cases in child processes, then timed one after another in this one.
TEST_F(Sweep, JobsTunesInParallelAndTimesSerially) {
  const std::string bench = kBench + " -p planar_pendulum -f " + kCases + " --min-time 0.01 --results ";
  auto [code, log] = run(bench + (dir_ / "serial").string());
  ASSERT_EQ(code, 0) << log;
  std::tie(code, log) = run(bench + (dir_ / "jobs").string() + " --jobs 2");
  ASSERT_EQ(code, 0) << log;
  const fs::path summary = dir_ / "jobs" / "planar_pendulum" / "summary.json";
  EXPECT_EQ(comparable_rows(dir_ / "serial" / "planar_pendulum" / "summary.json"), comparable_rows(summary));
  const YAML::Node root = YAML::LoadFile(summary.string());
  EXPECT_NE(root["sweep"].as<std::string>().find("timed afterwards one after another in one process"), std::string::npos);
  EXPECT_GT(root["calibration"]["cpu_time_median_s"].as<double>(), 0.0);
  for (const YAML::Node& r : root["rows"]) {
    EXPECT_FALSE(r["cpu_time_median_s"].IsNull()) << r["formulation"] << "/" << r["integrator"];
    EXPECT_FALSE(r["normalized_time"].IsNull());
  }
  // The children's scratch folder is gone.
  for (const auto& e : fs::directory_iterator(dir_ / "jobs" / ".partials"))
    EXPECT_EQ(e.path().filename().string().rfind(".jobs-", 0), std::string::npos) << e.path();
}

// scripts/sweep.sbatch outside Slurm: the task id picks the line; a case that fails its rule ends the
// task with 0 (its partial records it), bad input with 2.
TEST_F(Sweep, SbatchScriptRunsItsLineAndMapsTheExitCodes) {
  const fs::path cases = dir_ / "cases.txt";
  auto [code, log] = run(kBench + " -p planar_pendulum -f minimal/rk4 --step 0.2 --no-timing --results " + dir_.string() +
                         " --list-cases");
  ASSERT_EQ(code, 0) << log;
  std::ofstream(cases) << log << kBench << " --case planar_pendulum:minimal --results " << dir_.string() << "\n";
  const std::string script = MBS_SOURCE_DIR "/scripts/sweep.sbatch " + cases.string();
  std::tie(code, log) = run("SLURM_ARRAY_TASK_ID=1 " + script);
  EXPECT_EQ(code, 0) << log;
  EXPECT_TRUE(fs::exists(dir_ / ".partials" / "planar_pendulum" / "minimal__rk4.yaml")) << log;
  EXPECT_NE(log.find("the case did not pass"), std::string::npos) << log;
  std::tie(code, log) = run("SLURM_ARRAY_TASK_ID=2 " + script);
  EXPECT_EQ(code, 2) << log;
  std::tie(code, log) = run("SLURM_ARRAY_TASK_ID=3 " + script);
  EXPECT_EQ(code, 2) << log;
  EXPECT_NE(log.find("has no line 3"), std::string::npos) << log;
  std::tie(code, log) = run("env -u SLURM_ARRAY_TASK_ID " + script);
  EXPECT_EQ(code, 2) << log;
}

// A linearization problem: one case per formulation, whose row is named formulation/linearize.
TEST_F(Sweep, LinearizationProblemsMergeByFormulation) {
  const std::string bench = kBench + " -p pendulum_3d_linearization --no-timing --results ";
  auto [code, log] = run(bench + (dir_ / "serial").string());
  ASSERT_EQ(code, 0) << log;
  std::tie(code, log) = run(bench + (dir_ / "jobs").string() + " --jobs 2");
  ASSERT_EQ(code, 0) << log;
  const fs::path serial = dir_ / "serial" / "pendulum_3d_linearization", jobs = dir_ / "jobs" / "pendulum_3d_linearization";
  EXPECT_EQ(comparable_rows(serial / "summary.json"), comparable_rows(jobs / "summary.json"));
  for (const auto& e : fs::directory_iterator(serial / "solution"))
    EXPECT_EQ(read(e.path()), read(jobs / "solution" / e.path().filename())) << e.path().filename();
}

}  // namespace
}  // namespace mbs
