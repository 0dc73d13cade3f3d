// A new element kind is one unit for every formulation: formulations read what an element provides
// (core/element.hpp: constraint rows, forces, a tree-joint description, a contact's gap form) and
// declare what they accept by role and tree-joint description (Accepts), never by kind. Checked two
// ways: no formulation source can name a kind (it includes no header of harness/elements/ and
// compares no kind()), and a contact kind written anew gets every formulation's verdict and the
// harness's gap of the kind it imitates.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "core/contact.hpp"
#include "elements/plane_contact.hpp"
#include "support/models.hpp"
#include "support/verdicts.hpp"

namespace mbs {
namespace {

// The lines of a source text by which it names a concrete element kind: an element kind's header
// (harness/elements/, the only place kinds' types are declared) or a comparison of kind().
std::vector<std::string> lines_naming_a_kind(const std::string& text) {
  static const std::regex kComparedKind(R"(kind\(\)\)*\s*==|kind\(\),\s*")");  // e->kind() == ..., strcmp(e->kind(), "..")
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (line.find("#include \"elements/") != std::string::npos || std::regex_search(line, kComparedKind))
      out.push_back(line);
  return out;
}

TEST(ElementKindsSeam, TheScanFindsAKindNamed) {
  EXPECT_EQ(lines_naming_a_kind("#include \"core/model.hpp\"\n#include \"elements/rod.hpp\"\n").size(), 1u);
  EXPECT_EQ(lines_naming_a_kind("if (std::string(e->kind()) == \"rod\") return;").size(), 1u);
  EXPECT_EQ(lines_naming_a_kind("if (std::strcmp(e->kind(), \"rod\") == 0) return;").size(), 1u);
  EXPECT_TRUE(lines_naming_a_kind("const TreeJoint j = e->tree_joint();").empty());
}

TEST(ElementKindsSeam, NoFormulationSourceNamesAnElementKind) {
  const std::filesystem::path root = std::filesystem::path(MBS_SOURCE_DIR) / "formulations";
  ASSERT_TRUE(std::filesystem::is_directory(root));
  int files = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(root)) {
    const std::string ext = entry.path().extension().string();
    if (!entry.is_regular_file() || (ext != ".hpp" && ext != ".cpp")) continue;
    ++files;
    std::ifstream f(entry.path());
    std::stringstream text;
    text << f.rdbuf();
    for (const std::string& line : lines_naming_a_kind(text.str())) ADD_FAILURE() << entry.path().string() << ": " << line;
  }
  EXPECT_GT(files, 20);  // the tree was found
}

// A floor contact written anew: a point mass against a fixed plane, the whole of its unit but its
// YAML reader (it is no registered element kind, so suites over the registry never meet it).
struct Floor final : Element {
  int point = 0;
  Eigen::VectorXd p0, n;
  double e = 0.0;
  const char* kind() const override { return "test_floor"; }
  ElementRole role() const override { return ElementRole::kContact; }
  std::optional<ContactGap> contact_gap(const Model& model) const override {
    return ContactGap{model.dim * point, p0, n, e};
  }
};

// A planar double pendulum of point masses beside a wall (x >= 0) that both points may hit.
Model pendulum_at_a_wall() {
  Model m = testing::chain_model(2, {{1.0, {0.6, -0.8, 0}}, {1.0, {1.2, -1.6, 0}}});
  for (int p = 0; p < 2; ++p)
    m.elements.push_back(std::make_shared<PlaneContact>("wall" + std::to_string(p), p, Eigen::Vector2d::Zero(),
                                                        Eigen::Vector2d(1.0, 0.0), 0.5));
  return m;
}

TEST(ElementKindsSeam, ANewContactKindGetsEveryFormulationsVerdictAndTheHarnessGap) {
  const Model reference = pendulum_at_a_wall();
  Model m = reference;
  for (auto& e : m.elements)
    if (const auto* c = dynamic_cast<const PlaneContact*>(e.get())) {
      auto floor = std::make_shared<Floor>();
      floor->name = c->name;
      floor->point = c->point;
      floor->p0 = c->plane_point;
      floor->n = c->normal;
      floor->e = c->restitution;
      e = floor;
    }
  testing::expect_same_verdicts(reference, m);
  const std::vector<ContactGap> g0 = contact_gaps(reference), g1 = contact_gaps(m);
  ASSERT_EQ(g1.size(), g0.size());
  const Eigen::VectorXd q = reference.initial_q();
  for (size_t j = 0; j < g0.size(); ++j) {
    EXPECT_EQ(g1[j].offset, g0[j].offset);
    EXPECT_EQ(g1[j].restitution, g0[j].restitution);
    EXPECT_EQ(g1[j].gap(q), g0[j].gap(q));
  }
}

}  // namespace
}  // namespace mbs
