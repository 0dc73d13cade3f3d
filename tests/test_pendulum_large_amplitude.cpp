// pendulum_large_amplitude (Solfec validation manual): every case, at its tuned setting and (fixed
// step) at the source's h = 0.001 s, reproduces the published table: period after 1 and 10 swings
// and total energy, ratio 1.000 to the exact targets 4 sqrt(l/g3) K(sin(pi/4)) and pi^2.
#include <gtest/gtest.h>

#include <cmath>

#include "core/formulation.hpp"
#include "run/bench_case.hpp"
#include "support/cases.hpp"

namespace mbs {
namespace {

const Problem& problem() {
  static const Problem p = load_problem(MBS_SOURCE_DIR "/problems/pendulum_large_amplitude.yaml");
  return p;
}

using testing::own_cases;
using testing::Case;

void expect_published_table(const CaseResult& row) {
  ASSERT_TRUE(row.score.completed) << row.message;
  const Problem& p = problem();
  ASSERT_EQ(row.score.checks.size(), 4u);
  const double T = 4.0 * std::sqrt(1.0 / (M_PI * M_PI)) * std::comp_ellint_1(std::sin(M_PI / 4));
  for (size_t i = 0; i < 4; ++i) {
    const CheckValue& c = row.score.checks[i];
    // The targets are the exact ones, not the printed ones.
    EXPECT_NEAR(c.target, p.checks[i].quantity == "period" ? p.checks[i].swings * T : M_PI * M_PI, 1e-12);
    // The source's criterion: the ratio printed with 3 decimals is 1.000.
    EXPECT_LT(std::abs(c.ratio() - 1.0), 5e-4) << p.checks[i].name << " = " << c.value;
  }
  // Tighter physics: energy within 1e-3 J of pi^2 at both swings (the worst, penalty at h = 1e-3 s,
  // drifts 1e-3 J over 10 swings), period after 10 swings within 1e-3 s of 10 T.
  EXPECT_NEAR(row.score.checks[1].value, M_PI * M_PI, 1.1e-3);
  EXPECT_NEAR(row.score.checks[3].value, M_PI * M_PI, 1.1e-3);
  EXPECT_NEAR(row.score.checks[2].value, 10 * T, 1e-3);
}

class LargeAmplitude : public ::testing::TestWithParam<Case> {};

TEST_P(LargeAmplitude, TunedSettingReproducesThePublishedTable) {
  const Case& c = GetParam();
  CaseOptions o;
  o.min_time_s = 1e-3;  // timing is not under test
  const CaseResult row = run_case(problem(), *c.formulation, c.info, o);
  if (c.control()) {  // declared to fail: no setting meets the energy rule
    EXPECT_NE(row.status, CaseStatus::kPass) << c.info.expected_failure;
    return;
  }
  EXPECT_EQ(row.status, CaseStatus::kPass) << row.message;
  expect_published_table(row);
  // Tuned to the energy rule (5e-6 J): the period after 10 swings is then within 2e-4 s of exact
  // (8e-6 relative, against the table's 5e-4), up to the Hermite sampling error of the coarsest
  // steps between which the crossing is read (fehlberg8, ~0.15 s: ~3e-5 s; dop853-fixed at its
  // tuned 0.161 s: 1.05e-4 s, while its energy is within 4e-6 J).
  EXPECT_NEAR(row.score.checks[2].value, row.score.checks[2].target, 2e-4);
}

TEST_P(LargeAmplitude, PublishedStepReproducesThePublishedTable) {
  const Case& c = GetParam();
  if (c.info.kind != SettingKind::kFixedStep) GTEST_SKIP() << "the published h applies to fixed-step methods";
  CaseOptions o;
  o.min_time_s = 1e-3;
  o.step = *problem().published_step;
  const CaseResult row = run_case(problem(), *c.formulation, c.info, o);
  if (c.control()) {  // declared to fail: stopped by its solver, or far off the table's energy after 10 swings
    const bool off = row.score.checks.size() == 4 && std::abs(row.score.checks[3].value - M_PI * M_PI) > 1.1e-3;
    EXPECT_TRUE(!row.score.completed || off) << c.info.expected_failure;
    return;
  }
  expect_published_table(row);
}

// A problem suite: our own cases (an engine's rows are judged here by the committed results).
INSTANTIATE_TEST_SUITE_P(AllCases, LargeAmplitude, ::testing::ValuesIn(own_cases()),
                         testing::case_test_name<::testing::TestParamInfo<Case>>);

}  // namespace
}  // namespace mbs
