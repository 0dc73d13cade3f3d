// The Bullet adapter: the generic model as btMultiBody objects (Featherstone's articulated-body
// algorithm), in a btMultiBodyDynamicsWorld, and the simulator that steps them at a fixed step
// (docs/engines.md).
//
// Bodies. Every point mass and rigid body is a link (or a floating base) whose frame is its natural
// coordinates' frame (common/engine_model.hpp), as Bullet wants a link's frame: at its centre of
// mass. A planar model runs in the plane z = 0 of its local frame; a planar body is a lamina. A point
// mass gets a tiny inertia: its rod's joint turns it.
//
// Joints. A spanning tree of the joint graph (common/joint_graph.hpp): the part that reaches the
// ground is one btMultiBody with a fixed base (the ground frame), each part hanging from a free root
// one with that body as its floating base; links are set up parents first, each joint placed so that
// every joint position 0 (a spherical joint's identity quaternion) is the initial configuration. A
// joint that closes a loop would be a sequential-impulse constraint in Bullet: refused
// (docs/engines.md).
#include <BulletDynamics/Featherstone/btMultiBody.h>
#include <BulletDynamics/Featherstone/btMultiBodyConstraintSolver.h>
#include <BulletDynamics/Featherstone/btMultiBodyDynamicsWorld.h>
#include <btBulletCollisionCommon.h>
#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <memory>
#include <vector>

#include "bullet/bullet_adapter.hpp"
#include "common/engine_model.hpp"

namespace mbs::bullet {

// The harness computes in double; Debian's bullet-float64 library is built with this define, which
// its headers need too (CMakeLists.txt passes it to this file only).
static_assert(sizeof(btScalar) == sizeof(double), "the Bullet adapter needs BT_USE_DOUBLE_PRECISION");

namespace {

// Bullet clamps every joint velocity to 100 (rad/s or m/s) and every constraint impulse to 1000 by
// default: off.
constexpr double kNoClamp = std::numeric_limits<double>::infinity();

btVector3 bt(const Eigen::Vector3d& x) { return btVector3(x[0], x[1], x[2]); }
Eigen::Vector3d eig(const btVector3& x) { return Eigen::Vector3d(x.x(), x.y(), x.z()); }
// The quaternion of a rotation matrix (Bullet's and Eigen's quaternions follow the same convention).
btQuaternion bt_quat(const Eigen::Matrix3d& R) {
  const Eigen::Quaterniond q(R);
  return btQuaternion(q.x(), q.y(), q.z(), q.w());
}

// One btMultiBody: the ground's part (fixed base: the ground frame) or a free root's (floating base:
// that body), with the scratch its state read-back needs, sized at set-up.
struct Part {
  std::unique_ptr<btMultiBody> mb;
  int base_node = kGround;
  std::vector<int> links;  // indices into the spanning tree's links, in Bullet's link order
  int first_u = 0, nu = 0;  // its velocities in the adapter's vector u: 6 (floating base) + joint speeds
  btVector3 base_pos0{0, 0, 0};
  btQuaternion base_rot0{0, 0, 0, 1};  // world to base
  btAlignedObjectArray<btQuaternion> world_to_local;
  btAlignedObjectArray<btVector3> origin;
  std::vector<btVector3> omega, vel;  // base, then links: angular and centre-of-mass velocity, own frame
  bool floating() const { return base_node != kGround; }
};

// The Bullet model of one Model: built once (set-up); the simulator resets and steps it.
class Engine {
 public:
  explicit Engine(const Model& model);

  const std::string& why() const { return why_; }  // non-empty: the model is unsupported, and why
  void use_rk4(bool on) {
    for (auto& p : parts_) p->mb->useRK4Integration(on);
  }
  // t = 0: the initial configuration and the least-squares initial velocities.
  void reset();
  // One step of the world (stepSimulation with a fixed step: one internal step of h); the number of
  // internal steps it took.
  int step_world(double h) { return world_->stepSimulation(h, 0, h); }
  // One step of each btMultiBody without the world: gravity, the articulated-body algorithm with the
  // velocity update v += h a, then the positions with the new v (what the world does for a tree).
  void step_direct(double h);
  bool finite() const;
  // Natural coordinates of the current state.
  void natural_state(Eigen::VectorXd& q, Eigen::VectorXd& v);

 private:
  std::string build(const SpanningTree& tree);
  std::string setup_link(const SpanningTree& tree, Part& part, int i);
  void set_u(const Eigen::VectorXd& u);
  void kinematics();
  // A node's world pose and velocity (common/engine_model.hpp's NodeState), after kinematics().
  void node_state(int node, Eigen::Vector3d& r, Eigen::Matrix3d& R, Eigen::Vector3d& w, Eigen::Vector3d& v) const;

