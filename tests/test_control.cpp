// Control cases (IntegratorInfo::expected_failure): a control that fails or stops has status control
// and leaves the exit code alone; one that passes stays pass, flagged in tables, JSON and on the
// console. --compare checks its baseline before running and never writes over it; a run keeps the
// files scripts/report made (report.md, figures/, sweep.json).
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <fstream>

#include "report/report.hpp"
#include "results/partial.hpp"
#include "results/summary_json.hpp"
#include "run/bench_problem.hpp"
#include "support/cases.hpp"
#include "support/shell.hpp"

namespace mbs {
namespace {
namespace fs = std::filesystem;

using testing::read_text;
using testing::run_command;
const std::string kBench = MBS_BENCH_EXE;

// The registered control case: gen-alpha/rho-1 (no numerical dissipation at index 3).
const IntegratorInfo& control_info() {
  static const IntegratorInfo info = [] {
    for (const testing::Case& c : testing::all_cases())
      if (c.name() == "gen-alpha/rho-1") return c.info;
    return IntegratorInfo{};
  }();
  return info;
}

const Problem& pendulum() {
  static const Problem p = load_problem(MBS_SOURCE_DIR "/problems/planar_pendulum.yaml");
  return p;
}

CaseResult row_with(CaseStatus status, const std::string& message) {
  CaseResult r;
  r.formulation = "gen-alpha";
  r.integrator = "rho-1";
  r.setting_kind = SettingKind::kFixedStep;
  r.status = status;
  r.message = message;
  return r;
}

class Control : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(control_info().expected_failure.empty()) << "gen-alpha/rho-1 is no longer declared a control";
    dir_ = fs::temp_directory_path() / ("mbs_control_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(Control, AFailedOrStoppedControlHasStatusControlAndKeepsItsReason) {
  for (const CaseStatus s : {CaseStatus::kFail, CaseStatus::kError}) {
    CaseResult r = row_with(s, "Newton did not converge");
    mark_control(r, control_info());
    EXPECT_EQ(r.status, CaseStatus::kControl);
    EXPECT_EQ(r.outcome(), s);
    EXPECT_EQ(r.message, "Newton did not converge");
    EXPECT_FALSE(has_failed_rows({r}));
    const std::string note = row_note(r);
    EXPECT_NE(note.find(fmt::format("{} as expected: Newton did not converge", s)), std::string::npos) << note;
    EXPECT_NE(note.find(control_info().expected_failure), std::string::npos) << note;
  }
  CaseResult unsupported = row_with(CaseStatus::kUnsupported, "no contacts");
  mark_control(unsupported, control_info());
  EXPECT_EQ(unsupported.status, CaseStatus::kUnsupported);
  CaseResult plain = row_with(CaseStatus::kFail, "drift");
  mark_control(plain, IntegratorInfo{"rk4", SettingKind::kFixedStep, 0.1, 1e-4, "", ""});
  EXPECT_EQ(plain.status, CaseStatus::kFail);  // not a control: a failure as before
  EXPECT_TRUE(has_failed_rows({plain}));
}

TEST_F(Control, APassingControlIsFlaggedInTablesJsonAndAWarning) {
  BenchReport report;
  report.problem = &pendulum();
  CaseResult r = row_with(CaseStatus::kPass, "");
  r.setting = 1e-3;
  r.score.completed = true;
  mark_control(r, control_info());
  EXPECT_EQ(r.status, CaseStatus::kPass);
  EXPECT_FALSE(has_failed_rows({r}));
  report.rows.push_back(r);
  EXPECT_NE(format_table(report).find("pass (control)"), std::string::npos) << format_table(report);
  const std::string md = to_markdown(report);
  EXPECT_NE(md.find("| pass (control) |"), std::string::npos) << md;
  EXPECT_NE(md.find("- `gen-alpha/rho-1`: a control case, expected to fail, PASSED"), std::string::npos) << md;
  const std::vector<std::string> warnings = control_warnings(report);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("gen-alpha/rho-1 is a control case, expected to fail, but it passed"), std::string::npos);
  const YAML::Node json = YAML::Load(to_json(report))["rows"][0];
  EXPECT_EQ(json["status"].as<std::string>(), "pass");
  EXPECT_TRUE(json["control"].as<bool>());
  EXPECT_FALSE(json["control_outcome"]);  // only a control that did not pass has one
  EXPECT_NE(to_csv(report).find(",pass,true,"), std::string::npos) << to_csv(report);
}

// summary.json and the partial summary carry a control row whole, through their readers.
TEST_F(Control, StatusAndFlagSurviveTheSummaryAndPartialCodecs) {
  BenchReport report;
  report.problem = &pendulum();
  report.created = "2026-01-01T00:00:00Z";
  CaseResult failed = row_with(CaseStatus::kError, "Newton did not converge");
  mark_control(failed, control_info());
  CaseResult passed = row_with(CaseStatus::kPass, "");
  passed.setting = 1e-3;
  passed.score.completed = true;
  passed.score.stats.steps = 10000;
  mark_control(passed, control_info());
  CaseResult other = row_with(CaseStatus::kFail, "drift");
  other.formulation = "minimal";
  report.rows = {failed, passed, other};

  const fs::path json = dir_ / "summary.json";
  std::ofstream(json) << to_json(report);
  const Summary s = read_summary(json.string());
  ASSERT_EQ(s.rows.size(), 3u);
  EXPECT_EQ(s.rows[0].status, CaseStatus::kControl);
  EXPECT_TRUE(s.rows[0].control);
  EXPECT_EQ(s.rows[1].status, CaseStatus::kPass);
  EXPECT_TRUE(s.rows[1].control);
  EXPECT_EQ(s.rows[1].steps, 10000);
  EXPECT_EQ(s.rows[2].status, CaseStatus::kFail);
  EXPECT_FALSE(s.rows[2].control);
  EXPECT_EQ(YAML::LoadFile(json.string())["rows"][0]["control_outcome"].as<std::string>(), "error");

  const std::string path = partial_path(dir_.string(), "planar_pendulum", "gen-alpha/rho-1");
  write_partial(report, "gen-alpha/rho-1", SweepFingerprint{}, path);
  const Partial p = read_partial(path);
  ASSERT_EQ(p.rows.size(), 3u);
  EXPECT_EQ(p.rows[0].status, CaseStatus::kControl);
  EXPECT_EQ(p.rows[0].control_outcome, CaseStatus::kError);
  EXPECT_EQ(p.rows[0].expected_failure, control_info().expected_failure);
  EXPECT_EQ(p.rows[0].message, "Newton did not converge");
  EXPECT_EQ(p.rows[1].status, CaseStatus::kPass);
  EXPECT_TRUE(p.rows[1].control());
  EXPECT_FALSE(p.rows[2].control());
  EXPECT_EQ(p.rows[2].status, CaseStatus::kFail);
}

// The README's quick start on the cases that matter: a healthy run whose control case stops exits 0,
// serially, with --jobs, and through a sweep's --case and --merge.
TEST_F(Control, AFailingControlLeavesTheExitCodeAtZeroInEveryWayToRun) {
  const std::string cases = " -p planar_pendulum -f gen-alpha --no-timing -q --results ";
  auto [code, log] = run_command(kBench + cases + (dir_ / "serial").string());
  EXPECT_EQ(code, 0) << log;
  EXPECT_NE(log.find("gen-alpha/rho-1: control case,"), std::string::npos) << log;
  const YAML::Node rows = YAML::LoadFile((dir_ / "serial" / "planar_pendulum" / "summary.json").string())["rows"];
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0]["status"].as<std::string>(), "pass");  // rho-0.9: not a control
  EXPECT_FALSE(rows[0]["control"]);
  EXPECT_EQ(rows[1]["status"].as<std::string>(), "control");
  EXPECT_TRUE(rows[1]["control"].as<bool>());
  EXPECT_EQ(rows[1]["expected_failure"].as<std::string>(), control_info().expected_failure);

  std::tie(code, log) = run_command(kBench + cases + (dir_ / "jobs").string() + " --jobs 2");
  EXPECT_EQ(code, 0) << log;
  EXPECT_EQ(read_text(dir_ / "jobs" / "planar_pendulum" / "summary.csv"), read_text(dir_ / "serial" / "planar_pendulum" / "summary.csv"));

  const std::string partials = (dir_ / "partials").string();
  std::tie(code, log) = run_command(kBench + " --case planar_pendulum:gen-alpha/rho-1 --no-timing -q --results " + (dir_ / "merged").string() +
                            " --partials " + partials);
  EXPECT_EQ(code, 0) << log;
  std::tie(code, log) = run_command(kBench + " --case planar_pendulum:gen-alpha/rho-0.9 --no-timing -q --results " +
                            (dir_ / "merged").string() + " --partials " + partials);
  EXPECT_EQ(code, 0) << log;
  std::tie(code, log) = run_command(kBench + cases + (dir_ / "merged").string() + " --merge --partials " + partials);
  EXPECT_EQ(code, 0) << log;
  EXPECT_EQ(read_text(dir_ / "merged" / "planar_pendulum" / "summary.csv"), read_text(dir_ / "serial" / "planar_pendulum" / "summary.csv"));
}

