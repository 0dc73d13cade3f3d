// The tables show the figure each problem's rule judges: a contact problem's rule is the drift
// between impacts, which the base "max drift" column (the impacts' own losses included) does not show.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include "problem/problem.hpp"
#include "report/report.hpp"
#include "results/summary_json.hpp"

namespace mbs {
namespace {

BenchReport one_row(const Problem& p) {
  BenchReport report;
  report.problem = &p;
  CaseResult row;
  row.formulation = "minimal";
  row.integrator = "rk4";
  row.setting_kind = SettingKind::kFixedStep;
  row.setting = 0.005;
  row.status = CaseStatus::kPass;
  row.score.completed = true;
  row.score.max_energy_drift = 11.68;  // J: the impacts' losses
  row.score.max_energy_drift_between_impacts = 1.5e-7;
  row.score.max_position_violation = row.score.max_velocity_violation = 0.0;
  report.rows.push_back(row);
  return report;
}

TEST(ReportTables, TheRulesMetricHasAColumnWhereNoBaseColumnShowsIt) {
  const Problem p = load_problem(MBS_SOURCE_DIR "/problems/double_pendulum_wall.yaml");
  ASSERT_EQ(p.rule.metric, Metric::kMaxEnergyDriftBetweenImpacts);
  const BenchReport report = one_row(p);
  const std::string md = to_markdown(report), table = format_table(report);
  EXPECT_NE(md.find("| case | setting | steps | max_energy_drift_between_impacts (rule) | max drift (J) |"), std::string::npos) << md;
  EXPECT_NE(md.find("| minimal/rk4 | h=0.005 | 0 | 1.500e-07 | 1.168e+01 |"), std::string::npos) << md;
  EXPECT_NE(table.find("max_energy_drift_between_impacts (rule)"), std::string::npos) << table;
  EXPECT_NE(table.find("1.500e-07"), std::string::npos) << table;
  EXPECT_EQ(YAML::Load(to_json(report))["rows"][0]["rule_metric_value"].as<double>(), 1.5e-7);  // JSON is YAML
}

TEST(ReportTables, NoRuleColumnWhereTheBaseColumnsShowTheRule) {
  const Problem p = load_problem(MBS_SOURCE_DIR "/problems/planar_pendulum.yaml");
  ASSERT_EQ(p.rule.metric, Metric::kMaxEnergyDrift);
  const BenchReport report = one_row(p);
  EXPECT_EQ(to_markdown(report).find("(rule)"), std::string::npos);
  EXPECT_EQ(format_table(report).find("(rule)"), std::string::npos);
}

}  // namespace
}  // namespace mbs
