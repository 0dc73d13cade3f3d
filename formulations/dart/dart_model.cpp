// The DART adapter: the generic model as one dart::dynamics::Skeleton in a dart::simulation::World,
// and the simulator that steps it with World::step at a fixed step (docs/engines.md). The one file
// that includes DART's headers (they are slow to compile).
//
// Bodies. Every point mass and rigid body is a BodyNode whose frame is its natural coordinates'
// frame (common/engine_model.hpp), so positions, velocities and the principal axes u_k read back
// without a transform. A planar model runs in the plane z = 0 of its local frame; a planar body is a
// lamina. A point mass gets a tiny inertia: a ball joint's spin about a rod would have none.
//
// Joints. A spanning tree of the joint graph (common/joint_graph.hpp) orders the bodies, each with
// its joint to the parent. Every joint's frame has the child's initial orientation and sits at the
// joint's point, so that every joint's position 0 (a ball's or a free joint's identity rotation) is
// the initial configuration. A joint that closes a loop is refused (docs/engines.md says why).
#include <dart/dynamics/BallJoint.hpp>
#include <dart/dynamics/BodyNode.hpp>
#include <dart/dynamics/FreeJoint.hpp>
#include <dart/dynamics/PlanarJoint.hpp>
#include <dart/dynamics/PrismaticJoint.hpp>
#include <dart/dynamics/RevoluteJoint.hpp>
#include <dart/dynamics/Skeleton.hpp>
#include <dart/dynamics/TranslationalJoint.hpp>
#include <dart/dynamics/TranslationalJoint2D.hpp>
#include <dart/dynamics/WeldJoint.hpp>
#include <dart/simulation/World.hpp>
#include <fmt/format.h>

#include <cmath>
#include <memory>
#include <vector>

#include "common/engine_model.hpp"
#include "dart/dart_adapter.hpp"

namespace mbs::dart {

namespace {

namespace dd = ::dart::dynamics;
namespace ds = ::dart::simulation;

// The DART model of one Model: built once (set-up), never changed afterwards but for its time step.
class Engine {
 public:
  explicit Engine(const Model& model);

  const std::string& why() const { return why_; }  // non-empty: the model is unsupported, and why
  ds::World& world() const { return *world_; }
  // t = 0: World::reset (time 0), positions 0 (the initial configuration by construction) and the
  // least-squares initial velocities.
  void reset() {
    world_->reset();
    skeleton_->setPositions(q0_);
    skeleton_->setVelocities(v0_);
  }
  bool finite() const {  // per DOF: getVelocities() returns a new vector
    double sum = 0.0;
    for (std::size_t i = 0, n = skeleton_->getNumDofs(); i < n; ++i) sum += skeleton_->getVelocity(i);
    return std::isfinite(sum);
  }
  // Natural coordinates of the Skeleton's current state (DART updates its frames on demand).
  void natural_state(Eigen::VectorXd& q, Eigen::VectorXd& v) const;
  // Brings the bodies' world frames up to the current positions, as reading the state does.
  void update_frames() const {
    for (const dd::BodyNode* b : body_) b->getWorldTransform();
  }

 private:
  std::string add_body(const SpanningTree& tree, const SpanningTree::Link& link);
  // Adds link.node's BodyNode on a joint of type J whose frame has the child's initial orientation
  // and sits at `at` (t = 0): the child's frame at joint position 0 is its initial frame.
  template <typename J>
  J* attach(const SpanningTree::Link& link, const std::string& name, const Eigen::Vector3d& at);
  // A node's world pose and velocity (common/engine_model.hpp's NodeState).
  void node_state(int node, Eigen::Vector3d& r, Eigen::Matrix3d& R, Eigen::Vector3d& w, Eigen::Vector3d& v) const;

