// A joint kind new to the joint-coordinate formulations is one unit: its rows in natural coordinates
// and its tree-joint description (MBS_REGISTER_TREE_JOINT), read by every tree builder (recursive's
// build_spatial_tree, minimal's rod tree) with no edit there. The kinds below are the whole of such a
// unit but its YAML reader; they are no element kinds (MBS_REGISTER_ELEMENT_KIND), so suites that
// iterate the element-kind registry never meet them: the models are built in code.
#include <gtest/gtest.h>

#include <memory>

#include "elements/joint_rows.hpp"
#include "elements/tree_joint.hpp"
#include "minimal/joint_tree.hpp"
#include "recursive/spatial_tree.hpp"
#include "support/models.hpp"
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
};
MBS_REGISTER_TREE_JOINT(test_ball, Ball) { return {TreeJointType::kSpherical, &j.a, &j.b, {}, 0.0}; }

// A rod kind of its own: its rows would be a rod's (elements/rod.cpp); the tree builders read only
// its description.
struct Cable final : Element {
  Anchor a, b;
  double length = 0.0;
  const char* kind() const override { return "test_cable"; }
  ElementRole role() const override { return ElementRole::kJoint; }
  int row_count(int /*dim*/) const override { return 1; }
};
MBS_REGISTER_TREE_JOINT(test_cable, Cable) { return {TreeJointType::kRod, &j.a, &j.b, {}, j.length}; }

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

TEST(RecursiveJointKinds, ANewSphericalKindIsATreeJointWithNoEditInTheBuilder) {
  const Model reference = testing::mixed_tree();
  Model m = reference;
  for (auto& e : m.elements)
    if (e->name == "ball") {
      const auto* s = dynamic_cast<const SphericalJoint*>(e.get());
      ASSERT_NE(s, nullptr);
      e = joined_like<Ball>(*s);
    }
  expect_same_dynamics(reference, m);
}

TEST(RecursiveJointKinds, ANewRodKindJoinsEveryJointCoordinateTree) {
  const Model reference = testing::chain_model(2, {{1.0, {0.6, -0.8, 0}}, {0.5, {1.2, -1.6, 0}}, {0.8, {1.0, -2.5, 0}}});
  Model m = reference;
  for (auto& e : m.elements) {
    const auto* rod = dynamic_cast<const Rod*>(e.get());
    ASSERT_NE(rod, nullptr);
    auto cable = joined_like<Cable>(*rod);
    cable->length = rod->length;
    e = cable;
  }
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