  const Model& model_;
  const EngineNodes nodes_;
  std::vector<std::unique_ptr<Part>> parts_;
  std::vector<int> node_part_, node_link_;  // per node: its part, its link there (-1: the base)
  Eigen::VectorXd u0_, u_scratch_;
  btVector3 gravity_{0, 0, 0};
  btAlignedObjectArray<btScalar> scratch_r_;
  btAlignedObjectArray<btVector3> scratch_v_;
  btAlignedObjectArray<btMatrix3x3> scratch_m_;
  // The world (declared last: destroyed before the multibodies it steps).
  std::unique_ptr<btDefaultCollisionConfiguration> config_;
  std::unique_ptr<btCollisionDispatcher> dispatcher_;
  std::unique_ptr<btDbvtBroadphase> broadphase_;
  std::unique_ptr<btMultiBodyConstraintSolver> solver_;
  std::unique_ptr<btMultiBodyDynamicsWorld> world_;
  std::string why_;
};

Engine::Engine(const Model& model) : model_(model), nodes_(model) {
  SpanningTree tree;
  why_ = spanning_tree(model, tree);
  if (!why_.empty()) return;
  why_ = loop_refusal(tree,
                      "Bullet closes a btMultiBody's loops only with constraints (btMultiBodyPoint2Point, "
                      "btMultiBodyFixedConstraint) that its sequential-impulse solver meets at the velocity level, "
                      "iteratively, with error reduction (ERP), which the adapter does not map");
  if (!why_.empty()) return;
  why_ = build(tree);
  if (!why_.empty()) return;
  int nu = 0;
  for (auto& p : parts_) {
    p->first_u = nu;
    p->nu = (p->floating() ? 6 : 0) + p->mb->getNumDofs();
    nu += p->nu;
  }
  if (nu == 0) {
    why_ = "no degree of freedom";
    return;
  }
  u0_.setZero(nu);
  u_scratch_.setZero(nu);
  gravity_ = bt(in_3d(model.gravity));
  // The world, as a Bullet user builds one; no collision object is added (the models here have no
  // geometry), so the broadphase and the contact solver have nothing to do.
  config_ = std::make_unique<btDefaultCollisionConfiguration>();
  dispatcher_ = std::make_unique<btCollisionDispatcher>(config_.get());
  broadphase_ = std::make_unique<btDbvtBroadphase>();
  solver_ = std::make_unique<btMultiBodyConstraintSolver>();
  world_ = std::make_unique<btMultiBodyDynamicsWorld>(dispatcher_.get(), broadphase_.get(), solver_.get(), config_.get());
  world_->setGravity(gravity_);
  for (auto& p : parts_) world_->addMultiBody(p->mb.get());
  // t = 0: joint positions 0 are the model's initial configuration by construction; u is the
  // least-squares fit of the bodies' initial velocities through the map u -> those velocities.
  reset();
  auto set_unit = [this](int k) {
    u_scratch_.setZero();
    u_scratch_[k] = 1.0;
    set_u(u_scratch_);
    kinematics();
  };
  u0_ = fit_initial_velocities(model_, nu, set_unit, [this](int n, auto& r, auto& R, auto& w, auto& v) {
    node_state(n, r, R, w, v);
  });
  // Size the direct step's scratch (the articulated-body algorithm resizes it on its first call).
  for (auto& p : parts_)
    p->mb->computeAccelerationsArticulatedBodyAlgorithmMultiDof(0.0, scratch_r_, scratch_v_, scratch_m_, false, false,
                                                                false);
  reset();
}

// The parts and their links, parents first (the tree's order).
std::string Engine::build(const SpanningTree& tree) {
  node_part_.assign(nodes_.count(), -1);
  node_link_.assign(nodes_.count(), -1);
  int ground_part = -1;
  for (size_t i = 0; i < tree.links.size(); ++i) {
    const SpanningTree::Link& link = tree.links[i];
    int p;
    if (link.edge < 0) {
      p = static_cast<int>(parts_.size());
      parts_.push_back(std::make_unique<Part>());
      parts_.back()->base_node = link.node;
    } else if (link.parent == kGround) {
      if (ground_part < 0) {
        ground_part = static_cast<int>(parts_.size());
        parts_.push_back(std::make_unique<Part>());
      }
      p = ground_part;
    } else {
      p = node_part_[link.parent];
    }
    node_part_[link.node] = p;
    if (link.edge >= 0) {
      node_link_[link.node] = static_cast<int>(parts_[p]->links.size());
      parts_[p]->links.push_back(static_cast<int>(i));
    }
  }
  for (auto& part : parts_) {
    Part& p = *part;
    double base_mass = 0.0;  // a fixed base's mass and inertia take no part in the dynamics
    Eigen::Vector3d base_inertia = Eigen::Vector3d::Zero();
    if (p.floating()) {
      base_mass = nodes_.mass(p.base_node);
      base_inertia = nodes_.inertia(p.base_node, 1.0);
      p.base_pos0 = bt(nodes_.position0(p.base_node));
      p.base_rot0 = bt_quat(nodes_.rotation0(p.base_node).transpose());
    }
    p.mb = std::make_unique<btMultiBody>(static_cast<int>(p.links.size()), base_mass, bt(base_inertia), !p.floating(),
                                         false);
    for (int i = 0; i < static_cast<int>(p.links.size()); ++i)
      if (std::string why = setup_link(tree, p, i); !why.empty()) return why;
    btMultiBody& mb = *p.mb;
    mb.finalizeMultiDof();
    // Options that differ from Bullet's defaults (docs/engines.md): no damping (Bullet's default
    // 0.04, linear and quadratic in each link's speed), no velocity or impulse clamp, no sleeping.
    mb.setLinearDamping(0.0);
    mb.setAngularDamping(0.0);
    mb.setMaxCoordinateVelocity(kNoClamp);
    mb.setMaxAppliedImpulse(kNoClamp);
    mb.setCanSleep(false);
    mb.setHasSelfCollision(false);
    const int n = mb.getNumLinks();
    p.world_to_local.resize(n + 1);
    p.origin.resize(n + 1);
    p.omega.assign(n + 1, btVector3(0, 0, 0));
    p.vel.assign(n + 1, btVector3(0, 0, 0));
  }
  return "";
}

// Link i of a part: its body's mass and inertia, its joint to its parent placed at the initial
// configuration (Bullet's offsets: parent centre to pivot in the parent's frame, pivot to this
// centre in this frame).
std::string Engine::setup_link(const SpanningTree& tree, Part& part, int i) {
  const SpanningTree::Link& link = tree.links[part.links[i]];
  const int c = link.node;
  const int parent = link.parent == part.base_node ? -1 : node_link_[link.parent];
  EngineJoint joint;
  if (std::string why = engine_joint(model_, tree, link, "Bullet", joint); !why.empty()) return why;
  const Eigen::Matrix3d R_GP = nodes_.rotation0(link.parent), R_GB = nodes_.rotation0(c);
  const Eigen::Vector3d r_P = nodes_.position0(link.parent), r_B = nodes_.position0(c);
  const btQuaternion parent_to_this = bt_quat(R_GB.transpose() * R_GP);
  const double mass = nodes_.mass(c);
  const btVector3 I = bt(nodes_.inertia(c, joint.point_length));
  const Eigen::Vector3d& o = joint.pivot;
  const btVector3 e = bt(R_GP.transpose() * (o - r_P)), d = bt(R_GB.transpose() * (r_B - o));
  const btVector3 axis = bt(R_GB.transpose() * joint.axis);  // in the link's frame
  // A rod: planar, a pin at the parent's end (the axis: the normal); spatial, a ball there (the spin
  // about the rod has only the point's tiny inertia).
  btMultiBody& mb = *part.mb;
  const bool pin = joint.type == TreeJointType::kRevolute || (joint.type == TreeJointType::kRod && model_.dim == 2);
  if (pin)
    mb.setupRevolute(i, mass, I, parent, parent_to_this, axis, e, d, true);
  else if (joint.type == TreeJointType::kRod || joint.type == TreeJointType::kSpherical)
    mb.setupSpherical(i, mass, I, parent, parent_to_this, e, d, true);
  else if (joint.type == TreeJointType::kPrismatic)
    mb.setupPrismatic(i, mass, I, parent, parent_to_this, axis, e, d, true);
  else  // kFixed (engine_joint refuses every other kind)
    mb.setupFixed(i, mass, I, parent, parent_to_this, e, d);
  return "";
}

// u: each part's velocity vector (a floating base's angular then linear velocity, world frame;
// then the joint speeds, a spherical joint's three its angular velocity in its own frame).
void Engine::set_u(const Eigen::VectorXd& u) {
  for (auto& part : parts_) {
    btMultiBody& mb = *part->mb;
    const double* x = u.data() + part->first_u;
    if (part->floating()) {
      mb.setBaseOmega(btVector3(x[0], x[1], x[2]));
      mb.setBaseVel(btVector3(x[3], x[4], x[5]));
      x += 6;
    }
    for (int j = 0; j < mb.getNumLinks(); ++j)
      if (mb.getLink(j).m_dofCount > 0) mb.setJointVelMultiDof(j, x + mb.getLink(j).m_dofOffset);
  }
}

void Engine::reset() {
  static const double kIdentity[4] = {0.0, 0.0, 0.0, 1.0};  // a spherical joint's quaternion (x, y, z, w)
  static const double kZero[1] = {0.0};
  for (auto& part : parts_) {
    btMultiBody& mb = *part->mb;
    mb.setBasePos(part->base_pos0);
    mb.setWorldToBaseRot(part->base_rot0);
    mb.setBaseOmega(btVector3(0, 0, 0));
    mb.setBaseVel(btVector3(0, 0, 0));
    for (int j = 0; j < mb.getNumLinks(); ++j)
      if (mb.getLink(j).m_posVarCount > 0) mb.setJointPosMultiDof(j, mb.getLink(j).m_posVarCount == 4 ? kIdentity : kZero);
    mb.clearForcesAndTorques();
    mb.clearConstraintForces();
    mb.setPosUpdated(false);
  }
  set_u(u0_);
}

void Engine::step_direct(double h) {
  for (auto& part : parts_) {
    btMultiBody& mb = *part->mb;
    if (part->floating()) mb.addBaseForce(gravity_ * mb.getBaseMass());
    for (int j = 0; j < mb.getNumLinks(); ++j) mb.addLinkForce(j, gravity_ * mb.getLinkMass(j));
    mb.computeAccelerationsArticulatedBodyAlgorithmMultiDof(h, scratch_r_, scratch_v_, scratch_m_, false, false, false);
    mb.clearForcesAndTorques();
    mb.stepPositionsMultiDof(h);
  }
}

bool Engine::finite() const {
  double sum = 0.0;
  for (const auto& part : parts_) {
    const btScalar* u = part->mb->getVelocityVector();
    for (int k = 0; k < 6 + part->mb->getNumDofs(); ++k) sum += u[k];
  }
  return std::isfinite(sum);
}

void Engine::kinematics() {
  for (auto& part : parts_) {
    part->mb->forwardKinematics(part->world_to_local, part->origin);
    part->mb->compTreeLinkVelocities(part->omega.data(), part->vel.data());
  }
}

void Engine::node_state(int node, Eigen::Vector3d& r, Eigen::Matrix3d& R, Eigen::Vector3d& w,
                        Eigen::Vector3d& v) const {
  const Part& part = *parts_[node_part_[node]];
  const int k = node_link_[node] + 1;  // 0: the base
  const btMatrix3x3 B(part.world_to_local[k].inverse());  // the link's frame to the world
  for (int row = 0; row < 3; ++row)
    for (int col = 0; col < 3; ++col) R(row, col) = B[row][col];
  r = eig(part.origin[k]);
  w = eig(B * part.omega[k]);
  v = eig(B * part.vel[k]);
}

void Engine::natural_state(Eigen::VectorXd& q, Eigen::VectorXd& v) {
  kinematics();
  write_natural_state(model_, [this](int n, auto& r, auto& R, auto& w, auto& vel) { node_state(n, r, R, w, vel); }, q,
                      v);
}

// The timed region is what a Bullet user calls to run a simulation: the multibodies' state reset
// (joint positions, base pose, velocities), then a fixed step to t_end, one a do_step.
class BulletSimulator final : public FixedStepSimulator {
 public:
  BulletSimulator(const Model& model, Integrator kind, double h)
      : FixedStepSimulator(model, h), engine_(std::make_unique<Engine>(model)), kind_(kind) {
    if (!engine_->why().empty()) throw SolverError(engine_->why());
    engine_->use_rk4(kind == Integrator::kWorldRk4);
  }

