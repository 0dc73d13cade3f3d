// The problem loader: the real problem file loads to the right model; malformed files are
// rejected with "file:line:column: what is wrong".
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <regex>
#include <vector>

#include "core/natural_coordinates.hpp"
#include "elements/rod.hpp"
#include "problem/problem.hpp"
#include "problem/reference_kinds.hpp"
#include "problem/yaml_document.hpp"
#include "references/simple_pendulum.hpp"
#include "support/load_error.hpp"

namespace mbs {
namespace {

const std::string kGood = R"(name: p
space: planar
gravity: [0.0, -9.81, 0.0]
bodies:
  - name: P1
    kind: point_mass
    mass: 1.0
    position: [-1.0, 0.0, 0.0]
joints:
  - name: rod
    kind: rod
    a: {ground: [0.0, 0.0, 0.0]}
    b: {body: P1}
run:
  end_time: 10.0
score:
  rule: {metric: max_energy_drift, below: 5.0e-5}
)";

std::string error_of(const std::string& text) { return testing::load_error(text); }

std::string replace(std::string s, const std::string& from, const std::string& to) {
  const size_t at = s.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return s.replace(at, from.size(), to);
}

TEST(Loader, PlanarPendulumFileBuildsTheModel) {
  const Problem p = load_problem(MBS_SOURCE_DIR "/problems/planar_pendulum.yaml");
  EXPECT_EQ(p.name, "planar_pendulum");
  EXPECT_EQ(p.model.dim, 2);
  ASSERT_EQ(p.model.points.size(), 1u);
  const auto rods = p.model.elements_of<Rod>();
  ASSERT_EQ(rods.size(), 1u);
  EXPECT_DOUBLE_EQ(p.model.points[0].mass, 1.0);
  EXPECT_DOUBLE_EQ(rods[0]->length, 1.0);
  EXPECT_TRUE(rods[0]->a.is_ground());
  EXPECT_DOUBLE_EQ(p.model.gravity[1], -9.81);
  EXPECT_DOUBLE_EQ(p.model.points[0].r0[0], -1.0);
  EXPECT_DOUBLE_EQ(p.run.end_time, 10.0);
  EXPECT_EQ(p.rule.metric, Metric::kMaxEnergyDrift);
  EXPECT_DOUBLE_EQ(p.rule.below, 5e-5);
  ASSERT_NE(reference_as<SimplePendulumReference>(p), nullptr);
  EXPECT_EQ(reference_as<SimplePendulumReference>(p)->point, 0);
}

// The reference kinds are the registered ones (harness/references/), and the loader's messages list
// them from the registry.
TEST(Loader, ReferenceKindsComeFromTheRegistry) {
  std::vector<std::string> names;
  for (const ReferenceKindInfo* k : ReferenceKinds::instance().all()) names.push_back(k->name);
  EXPECT_EQ(names, (std::vector<std::string>{"converged", "equivalent_pendulum", "hinged_body_energy", "pendulum_linear", "simple_pendulum_exact", "slider_crank"}));
  const std::string known = "(known: converged, equivalent_pendulum, hinged_body_energy, simple_pendulum_exact, slider_crank)";
  EXPECT_NE(error_of(kGood + "reference: {kind: exact_pendulum}\n").find("unknown reference kind 'exact_pendulum' " + known),
            std::string::npos);
  // pendulum_linear is for linearization problems only.
  EXPECT_NE(error_of(kGood + "reference: {kind: pendulum_linear, point: P1, pivot: [0.0, 0.0, 0.0]}\n")
                .find("unknown reference kind 'pendulum_linear' " + known),
            std::string::npos);
  const std::string converged_with_checks = replace(kGood, "  rule: {metric: max_energy_drift, below: 5.0e-5}\n",
                                                    "  rule: {metric: max_energy_drift, below: 5.0e-5}\n"
                                                    "  checks:\n"
                                                    "    - {name: T, quantity: period, swings: 1, published: 2.0, decimals: 3}\n") +
                                            "reference:\n  kind: converged\n  cases:\n"
                                            "    - {case: a/b, step: 1.0e-5}\n    - {case: c/d, tol: 1.0e-11}\n";
  EXPECT_NE(error_of(converged_with_checks).find("score.checks need an exact reference that evaluates them (hinged_body_energy, simple_pendulum_exact), "
                                                 "not a converged one"),
            std::string::npos)
      << error_of(converged_with_checks);
}

TEST(Loader, MinimalFileIsAccepted) { EXPECT_EQ(error_of(kGood), "(accepted)"); }

// A stored converged reference is keyed on the parsed problem: comments, layout, title and source
// leave the key alone; a changed value does not.
TEST(Loader, ProblemKeyIgnoresCommentsLayoutTitleAndSource) {
  const std::string key = problem_key(load_problem_text(kGood, "p.yaml"));
  const std::string annotated = "# The story of this pendulum.\ntitle: A pendulum\nsource: a public paper\n" +
                                replace(replace(kGood, "mass: 1.0", "mass:    1.0   # kg"), "end_time: 10.0", "end_time: 10.0  # s");
  EXPECT_EQ(problem_key(load_problem_text(annotated, "p.yaml")), key);
  EXPECT_NE(problem_key(load_problem_text(replace(kGood, "mass: 1.0", "mass: 2.0"), "p.yaml")), key);
  EXPECT_NE(problem_key(load_problem_text(replace(kGood, "end_time: 10.0", "end_time: 5.0"), "p.yaml")), key);
}

TEST(Loader, YamlSyntaxErrorHasPosition) {
  EXPECT_EQ(error_of("name: p\nbodies: [1, 2\n"),
            "bad.yaml:3:1: YAML syntax error: did not find expected ',' or ']' (while parsing a flow sequence from 2:9)");
}

// The reader's YAML tree (libyaml's events): what yaml-cpp gave the readers, plus the errors a
// node graph let through.
TEST(YamlDocument, ReadsScalarsSequencesMapsAndPositions) {
  const yaml::Document doc("a: 1.5\nb: [x, {c: ~}]\nd:\n  - 2\n  - e: yes\n");
  const yaml::Node root = doc.root();
  ASSERT_TRUE(root.IsMap());
  EXPECT_EQ(root.size(), 3u);
  EXPECT_EQ(root["a"].Scalar(), "1.5");
  EXPECT_EQ(root["a"].mark().line, 0);
  EXPECT_EQ(root["a"].mark().column, 3);
  EXPECT_FALSE(root["z"]);
  EXPECT_TRUE(root["z"].mark().is_null());
  EXPECT_TRUE(root["b"].IsSequence());
  EXPECT_EQ(root["b"][0].Scalar(), "x");
  EXPECT_TRUE(root["b"][1]["c"].IsNull());
  EXPECT_FALSE(root["b"][1]["c"].IsScalar());
  EXPECT_FALSE(root["b"][2]);
  EXPECT_EQ(root["d"][1]["e"].mark().line, 4);
  std::vector<std::string> keys;
  for (const auto& kv : root) keys.emplace_back(kv.first.scalar_view());
  EXPECT_EQ(keys, (std::vector<std::string>{"a", "b", "d"}));
  int items = 0;
  for (const yaml::Node& n : root["d"]) items += n ? 1 : 0;
  EXPECT_EQ(items, 2);
  EXPECT_TRUE(yaml::Document("").root().IsNull());
  EXPECT_EQ(yaml::Document("a: &p [1, 2]\nb: *p\n").root()["b"][1].Scalar(), "2");
}

TEST(YamlDocument, RejectsDuplicateAndComplexKeysAndUnknownAliases) {
  auto message = [](const std::string& text) {
    try {
      yaml::Document d(text);
    } catch (const yaml::ParseError& e) {
      return std::to_string(e.mark.line + 1) + ":" + std::to_string(e.mark.column + 1) + " " + e.what();
    }
    return std::string("(accepted)");
  };
  EXPECT_EQ(message("a: 1\nb: 2\na: 3\n"), "3:1 duplicate key 'a' in a mapping");
  std::string large;
  for (int k = 0; k < 40; ++k) large += "k" + std::to_string(k) + ": 0\n";
  EXPECT_EQ(message(large + "k7: 1\n"), "41:1 duplicate key 'k7' in a mapping");
  EXPECT_EQ(message("[1, 2]: 3\n"), "1:1 a mapping key must be a plain value");
  EXPECT_EQ(message("a: *nowhere\n"), "1:4 alias *nowhere names no anchor before it");
  EXPECT_EQ(message("a: &s [1, *s]\n"), "1:11 alias *s names no anchor before it");  // no cycle
  EXPECT_EQ(error_of("name: p\nname: q\n"), "bad.yaml:2:1: YAML syntax error: duplicate key 'name' in a mapping");
}

TEST(YamlDocument, NumbersAndFlagsAsYamlCppConvertedThem) {
  double x = 0.0;
  for (const auto& [text, value] : std::vector<std::pair<std::string, double>>{
           {"1.5", 1.5}, {"-2", -2.0}, {"+3e2", 300.0}, {".5", 0.5}, {"5.", 5.0}, {"1E-3", 1e-3}, {"7  ", 7.0}}) {
    EXPECT_TRUE(yaml::to_double(text, x)) << text;
    EXPECT_EQ(x, value) << text;
  }
  EXPECT_TRUE(yaml::to_double(".inf", x) && std::isinf(x) && x > 0);
  EXPECT_TRUE(yaml::to_double("-.Inf", x) && std::isinf(x) && x < 0);
  EXPECT_TRUE(yaml::to_double(".NaN", x) && std::isnan(x));
  for (const std::string bad : {"", " 1", "1e999", "heavy", "1.5m", "+-1", "--1", "+", "-", "0x10", "1,5"})
    EXPECT_FALSE(yaml::to_double(bad, x)) << bad;
  bool b = false;
  for (const std::string t : {"true", "True", "TRUE", "yes", "y", "on", "ON"}) EXPECT_TRUE(yaml::to_bool(t, b) && b) << t;
  for (const std::string f : {"false", "No", "n", "off", "OFF"}) EXPECT_TRUE(yaml::to_bool(f, b) && !b) << f;
  for (const std::string bad : {"tRue", "1", "", "yess"}) EXPECT_FALSE(yaml::to_bool(bad, b)) << bad;
}

TEST(Loader, UnknownKeySuggestsTheNearestKnownOne) {
  EXPECT_EQ(error_of(replace(kGood, "    mass: 1.0", "    mas: 1.0")),
            "bad.yaml:7:5: unknown key 'mas' in a point mass (did you mean 'mass'?)");
}

TEST(Loader, OutputIntervalLongerThanTheRun) {
  EXPECT_EQ(error_of(replace(kGood, "  end_time: 10.0\n", "  end_time: 1.0e-12\n  output_interval: 0.01\n")),
            "bad.yaml:16:20: run.output_interval (0.01 s) is longer than run.end_time (1e-12 s)");
}

TEST(Loader, MissingRequiredField) {
  EXPECT_EQ(error_of(replace(kGood, "    mass: 1.0\n", "")), "bad.yaml:5:5: missing required key 'mass' in body P1");
}

TEST(Loader, WrongType) {
  EXPECT_EQ(error_of(replace(kGood, "mass: 1.0", "mass: heavy")),
            "bad.yaml:7:11: mass of P1 must be a finite number, got 'heavy'");
  EXPECT_EQ(error_of(replace(kGood, "position: [-1.0, 0.0, 0.0]", "position: [-1.0, 0.0]")),
            "bad.yaml:8:15: position of P1 must be a list of 3 numbers [x, y, z]");
}

TEST(Loader, NonPositiveMassAndEndTime) {
  EXPECT_EQ(error_of(replace(kGood, "mass: 1.0", "mass: -2")), "bad.yaml:7:11: mass of P1 must be positive, got -2");
  EXPECT_EQ(error_of(replace(kGood, "end_time: 10.0", "end_time: 0")),
            "bad.yaml:15:13: run.end_time must be positive, got 0");
}

TEST(Loader, JointNamingAMissingBody) {
  EXPECT_EQ(error_of(replace(kGood, "b: {body: P1}", "b: {body: P2}")),
            "bad.yaml:13:15: joint rod names body 'P2', which is not defined");
}

TEST(Loader, InitialStateViolatingAJoint) {
  EXPECT_EQ(error_of(replace(kGood, "    b: {body: P1}\n", "    b: {body: P1}\n    length: 1.5\n")),
            "bad.yaml:14:13: initial state violates joint rod: end points are 1 m apart, length is 1.5 m "
            "(fix the positions, or run with --project-initial-state)");
}

TEST(Loader, InitialVelocityViolatingAJoint) {
  // Moving along the rod towards the pivot at 2 m/s.
  EXPECT_EQ(error_of(replace(kGood, "    position: [-1.0, 0.0, 0.0]\n",
                             "    position: [-1.0, 0.0, 0.0]\n    velocity: [2.0, 0.0, 0.0]\n")),
            "bad.yaml:11:5: initial velocities violate joint rod: the distance between its ends changes at -2 m/s "
            "(fix the velocities, or run with --project-initial-state)");
}

TEST(Loader, ProjectInitialStateOntoTheConstraints) {
  // P1 at 1.5 m from the pivot on a 1 m rod, moving radially and tangentially.
  const std::string text = replace(replace(kGood, "    b: {body: P1}\n", "    b: {body: P1}\n    length: 1.0\n"),
                                   "    position: [-1.0, 0.0, 0.0]\n",
                                   "    position: [-1.2, 0.9, 0.0]\n    velocity: [1.0, 2.0, 0.0]\n");
  const Problem p = load_problem_text(text, "bad.yaml", LoadOptions{true});
  const Eigen::VectorXd r = p.model.points[0].r0, v = p.model.points[0].v0;
  EXPECT_NEAR(r.norm(), 1.0, 1e-12);                 // on the rod's circle
  EXPECT_NEAR(r[1] / r[0], 0.9 / -1.2, 1e-12);       // the nearest point: along the same ray
  EXPECT_NEAR(r.dot(v), 0.0, 1e-12);                 // no radial velocity left
  // Only the radial part was removed: the tangential one is unchanged.
  const Eigen::Vector2d t(-r[1], r[0]);
  EXPECT_NEAR(v.dot(t), Eigen::Vector2d(1.0, 2.0).dot(t), 1e-12);
}

TEST(Loader, PenetrationMetricNeedsContacts) {
  EXPECT_EQ(error_of(replace(kGood, "metric: max_energy_drift", "metric: max_penetration")),
            "bad.yaml:17:18: metric max_penetration needs contacts");
}

TEST(Loader, ContactErrors) {
  const std::string wall = replace(kGood, "run:\n", "contacts:\n  - {name: w, kind: point_plane, point: P1, "
                                   "plane: {point: [0.0, 0.0, 0.0], normal: [1.0, 0.0, 0.0]}, restitution: 0.1}\nrun:\n");
  EXPECT_EQ(error_of(wall), "bad.yaml:15:41: point P1 starts 1 m inside the plane of contact w");
  EXPECT_EQ(error_of(replace(wall, "restitution: 0.1", "restitution: 1.5")), "bad.yaml:15:116: restitution of w must be in [0, 1], got 1.5");
  EXPECT_EQ(error_of(replace(wall, "normal: [1.0, 0.0, 0.0]", "normal: [2.0, 0.0, 0.0]")),
            "bad.yaml:15:85: plane normal of w must be a unit vector (|n| = 2)");
  EXPECT_EQ(error_of(replace(wall, "point: P1", "point: P2")), "bad.yaml:15:41: contact w names point mass 'P2', which is not defined");
  EXPECT_EQ(error_of(replace(wall, "normal: [1.0, 0.0, 0.0]", "normal: [-1.0, 0.0, 0.0]")), "(accepted)");
}

// cut_joints: a second rod from P1 to ground closes a loop; either rod may be cut, not both (P1
// would float), and only joints, named once.
TEST(Loader, CutJointErrors) {
  const std::string loop = replace(kGood, "run:\n", "  - name: rod2\n    kind: rod\n    a: {ground: [-1.0, 1.0, 0.0]}\n"
                                   "    b: {body: P1}\ncut_joints: [rod2]\nrun:\n");
  const Problem p = load_problem_text(loop, "loop.yaml");
  EXPECT_EQ(p.model.cut_joints, std::vector<int>{1});
  EXPECT_EQ(error_of(replace(loop, "[rod2]", "[rod]")), "(accepted)");
  const std::vector<std::pair<std::string, std::string>> refused = {
      {"[rod, rod2]", "18:14: cut joint rod closes no loop: without the cut joints nothing joins ground to P1 (cutting it would "
                      "split the mechanism)"},
      {"[rod3]", "18:14: cut_joints names 'rod3', which is not an element of the problem (joints: rod, rod2)"},
      {"[rod2, rod2]", "18:20: cut_joints names joint rod2 twice"},
      {"rod2", "18:13: cut_joints must be a list of joint names"},
  };
  for (const auto& [cuts, error] : refused) EXPECT_EQ(error_of(replace(loop, "[rod2]", cuts)), "bad.yaml:" + error);
  const std::string wall = replace(loop, "run:\n", "contacts:\n  - {name: w, kind: point_plane, point: P1, "
                                   "plane: {point: [0.0, 0.0, 0.0], normal: [-1.0, 0.0, 0.0]}, restitution: 0.1}\nrun:\n");
  EXPECT_EQ(error_of(replace(wall, "[rod2]", "[w]")), "bad.yaml:18:14: cut_joints names 'w', a contact: only joints are cut");
}

TEST(Loader, NonPositiveLength) {
  EXPECT_EQ(error_of(replace(kGood, "    b: {body: P1}\n", "    b: {body: P1}\n    length: 0\n")),
            "bad.yaml:14:13: length of rod must be positive, got 0");
}

TEST(Loader, NonUnitPlaneAxis) {
  EXPECT_EQ(error_of(replace(kGood, "space: planar\n", "space: planar\nplane: {e1: [2, 0, 0], e2: [0, 1, 0]}\n")),
            "bad.yaml:3:13: plane.e1 must be a unit vector (|e1| = 2)");
}

TEST(Loader, PointOutsideThePlaneOfMotion) {
  EXPECT_EQ(error_of(replace(kGood, "position: [-1.0, 0.0, 0.0]", "position: [-1.0, 0.0, 0.5]")),
            "bad.yaml:8:15: position of P1 is not in the plane of motion");
}

TEST(Loader, RuleOnAMetricTheProblemDoesNotOutput) {
  EXPECT_EQ(error_of(replace(kGood, "metric: max_energy_drift", "metric: period")),
            "bad.yaml:17:18: score.rule.metric 'period' is not a metric the problem outputs (known: "
            "max_energy_drift, max_position_violation, max_velocity_violation, final_position_error, max_penetration, "
            "max_energy_drift_between_impacts, max_reference_error, final_reference_error, max_energy_rise, "
            "max_angular_momentum_drift)");
}

TEST(Loader, MissingFile) {
  try {
    load_problem("/nonexistent/problem.yaml");
    FAIL() << "accepted a missing file";
  } catch (const ProblemError& e) {
    EXPECT_STREQ(e.what(), "/nonexistent/problem.yaml: cannot open the problem file");
  }
}

// Rigid bodies and spherical joints (pinned_bar's elements).
std::string bar_file() {
  std::ifstream in(MBS_SOURCE_DIR "/problems/pinned_bar.yaml");
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

TEST(Loader, RigidBodyErrors) {
  const std::string bar = bar_file();
  EXPECT_EQ(error_of(bar), "(accepted)");
  EXPECT_EQ(error_of(replace(bar, "density: 1.0  ", "density: 7.8e6")),
            "bad.yaml:29:14: density of bar is 7800000 kg/m^3, denser than any material (osmium: 22.6e3); the unit is kg/m^3");
  EXPECT_EQ(error_of(replace(bar, "density: 1.0  ", "density: 0.0  ")), "bad.yaml:29:14: density of bar must be positive, got 0");
  EXPECT_EQ(error_of(replace(bar, "box: [0.1, 0.1, 1.0]", "box: [1.0e-200, 0.1, 1.0]")),
            "bad.yaml:28:12: box of bar gives mass 1e-201 kg and second moments 0, 8.33e-205, 8.33e-203 kg m^2: not representable");
  EXPECT_EQ(error_of(replace(bar, "box: [0.1, 0.1, 1.0]", "box: [0.1, -0.1, 1.0]")),
            "bad.yaml:28:18: box edges of bar must be positive, got -0.1");
  EXPECT_EQ(error_of(replace(bar, "b: {body: bar, at: [0.0, 0.05, 0.25]}", "b: {body: bar}")),
            "bad.yaml:39:8: missing required key 'at' in end 'b' of joint pin_front (a point on rigid body bar, body frame, m)");
  EXPECT_EQ(error_of(replace(bar, "kind: spherical\n    a: {ground: [0.0, 0.05", "kind: rod\n    a: {ground: [0.0, 0.05")),
            "bad.yaml:66:9: hinged_body_energy needs a spatial model of one rigid body and its spherical joints to the ground");
  // The pin moved 1 mm off the bar's point: the initial state violates the joint, by how much.
  EXPECT_EQ(error_of(replace(bar, "a: {ground: [0.0, 0.05, 0.0]}", "a: {ground: [0.001, 0.05, 0.0]}")),
            "bad.yaml:36:5: initial state violates joint pin_front by 0.001 m (constraint row 0; fix the positions, or run "
            "with --project-initial-state)");
}

TEST(Loader, HingedBodyReferenceChecksItsAxis) {
  const std::string bar = bar_file();
  EXPECT_EQ(error_of(replace(bar, "\n  axis: [0.0, 1.0, 0.0]", "\n  axis: [1.0, 0.0, 0.0]")),
            "bad.yaml:69:9: hinged_body_energy: joint pin_front is not on the axis through reference.pivot");
  // Turning about the hinge at 1 rad/s (consistent with the joints), not released from rest.
  const std::string turning = replace(replace(bar, "angular_velocity: [0.0, 0.0, 0.0]", "angular_velocity: [0.0, 1.0, 0.0]"),
                                      "velocity: [0.0, 0.0, 0.0]", "velocity: [-0.21650635094610965, 0.0, 0.125]");
  EXPECT_EQ(error_of(turning),
            "bad.yaml:66:9: hinged_body_energy needs bar released from rest");
}

TEST(Loader, HingedBodyReleasedAtItsLowestPositionIsRejected) {
  // Hanging straight down (angle 0, centroid below the pin): it would never pass the vertical.
  const std::string down = replace(replace(bar_file(), "angle_deg: 30.0", "angle_deg: 0.0"),
                                   "position: [-0.125, 0.0, -0.21650635094610965]", "position: [0.0, 0.0, -0.25]");
  EXPECT_EQ(error_of(down), "bad.yaml:66:9: hinged_body_energy needs bar released off its lowest and highest positions (it "
                            "would not swing through the vertical)");
}

TEST(Loader, ProjectionPlacesARigidBodyOnItsJoints) {
  LoadOptions o;
  o.project_initial_state = true;
  const Problem p = load_problem_text(replace(bar_file(), "position: [-0.125, 0.0,", "position: [-0.124, 0.0,"), "bar.yaml", o);
  const Model& m = p.model;
  NaturalCoordinates nat(m);
  Eigen::VectorXd phi(m.nc());
  nat.Phi(m.initial_q(), phi);
  EXPECT_LT(phi.cwiseAbs().maxCoeff(), 1e-12);
  EXPECT_LT((m.bodies[0].R0.transpose() * m.bodies[0].R0 - Eigen::Matrix3d::Identity()).norm(), 1e-15);  // re-orthonormalized
  EXPECT_NEAR(m.bodies[0].R0.determinant(), 1.0, 1e-15);
}

}  // namespace
}  // namespace mbs