  const Model& model_;
  const EngineNodes nodes_;
  std::shared_ptr<ds::World> world_;
  dd::SkeletonPtr skeleton_;
  std::vector<dd::BodyNode*> body_;  // per node: point masses, then rigid bodies
  Eigen::VectorXd q0_, v0_;
  std::string why_;
};

Engine::Engine(const Model& model) : model_(model), nodes_(model), body_(nodes_.count(), nullptr) {
  SpanningTree tree;
  why_ = spanning_tree(model, tree);
  if (!why_.empty()) return;
  why_ = loop_refusal(tree,
                      "DART 6.12 closes loops only with BallJointConstraint and WeldJointConstraint (impulses at the "
                      "velocity level with error reduction, in World::step), which the adapter does not map; it has "
                      "no revolute, prismatic or distance joint constraint");
  if (!why_.empty()) return;
  skeleton_ = dd::Skeleton::create("mbsbench");
  for (const SpanningTree::Link& link : tree.links) {  // parents before children
    why_ = add_body(tree, link);
    if (!why_.empty()) return;
  }
  const int n = static_cast<int>(skeleton_->getNumDofs());
  if (n == 0) {
    why_ = "no degree of freedom";
    return;
  }
  // Options that differ from DART's defaults (docs/engines.md): the model's gravity. The bodies
  // carry no collision shape, so the constraint solver's collision detection finds nothing.
  world_ = ds::World::create("mbsbench");
  world_->addSkeleton(skeleton_);
  world_->setGravity(in_3d(model.gravity));
  q0_.setZero(n);
  v0_.setZero(n);
  reset();
  Eigen::VectorXd unit(n);
  auto set_unit = [&](int k) {
    unit.setZero();
    unit[k] = 1.0;
    skeleton_->setVelocities(unit);
  };
  v0_ = fit_initial_velocities(model_, n, set_unit, [this](int i, auto& r, auto& R, auto& w, auto& v) {
    node_state(i, r, R, w, v);
  });
  reset();
}

template <typename J>
J* Engine::attach(const SpanningTree::Link& link, const std::string& name, const Eigen::Vector3d& at) {
  const Eigen::Matrix3d R_GP = nodes_.rotation0(link.parent), R_GB = nodes_.rotation0(link.node);
  typename J::Properties joint;
  joint.mName = name;
  joint.mT_ParentBodyToJoint.linear() = R_GP.transpose() * R_GB;
  joint.mT_ParentBodyToJoint.translation() = R_GP.transpose() * (at - nodes_.position0(link.parent));
  joint.mT_ChildBodyToJoint.translation() = R_GB.transpose() * (at - nodes_.position0(link.node));
  dd::BodyNode* parent = link.parent == kGround ? nullptr : body_[link.parent];
  auto [j, body] = skeleton_->createJointAndBodyNodePair<J>(parent, joint);
  body->setName(nodes_.name(link.node));
  body_[link.node] = body;
  return j;
}

// Adds the body of link.node with its joint to the parent (which is already in the Skeleton).
std::string Engine::add_body(const SpanningTree& tree, const SpanningTree::Link& link) {
  const int c = link.node;
  const bool planar = model_.dim == 2, point_child = c < nodes_.points();
  double point_length = 1.0;
  if (link.edge < 0) {  // a free root: a point translates; a rigid body moves freely (planar: in its plane)
    const std::string name = "free " + nodes_.name(c);
    const Eigen::Vector3d o = nodes_.position0(c);
    if (point_child && planar)
      attach<dd::TranslationalJoint2D>(link, name, o)->setXYPlane();
    else if (point_child)
      attach<dd::TranslationalJoint>(link, name, o);
    else if (planar)
      attach<dd::PlanarJoint>(link, name, o)->setXYPlane();
    else
      attach<dd::FreeJoint>(link, name, o);
  } else {
    EngineJoint joint;
    if (std::string why = engine_joint(model_, tree, link, "DART", joint); !why.empty()) return why;
    point_length = joint.point_length;
    // Axes in the joint frame, whose orientation is the child's initial one.
    const Eigen::Vector3d axis = nodes_.rotation0(c).transpose() * joint.axis;
    // A rod: planar, a pin at the parent's end (the axis: the normal); spatial, a ball there (the spin
    // about the rod has only the point's tiny inertia, and nothing drives it).
    const bool pin = joint.type == TreeJointType::kRevolute || (joint.type == TreeJointType::kRod && planar);
    if (pin)
      attach<dd::RevoluteJoint>(link, joint.name, joint.pivot)->setAxis(axis);
    else if (joint.type == TreeJointType::kRod || joint.type == TreeJointType::kSpherical)
      attach<dd::BallJoint>(link, joint.name, joint.pivot);
    else if (joint.type == TreeJointType::kPrismatic)
      attach<dd::PrismaticJoint>(link, joint.name, joint.pivot)->setAxis(axis);
    else  // kFixed (engine_joint refuses every other kind)
      attach<dd::WeldJoint>(link, joint.name, joint.pivot);
  }
  const Eigen::Vector3d I = nodes_.inertia(c, point_length);
  body_[c]->setMass(nodes_.mass(c));
  body_[c]->setMomentOfInertia(I[0], I[1], I[2]);
  return "";
}

void Engine::node_state(int node, Eigen::Vector3d& r, Eigen::Matrix3d& R, Eigen::Vector3d& w,
                        Eigen::Vector3d& v) const {
  const dd::BodyNode& b = *body_[node];
  const Eigen::Isometry3d& T = b.getWorldTransform();
  r = T.translation();
  R = T.linear();
  w = b.getAngularVelocity();
  v = b.getLinearVelocity();
}

void Engine::natural_state(Eigen::VectorXd& q, Eigen::VectorXd& v) const {
  write_natural_state(model_, [this](int n, auto& r, auto& R, auto& w, auto& vel) { node_state(n, r, R, w, vel); }, q,
                      v);
}

// The timed region is what a DART user calls to run a simulation: World::reset (time 0), the
// Skeleton's initial positions and velocities, then World::step to the end time.
class DartSimulator final : public FixedStepSimulator {
 public:
  DartSimulator(const Model& model, double h) : FixedStepSimulator(model, h), engine_(std::make_unique<Engine>(model)) {
    if (!engine_->why().empty()) throw SolverError(engine_->why());
  }

 protected:
  void do_step_size_chosen(double h) override { engine_->world().setTimeStep(h); }
  void do_initialize_state() override { engine_->reset(); }
  void do_fixed_step(double /*h*/) override {
    engine_->world().step();
    // DART steps on through a non-finite state without a word: stop the run instead.
    if (!engine_->finite())
      throw SolverError(fmt::format("dart: the state became non-finite at t = {:.9g} s", time()));
  }
  void do_model_state() override { engine_->natural_state(q_model_, v_model_); }
  // DART updates a body's frame when it is read, and the update allocates (math::verifyTransform,
  // an assertion's check, live in Debian's build): the final state's frames are brought up to date
  // here, once a run, so that a run that reports its states allocates as often as one that does not.
  void do_finish_run() override {
    engine_->update_frames();
    stats_.rhs_evals = stats_.steps;
  }

 private:
  std::unique_ptr<Engine> engine_;
};

}  // namespace

std::string unsupported_reason(const Model& model) {
  try {
    return Engine(model).why();
  } catch (const std::exception& e) {
    return fmt::format("DART rejected the model: {}", e.what());
  }
}

std::unique_ptr<Simulator> create_simulator(const Model& model, Integrator /*integrator*/, double h) {
  return std::make_unique<DartSimulator>(model, h);
}

}  // namespace mbs::dart