 protected:
  void do_initialize_state() override { engine_->reset(); }
  void do_fixed_step(double h) override {
    if (kind_ == Integrator::kDirectEuler)
      engine_->step_direct(h);
    else if (const int taken = engine_->step_world(h); taken != 1)
      throw SolverError(fmt::format("bullet: stepSimulation took {} internal steps of h = {:.9g} s at t = {:.9g} s, "
                                    "not 1",
                                    taken, h, time()));
    // Bullet has no failure report: a blow-up shows as non-finite velocities.
    if (!engine_->finite())
      throw SolverError(fmt::format("bullet: the state became non-finite at t = {:.9g} s", time()));
  }
  void do_model_state() override { engine_->natural_state(q_model_, v_model_); }
  // Bullet's RK4 evaluates the articulated-body algorithm five times a step: the four stages and
  // once more at the start state (btMultiBodyDynamicsWorld::solveExternalForces resets its caches).
  void do_finish_run() override { stats_.rhs_evals = stats_.steps * (kind_ == Integrator::kWorldRk4 ? 5 : 1); }

 private:
  std::unique_ptr<Engine> engine_;
  Integrator kind_;
};

}  // namespace

std::string unsupported_reason(const Model& model) { return Engine(model).why(); }

std::unique_ptr<Simulator> create_simulator(const Model& model, Integrator integrator, double h) {
  return std::make_unique<BulletSimulator>(model, integrator, h);
}

}  // namespace mbs::bullet
