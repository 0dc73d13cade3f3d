// A joint kind new to the joint-coordinate formulations is one unit: its rows in natural coordinates
// and its tree-joint description (the Element::tree_joint override), read by every tree builder
// (recursive's build_spatial_tree, minimal's rod tree) and every formulation's accepts() with no
// edit there. The kinds below are the whole of such a unit but its YAML reader; they are no element
// kinds (MBS_REGISTER_ELEMENT_KIND), so suites that iterate the element-kind registry never meet
// them: the models are built in code.
#include <gtest/gtest.h>

#include <memory>

#include "core/formulation.hpp"
#include "elements/joint_rows.hpp"
#include "minimal/joint_tree.hpp"
#include "recursive/spatial_tree.hpp"
#include "support/models.hpp"
#include "support/verdicts.hpp"
#include "support/tree_models.hpp"

namespace mbs {
namespace {

// A ball-and-socket joint written anew.
struct Ball final : Element {
  Anchor a, b;
  const char* kind() const override { return "test_ball"; }
  ElementRole role() const override { return ElementRole::kJoint; }
  int row_count(int dim) const override { return dim; }
  void add_rows(const Model& model, std::vector<ConstraintRow>& rows) const override {
    elements::add_coincidence_rows(model, a, b, elements::joint_scale(model, a, b), rows);
  }
  TreeJoint tree_joint() const override { return {TreeJointType::kSpherical, &a, &b, {}, 0.0}; }
};

// A rod kind of its own: a rod's row (elements/rod.cpp) and a rod's description.
struct Cable final : Element {
  Anchor a, b;
  double length = 0.0;
  const char* kind() const override { return "test_cable"; }
  ElementRole role() const override { return ElementRole::kJoint; }
  int row_count(int /*dim*/) const override { return 1; }
  void add_rows(const Model& model, std::vector<ConstraintRow>& rows) const override {
    Rod rod;
    rod.a = a;
    rod.b = b;
    rod.length = length;
    rod.add_rows(model, rows);
  }
  TreeJoint tree_joint() const override { return {TreeJointType::kRod, &a, &b, {}, length}; }
};

// A joint kind that registered no tree-joint description.
struct Glue final : Element {
  Anchor a, b;
  const char* kind() const override { return "test_glue"; }
  ElementRole role() const override { return ElementRole::kJoint; }
};

// A joint of kind K with the name and the ends of `joint`.
template <class K, class J>
std::shared_ptr<K> joined_like(const J& joint) {
  auto k = std::make_shared<K>();
  k->name = joint.name;
  k->a = joint.a;
  k->b = joint.b;
  return k;
}

// Forward dynamics of both models at their initial states: the same tree, the same accelerations.
void expect_same_dynamics(const Model& reference, const Model& model) {
  recursive::SpatialTree t0, t1;
  ASSERT_EQ(recursive::build_spatial_tree(reference, t0), "");
  ASSERT_EQ(recursive::build_spatial_tree(model, t1), "");
  ASSERT_EQ(t1.bodies.size(), t0.bodies.size());
  ASSERT_EQ(t1.nv, t0.nv);
  EXPECT_EQ(t1.planar, t0.planar);
  EXPECT_EQ(t1.pins, t0.pins);
  for (size_t i = 0; i < t0.bodies.size(); ++i) {
    EXPECT_EQ(t1.bodies[i].type, t0.bodies[i].type) << i;
    EXPECT_EQ(t1.bodies[i].parent, t0.bodies[i].parent) << i;
  }
  recursive::TreeWorkspace w0(t0, true), w1(t1, true);
  Eigen::VectorXd a0(t0.nv), a1(t1.nv);
  recursive::aba(t0, t0.q0, t0.v0, w0, a0);
  recursive::aba(t1, t1.q0, t1.v0, w1, a1);
  EXPECT_EQ(a1, a0);
  recursive::crba(t1, t1.q0, t1.v0, w1, a1);
  EXPECT_LE((a1 - a0).norm(), 1e-10 * (1.0 + a0.norm()));
}

// The model with its spherical joints as Balls, or its rods as Cables.
Model with_balls(const Model& reference) {
  Model m = reference;
  for (auto& e : m.elements)
    if (const auto* s = dynamic_cast<const SphericalJoint*>(e.get())) e = joined_like<Ball>(*s);
  return m;
}
Model with_cables(const Model& reference) {
  Model m = reference;
  for (auto& e : m.elements)
    if (const auto* rod = dynamic_cast<const Rod*>(e.get())) {
      auto cable = joined_like<Cable>(*rod);
      cable->length = rod->length;
      e = cable;
    }
  return m;
}

TEST(RecursiveJointKinds, ANewSphericalKindIsATreeJointWithNoEditInTheBuilder) {
  const Model reference = testing::mixed_tree();
  const Model m = with_balls(reference);
  ASSERT_TRUE(m.elements_of<SphericalJoint>().empty());
  ASSERT_FALSE(reference.elements_of<SphericalJoint>().empty());
  expect_same_dynamics(reference, m);
}

TEST(RecursiveJointKinds, ANewRodKindJoinsEveryJointCoordinateTree) {
  const Model reference = testing::chain_model(2, {{1.0, {0.6, -0.8, 0}}, {0.5, {1.2, -1.6, 0}}, {0.8, {1.0, -2.5, 0}}});
  const Model m = with_cables(reference);
  ASSERT_EQ(m.elements_of<Cable>().size(), reference.elements.size());
  expect_same_dynamics(reference, m);
  minimal::JointTree j0, j1;
  ASSERT_EQ(minimal::build_joint_tree(reference, j0), "");
  ASSERT_EQ(minimal::build_joint_tree(m, j1), "");
  ASSERT_EQ(j1.links.size(), j0.links.size());
  EXPECT_EQ(j1.ndof, j0.ndof);
  for (size_t i = 0; i < j0.links.size(); ++i) {
    EXPECT_EQ(j1.links[i].point, j0.links[i].point);
    EXPECT_EQ(j1.links[i].parent, j0.links[i].parent);
    EXPECT_EQ(j1.links[i].length, j0.links[i].length);
  }
}

// Every formulation (natural coordinates by rows, joint coordinates by description) gives a joint
// kind written anew the verdict of the kind it describes itself as, with no edit in any of them.
TEST(RecursiveJointKinds, EveryFormulationTakesANewKindAsTheKindItDescribesItselfAs) {
  const Model tree = testing::mixed_tree();
  testing::expect_same_verdicts(tree, with_balls(tree));
  EXPECT_EQ(Registry::instance().find("recursive")->unsupported_reason(with_balls(tree)), "");
  const Model chain = testing::chain_model(2, {{1.0, {0.6, -0.8, 0}}, {0.5, {1.2, -1.6, 0}}});
  testing::expect_same_verdicts(chain, with_cables(chain));
  EXPECT_EQ(Registry::instance().find("minimal")->unsupported_reason(with_cables(chain)), "");
}

TEST(RecursiveJointKinds, AJointWithoutADescriptionIsNamedInTheReason) {
  Model m = testing::chain_model(2, {{1.0, {0.6, -0.8, 0}}});
  auto glue = std::make_shared<Glue>();
  glue->name = "g";
  glue->a = testing::point(0);
  m.elements.push_back(glue);
  recursive::SpatialTree tree;
  EXPECT_EQ(recursive::build_spatial_tree(m, tree), "joint g (test_glue) has no tree-joint description");
}

}  // namespace
}  // namespace mbs