// --compare reads its baseline before anything runs: a missing, garbled or foreign one is exit 2
// with no case run, and so is a baseline inside the folder the run would replace.
TEST_F(Control, CompareChecksItsBaselineFirstAndNeverWritesOverIt) {
  const std::string bench = kBench + " -p planar_pendulum -f minimal/rk4 --no-timing -q ";
  auto [code, log] = run_command(bench + "--results " + dir_.string());
  ASSERT_EQ(code, 0) << log;
  const fs::path baseline = dir_ / "planar_pendulum" / "summary.json";
  const std::string before = read_text(baseline);
  std::tie(code, log) = run_command(bench + "--results " + dir_.string() + " --compare " + baseline.string());
  EXPECT_EQ(code, 2) << log;
  EXPECT_NE(log.find("which this run would replace with its own results"), std::string::npos) << log;
  EXPECT_EQ(log.find("minimal/rk4  "), std::string::npos) << "a case ran before the refusal:\n" << log;
  EXPECT_EQ(read_text(baseline), before);

  const fs::path garbled = dir_ / "garbled.json";
  std::ofstream(garbled) << "{\"problem\": \"planar_pendulum\", \"rows\": [\n  {\"formulation\": \"minimal\"";
  const fs::path no_rows = dir_ / "no_rows.json";
  std::ofstream(no_rows) << "{\"problem\": \"planar_pendulum\"}\n";
  const fs::path missing_status = dir_ / "missing_status.json";
  std::ofstream(missing_status) << "{\"problem\": \"planar_pendulum\", \"rows\": [{\"formulation\": \"minimal\", \"integrator\": \"rk4\"}]}\n";
  const std::pair<fs::path, std::string> bad[] = {{dir_ / "none.json", "cannot open the baseline"},
                                                  {garbled, "garbled.json:"},
                                                  {no_rows, "no 'rows' list"},
                                                  {missing_status, "missing_status.json: row 1:"}};
  for (const auto& [file, why] : bad) {
    std::tie(code, log) = run_command(bench + "--no-write --compare " + file.string());
    EXPECT_EQ(code, 2) << log;
    EXPECT_NE(log.find(why), std::string::npos) << log;
    EXPECT_EQ(log.find("minimal/rk4  "), std::string::npos) << "a case ran before the refusal:\n" << log;
  }
  std::tie(code, log) = run_command(kBench + " -p pendulum_large_amplitude -f minimal/rk4 --no-timing --no-write --compare " + baseline.string());
  EXPECT_EQ(code, 2) << log;
  EXPECT_NE(log.find("the baseline is for problem 'planar_pendulum', not 'pendulum_large_amplitude'"), std::string::npos) << log;
}

