// pinned_bar (Solfec validation manual): a rigid bar on two spherical joints, six constraint
// equations of rank five. Every case that supports it, tuned to the energy rule and at the source's
// h = 2^-8 s, gives |omega| at the vertical with ratio 1.000 to the exact target for the real
// 0.1 x 0.1 cross-section, and 0.997 to the printed thin-rod target 2.121 (as Solfec did).
#include <gtest/gtest.h>

#include <cmath>

#include "core/natural_coordinates.hpp"
#include "references/hinged_body.hpp"
#include "run/bench_case.hpp"
#include "support/cases.hpp"

namespace mbs {
namespace {

const Problem& problem() {
  static const Problem p = load_problem(MBS_SOURCE_DIR "/problems/pinned_bar.yaml");
  return p;
}

// Closed forms, independent of the harness: L = 1, b = 0.1, a = 0.25, rho = 1, g = 9.8, 30 deg.
constexpr double kL = 1.0, kB = 0.1, kA = 0.25, kG = 9.8;
const double kMass = 1.0 * kB * kB * kL;
const double kIPin = kMass * ((kL * kL + kB * kB) / 12 + (kL / 2 - kA) * (kL / 2 - kA));
const double kOmega = std::sqrt(2 * kMass * kG * (kL / 2 - kA) * (1 - std::cos(M_PI / 6)) / kIPin);

TEST(PinnedBar, ModelAndTargetsFromShapeAndDensity) {
  const Model& m = problem().model;
  ASSERT_EQ(m.bodies.size(), 1u);
  EXPECT_NEAR(m.bodies[0].mass, kMass, 1e-15);
  EXPECT_NEAR(m.bodies[0].second_moments[2], kMass * kL * kL / 12, 1e-16);
  EXPECT_EQ(m.nq(), 12);
  EXPECT_EQ(m.nc(), 12);  // 2 x 3 spherical + 6 rigidity
  // Rank 11: one of the spherical equations is redundant.
  NaturalCoordinates nat(m);
  Eigen::MatrixXd J(m.nc(), m.nq());
  nat.Phi_q(m.initial_q(), J);
  EXPECT_EQ(Eigen::FullPivLU<Eigen::MatrixXd>(J).rank(), 11);
  const HingedBodyExact h = HingedBodyExact::from_problem(problem());
  EXPECT_NEAR(h.moment_of_inertia(), kIPin, 1e-15);
  EXPECT_NEAR(h.angular_speed_at_vertical(), kOmega, 1e-12);
  EXPECT_NEAR(h.initial_angle(), M_PI / 6, 1e-12);
  EXPECT_NEAR(kOmega, 2.1157, 1e-4);
  // The printed target is the thin-rod formula with 3 (1 - cos 30 deg) rounded to 0.402.
  const double thin = std::sqrt(0.402 * kG * (kL - 2 * kA) / (kL * kL - 3 * kL * kA + 3 * kA * kA));
  EXPECT_NEAR(thin, problem().checks[0].published, 1e-3);
  // Solfec's ratio 0.997 is to the unrounded formula value; the real section's target gives the same.
  EXPECT_NEAR(kOmega / thin, 0.997, 5e-4);
}

TEST(PinnedBar, AngularVelocityFromNaturalCoordinates) {
  // A rigid rotation about y at 2 rad/s: omega = 1/2 sum u_i x u_i' recovers it exactly.
  Model m = problem().model;
  m.bodies[0].omega0 = Eigen::Vector3d(0, 2, 0);
  NaturalCoordinates nat(m);
  EXPECT_LT((nat.angular_velocity(0, m.initial_q(), m.initial_v()) - Eigen::Vector3d(0, 2, 0)).norm(), 1e-15);
  // Kinetic energy 1/2 omega^T I omega for a rotation about the centroid.
  m.bodies[0].v0.setZero();
  NaturalCoordinates nat2(m);
  const Eigen::Vector3d I = m.bodies[0].principal_inertia();
  const Eigen::Vector3d w_body = m.bodies[0].R0.transpose() * Eigen::Vector3d(0, 2, 0);
  EXPECT_NEAR(nat2.kinetic_energy(m.initial_v()), 0.5 * w_body.dot(I.asDiagonal() * w_body), 1e-17);
}

using testing::own_cases;
using testing::Case;

// `at_published_step`: the source's no-interpolation figure (check 0) is judged at its own step only.
void expect_omega(const CaseResult& row, double tolerance, bool at_published_step) {
  ASSERT_TRUE(row.score.completed) << row.message;
  ASSERT_EQ(row.score.checks.size(), 2u);
  for (size_t i = at_published_step ? 0 : 1; i < 2; ++i) {
    const CheckValue& c = row.score.checks[i];
    EXPECT_NEAR(c.target, kOmega, 1e-12);
    EXPECT_LT(std::abs(c.ratio() - 1.0), 5e-4) << c.value;            // the source's 3 decimals
    // Against the printed target 2.121 (the thin-rod formula's 2.12188, truncated): 0.9975.
    EXPECT_NEAR(c.value / problem().checks[0].published, kOmega / 2.121, 3e-4);
  }
  // Interpolated: within the tuning rule's 1e-4 (tuned), or energy drift dE / (I omega) plus the
  // quadratic's error (published h); the first step past the vertical is lower by up to
  // (m g d / 2 I omega) (omega h)^2 = 2.7e-4 rad/s at h = 2^-8 s.
  EXPECT_NEAR(row.score.checks[1].value, kOmega, tolerance);
}

class PinnedBarCases : public ::testing::TestWithParam<Case> {};

TEST_P(PinnedBarCases, TunedSettingReproducesTheTargetOrSaysWhyNot) {
  const Case& c = GetParam();
  CaseOptions o;
  o.min_time_s = 1e-3;
  const CaseResult row = run_case(problem(), *c.formulation, c.info, o);
  if (row.status == CaseStatus::kUnsupported) {
    EXPECT_FALSE(row.message.empty());
    GTEST_SKIP() << row.message;
  }
  if (c.control() && row.status != CaseStatus::kPass)
    GTEST_SKIP() << "control case, " << to_string(row.status) << " as declared: " << c.info.expected_failure;
  EXPECT_EQ(row.status, CaseStatus::kPass) << row.message;
  // The rule: drift < 3e-7 J and the interpolated ratio within 1e-4 (the sampling of coarse steps).
  EXPECT_EQ(problem().rule.checks_within, 1e-4);
  expect_omega(row, 1e-4 * kOmega, false);
}

TEST_P(PinnedBarCases, PublishedStepReproducesTheTarget) {
  const Case& c = GetParam();
  if (c.info.kind != SettingKind::kFixedStep) GTEST_SKIP() << "the published h applies to fixed-step methods";
  CaseOptions o;
  o.min_time_s = 1e-3;
  o.step = *problem().published_step;
  const CaseResult row = run_case(problem(), *c.formulation, c.info, o);
  if (row.status == CaseStatus::kUnsupported) GTEST_SKIP() << row.message;
  expect_omega(row, 2e-4, true);
}

// A problem suite: our own cases (an engine's rows are judged here by the committed results).
INSTANTIATE_TEST_SUITE_P(AllCases, PinnedBarCases, ::testing::ValuesIn(own_cases()),
                         testing::case_test_name<::testing::TestParamInfo<Case>>);

}  // namespace
}  // namespace mbs