// Ratios per row, and the rows either side lacks, listed.
TEST_F(Control, CompareListsSkippedRowsAndPrintsRatios) {
  auto [code, log] = run_command(kBench + " -p planar_pendulum -f minimal/rk4,minimal/dopri5 --no-timing -q --results " + dir_.string());
  ASSERT_EQ(code, 0) << log;
  const fs::path baseline = dir_ / "baseline.json";
  fs::copy_file(dir_ / "planar_pendulum" / "summary.json", baseline);
  const long steps = YAML::LoadFile(baseline.string())["rows"][0]["steps"].as<long>();
  std::tie(code, log) = run_command(kBench + " -p planar_pendulum -f minimal/rk4,projection/rk4 --no-timing --no-write --compare " +
                            baseline.string());
  EXPECT_EQ(code, 0) << log;
  // The same case tuned again: the same setting, so the same steps (the runs are deterministic).
  const size_t row = log.find("\n  minimal/rk4  pass -> pass ");
  ASSERT_NE(row, std::string::npos) << log;
  EXPECT_NE(log.substr(row, log.find('\n', row + 1) - row).find(fmt::format(" 1.00 ({} -> {}) ", steps, steps)), std::string::npos) << log;
  EXPECT_NE(log.find("skipped, in the baseline but not run now:\n  minimal/dopri5 (pass in the baseline): case not selected"),
            std::string::npos) << log;
  EXPECT_NE(log.find("skipped, run now but not in the baseline:\n  projection/rk4 (pass now)"), std::string::npos) << log;
  EXPECT_NE(log.find("no regression against"), std::string::npos) << log;
}

// A run replaces results/<problem>/ whole but carries over what scripts/report made from it.
TEST_F(Control, ARunKeepsTheReportFiguresAndSweepItDoesNotRegenerate) {
  BenchReport report;
  report.problem = &pendulum();
  CaseResult r = row_with(CaseStatus::kFail, "drift");
  r.formulation = "minimal";
  r.integrator = "rk4";
  report.rows = {r};
  write_results(report, dir_.string());
  const fs::path folder = dir_ / "planar_pendulum";
  std::ofstream(folder / "report.md") << "# report\n";
  std::ofstream(folder / "sweep.json") << "{}\n";
  fs::create_directories(folder / "figures");
  std::ofstream(folder / "figures" / "work_precision.png") << "png";
  std::ofstream(folder / "stale.txt") << "not carried over";
  report.rows[0].message = "drift again";
  write_results(report, dir_.string());
  EXPECT_EQ(read_text(folder / "report.md"), "# report\n");
  EXPECT_EQ(read_text(folder / "sweep.json"), "{}\n");
  EXPECT_EQ(read_text(folder / "figures" / "work_precision.png"), "png");
  EXPECT_FALSE(fs::exists(folder / "stale.txt"));  // the rest is replaced whole
  EXPECT_NE(read_text(folder / "summary.json").find("drift again"), std::string::npos);
  for (const auto& e : fs::directory_iterator(dir_))  // no staging folder left behind
    EXPECT_EQ(e.path().filename().string().find(".staging"), std::string::npos) << e.path();
}

}  // namespace
}  // namespace mbs
