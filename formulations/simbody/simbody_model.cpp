// The Simbody adapter: the generic model as a Simbody MultibodySystem, and the simulator that steps
// it with Simbody's own integrators (docs/engines.md).
//
// Bodies. Every point mass and rigid body is a Simbody body whose frame is its natural coordinates'
// frame: a point mass's at the point (no inertia), a rigid body's at its centroid along its principal
// axes, so positions, velocities and the principal axes u_k read back without a transform. A planar
// model runs in the plane z = 0 of its local frame; a planar body is a lamina (I_x = J_2, I_y = J_1,
// I_z = J_1 + J_2), whose in-plane motion only I_z drives.
//
// Joints. A spanning tree of the joint graph (common/joint_graph.hpp) gives each body one mobilizer,
// its F and M frames coincident in the initial configuration (every q zero, quaternions identity);
// the joints it leaves close loops as Simbody constraints. Forces: one Force::Custom that evaluates
// the model's force elements' own Q(q, v) in natural coordinates and applies it by virtual work: a
// formulation reads elements only through core/element.hpp, which gives no spring constant or
// damping to build Simbody's own force elements from.
#include <Simbody.h>
#include <fmt/format.h>

#include <memory>

#include "common/joint_graph.hpp"
#include "common/linear_modes.hpp"
#include "core/natural_coordinates.hpp"
#include "simbody/simbody_adapter.hpp"

namespace mbs::simbody {

namespace {

using SimTK::MobilizedBody;
using SimTK::Rotation;
using SimTK::Transform;
using SimTK::UnitVec3;
using SimTK::Vec3;

// A local-frame vector of dim components in 3 (planar: z = 0).
Eigen::Vector3d e3(const Eigen::VectorXd& x) {
  Eigen::Vector3d y = Eigen::Vector3d::Zero();
  y.head(x.size()) = x;
  return y;
}
Vec3 to_vec3(const Eigen::Vector3d& x) { return Vec3(x[0], x[1], x[2]); }
Vec3 to_vec3(const Eigen::VectorXd& x) { return to_vec3(e3(x)); }

class Engine;

// The model's force elements as one Simbody force: Q(q, v) in natural coordinates, applied at each
// point and, on a rigid body, as the force Q_rG at its centroid and the moment sum_k u_k x Q_uk.
class NaturalForces final : public SimTK::Force::Custom::Implementation {
 public:
  NaturalForces(const Engine& engine, std::vector<const Element*> elements);
  void calcForce(const SimTK::State& s, SimTK::Vector_<SimTK::SpatialVec>& body_forces, SimTK::Vector_<Vec3>& particle_forces,
                 SimTK::Vector& mobility_forces) const override;
  SimTK::Real calcPotentialEnergy(const SimTK::State& s) const override;

 private:
  const Engine& engine_;
  std::vector<const Element*> elements_;
  mutable Eigen::VectorXd q_, v_, Q_;  // sized once: calcForce runs every right-hand side
};

// The Simbody model of one Model: built once (set-up), never changed afterwards.
class Engine {
 public:
  explicit Engine(const Model& model);
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  const std::string& why() const { return why_; }  // non-empty: the model is unsupported, and why
  const Model& model() const { return model_; }
  const SimTK::MultibodySystem& system() const { return system_; }
  const SimTK::SimbodyMatterSubsystem& matter() const { return matter_; }
  const SimTK::State& initial_state() const { return initial_; }
  // Natural coordinates of a state realized to Position (q) and Velocity (v, when asked).
  void natural_state(const SimTK::State& s, Eigen::VectorXd& q, Eigen::VectorXd* v) const;
  SimTK::MobilizedBodyIndex index(int node) const { return mobod_[node].getMobilizedBodyIndex(); }
  int points() const { return static_cast<int>(model_.points.size()); }

 private:
  std::string build_tree(const SpanningTree& tree);
  std::string add_link(const SpanningTree& tree, const SpanningTree::Link& link);
  std::string add_cut(const JointEdge& ed);
  void set_initial_state();

  Transform initial_pose(int node) const;  // X_GB at t = 0 (ground: identity)
  MobilizedBody& mobod(int node) { return node < 0 ? matter_.updGround() : mobod_[node]; }
  Vec3 station(const Anchor& a) const { return a.body >= 0 || a.is_ground() ? to_vec3(a.at) : Vec3(0.0); }
  std::string node_name(int n) const {
    return n < 0 ? std::string("ground") : n < points() ? model_.points[n].name : model_.bodies[n - points()].name;
  }

  const Model& model_;
  SimTK::MultibodySystem system_;
  SimTK::SimbodyMatterSubsystem matter_{system_};
  SimTK::GeneralForceSubsystem forces_{system_};
  std::vector<MobilizedBody> mobod_;  // per node: point masses, then rigid bodies
  SimTK::State initial_;
  std::string why_;
};

Transform Engine::initial_pose(int node) const {
  if (node < 0) return Transform();
  if (node < points()) return Transform(Rotation(), to_vec3(model_.points[node].r0));
  const RigidBody& b = model_.bodies[node - points()];
  Eigen::Matrix3d R = Eigen::Matrix3d::Identity();
  R.topLeftCorner(b.dim(), b.dim()) = b.R0;
  const SimTK::Mat33 M(R(0, 0), R(0, 1), R(0, 2), R(1, 0), R(1, 1), R(1, 2), R(2, 0), R(2, 1), R(2, 2));
  return Transform(Rotation(M, true), to_vec3(b.r0));
}

Engine::Engine(const Model& model) : model_(model) {
  SpanningTree tree;
  why_ = spanning_tree(model, tree);
  if (why_.empty()) why_ = build_tree(tree);
  if (!why_.empty()) return;
  std::vector<const Element*> force_elements;
  for (const auto& e : model.elements)
    if (e->role() == ElementRole::kForce) force_elements.push_back(e.get());
  if (!force_elements.empty()) SimTK::Force::Custom(forces_, new NaturalForces(*this, std::move(force_elements)));
  const Eigen::Vector3d g = e3(model.gravity);
  if (g.norm() > 0.0) SimTK::Force::Gravity(forces_, matter_, UnitVec3(to_vec3(g)), g.norm());
  set_initial_state();
}

std::string Engine::build_tree(const SpanningTree& tree) {
  mobod_.resize(model_.points.size() + model_.bodies.size());
  for (const SpanningTree::Link& link : tree.links)
    if (std::string why = add_link(tree, link); !why.empty()) return why;
  for (int k : tree.cuts)
    if (std::string why = add_cut(tree.edges[k]); !why.empty()) return why;
  return "";
}

// The body of link.node on its mobilizer: F on the parent and M on the child both at the joint
// frame J (origin o, orientation R_J) of the initial configuration, so that q = 0 there.
std::string Engine::add_link(const SpanningTree& tree, const SpanningTree::Link& link) {
  const int c = link.node;
  const bool planar = model_.dim == 2;
  SimTK::Body::Rigid body;
  if (c < points()) {
    body = SimTK::Body::Rigid(SimTK::MassProperties(model_.points[c].mass, Vec3(0.0), SimTK::Inertia(0.0)));
  } else {
    const RigidBody& rb = model_.bodies[c - points()];
    const Eigen::Vector3d I = planar ? Eigen::Vector3d(rb.second_moments[1], rb.second_moments[0], rb.second_moments.sum())
                                     : rb.principal_inertia();
    body = SimTK::Body::Rigid(SimTK::MassProperties(rb.mass, Vec3(0.0), SimTK::Inertia(I[0], I[1], I[2])));
  }
  const Transform X_GB = initial_pose(c);
  MobilizedBody& parent = mobod(link.parent);
  if (link.edge < 0) {  // a free root: a point translates; a rigid body moves freely (planar: in its plane)
    if (c < points())
      mobod_[c] = MobilizedBody::Translation(parent, X_GB, body, Transform());
    else if (planar)
      mobod_[c] = MobilizedBody::Planar(parent, X_GB, body, Transform());
    else
      mobod_[c] = MobilizedBody::Free(parent, X_GB, body, Transform());
    return "";
  }
  const JointEdge& ed = tree.edges[link.edge];
  const Anchor& pa = link.from_a ? *ed.joint.a : *ed.joint.b;
  const Anchor& ca = link.from_a ? *ed.joint.b : *ed.joint.a;
  const Transform X_GP = initial_pose(link.parent);
  const std::string joint = ed.name.empty() ? ed.e->name : ed.name;
  auto frames = [&](const Rotation& R_J, const Eigen::Vector3d& o) {
    const Transform X_GJ(R_J, to_vec3(o));
    return std::make_pair(~X_GP * X_GJ, ~X_GB * X_GJ);
  };
  const bool point_child = c < points();
  const std::string no_inertia =
      fmt::format("joint {} ({}) turns point mass {} about itself: a point has no inertia there (Simbody's mass "
                  "matrix would be singular); point masses hang from rods",
                  joint, ed.e->kind(), node_name(c));
  TreeJointType type = ed.hinge ? TreeJointType::kRevolute : ed.joint.type;
  if (planar && type == TreeJointType::kSpherical) type = TreeJointType::kRevolute;  // a pin
  switch (type) {
    case TreeJointType::kRod: {
      if (!point_child)
        return fmt::format("rod {} holds rigid body {}: rods join point masses to their parents in the adapter", joint,
                           node_name(c));
      const Eigen::Vector3d o = initial_anchor_position(model_, pa);
      if (planar) {  // a pin at the parent's end
        const auto [X_PF, X_BM] = frames(Rotation(), o);
        mobod_[c] = MobilizedBody::Pin(parent, X_PF, body, X_BM);
      } else {  // the point's direction from the parent's end, 2 DOF: no spin about the rod (LineOrientation)
        const Eigen::Vector3d d = initial_anchor_position(model_, ca) - o;
        const auto [X_PF, X_BM] = frames(Rotation(UnitVec3(to_vec3(d)), SimTK::ZAxis), o);
        mobod_[c] = MobilizedBody::LineOrientation(parent, X_PF, body, X_BM);
      }
      return "";
    }
    case TreeJointType::kRevolute: {  // a pin about the axis (planar: the normal z)
      if (point_child) return no_inertia;
      const Eigen::Vector3d axis = planar ? Eigen::Vector3d::UnitZ() : ed.hinge ? ed.axis : e3(ed.joint.axis).normalized();
      const auto [X_PF, X_BM] = frames(Rotation(UnitVec3(to_vec3(axis)), SimTK::ZAxis), initial_anchor_position(model_, ca));
      mobod_[c] = MobilizedBody::Pin(parent, X_PF, body, X_BM);
      return "";
    }
    case TreeJointType::kSpherical: {  // spatial only (planar: a pin, above)
      if (point_child) return no_inertia;
      const auto [X_PF, X_BM] = frames(Rotation(), initial_anchor_position(model_, ca));
      mobod_[c] = MobilizedBody::Ball(parent, X_PF, body, X_BM);
      return "";
    }
    case TreeJointType::kPrismatic: {  // a slider along the axis (F's x)
      const auto [X_PF, X_BM] =
          frames(Rotation(UnitVec3(to_vec3(e3(ed.joint.axis))), SimTK::XAxis), initial_anchor_position(model_, ca));
      mobod_[c] = MobilizedBody::Slider(parent, X_PF, body, X_BM);
      return "";
    }
    case TreeJointType::kFixed: {
      const auto [X_PF, X_BM] = frames(Rotation(), initial_anchor_position(model_, ca));
      mobod_[c] = MobilizedBody::Weld(parent, X_PF, body, X_BM);
      return "";
    }
    default:
      return fmt::format("joint {} ({}): {} joints are not mapped by the Simbody adapter", joint, ed.e->kind(),
                         to_string(ed.joint.type));
  }
}

// A joint that closes a loop, as Simbody constraints between its two ends' bodies (stations in the
// body frames; directions and frames from the initial configuration). Planar: every body stays in
// the plane, so a pin is a point kept on the line normal to the plane through the other (2 rows,
// PointOnLine) rather than Ball's 3, one of them redundant.
std::string Engine::add_cut(const JointEdge& ed) {
  const bool planar = model_.dim == 2;
  const Anchor &a = *ed.joint.a, &b = *ed.joint.b;
  const int na = joint_node(model_, a), nb = joint_node(model_, b);
  MobilizedBody &A = mobod(na), &B = mobod(nb);
  const Transform X_GA = initial_pose(na), X_GB = initial_pose(nb);
  const Vec3 sa = station(a), sb = station(b);
  const std::string joint = ed.name.empty() ? ed.e->name : ed.name;
  // A direction fixed in A, from its world direction at t = 0.
  auto in_a = [&](const Eigen::Vector3d& d) { return UnitVec3(~X_GA.R() * to_vec3(d)); };
  auto in_b = [&](const Eigen::Vector3d& d) { return UnitVec3(~X_GB.R() * to_vec3(d)); };
  TreeJointType type = ed.hinge ? TreeJointType::kRevolute : ed.joint.type;
  if (planar && type == TreeJointType::kSpherical) type = TreeJointType::kRevolute;
  switch (type) {
    case TreeJointType::kRod:
      SimTK::Constraint::Rod(A, sa, B, sb, ed.joint.length);
      return "";
    case TreeJointType::kSpherical:
      SimTK::Constraint::Ball(A, sa, B, sb);
      return "";
    case TreeJointType::kRevolute: {
      if (planar) {
        SimTK::Constraint::PointOnLine(A, in_a(Eigen::Vector3d::UnitZ()), sa, B, sb);
        return "";
      }
      // Coincident points, and B's two directions normal to the axis kept normal to A's axis.
      const Eigen::Vector3d axis = ed.hinge ? ed.axis : e3(ed.joint.axis).normalized();
      const Eigen::Vector3d n1 = axis.unitOrthogonal(), n2 = axis.cross(n1);
      SimTK::Constraint::Ball(A, sa, B, sb);
      SimTK::Constraint::ConstantAngle(A, in_a(axis), B, in_b(n1), SimTK::Pi / 2);
      SimTK::Constraint::ConstantAngle(A, in_a(axis), B, in_b(n2), SimTK::Pi / 2);
      return "";
    }
    case TreeJointType::kPrismatic: {  // B's point on A's line along the axis, orientations locked
      const Eigen::Vector3d axis = e3(ed.joint.axis).normalized();
      SimTK::Constraint::PointOnLine(A, in_a(axis), sa, B, sb);
      SimTK::Constraint::ConstantOrientation(A, ~X_GA.R(), B, ~X_GB.R());
      return "";
    }
    case TreeJointType::kFixed: {
      const Transform X_GJ(Rotation(), to_vec3(initial_anchor_position(model_, a)));
      SimTK::Constraint::Weld(A, ~X_GA * X_GJ, B, ~X_GB * X_GJ);
      return "";
    }
    default:
      return fmt::format("joint {} ({}) closes a loop: {} joints have no Simbody constraint in the adapter", joint,
                         ed.e->kind(), to_string(ed.joint.type));
  }
}

// t = 0: every mobilizer at q = 0 is the model's initial configuration; u is the least-squares fit
// of the bodies' initial velocities (a point's velocity; a rigid body's angular and centroid
// velocity) through the system Jacobian, exact when the model's velocities satisfy its joints;
// with loop constraints the state is then projected onto them.
void Engine::set_initial_state() {
  initial_ = system_.realizeTopology();
  system_.realizeModel(initial_);
  system_.realize(initial_, SimTK::Stage::Position);
  const int nu = initial_.getNU();
  if (nu == 0) {
    why_ = "no degree of freedom";
    return;
  }
  const int np = points(), nb = static_cast<int>(model_.bodies.size());
  const int rows = 3 * np + 6 * nb;
  Eigen::MatrixXd J(rows, nu);
  Eigen::VectorXd V(rows);
  SimTK::Vector u(nu, 0.0);
  SimTK::Vector_<SimTK::SpatialVec> Ju;
  auto fill = [&](auto&& column) {
    for (int i = 0; i < np; ++i)
      for (int k = 0; k < 3; ++k) column(3 * i + k, Ju[index(i)][1][k]);
    for (int j = 0; j < nb; ++j)
      for (int k = 0; k < 3; ++k) {
        column(3 * np + 6 * j + k, Ju[index(np + j)][0][k]);
        column(3 * np + 6 * j + 3 + k, Ju[index(np + j)][1][k]);
      }
  };
  for (int m = 0; m < nu; ++m) {
    u = 0.0;
    u[m] = 1.0;
    matter_.multiplyBySystemJacobian(initial_, u, Ju);
    fill([&](int r, double x) { J(r, m) = x; });
  }
  for (int i = 0; i < np; ++i) V.segment<3>(3 * i) = e3(model_.points[i].v0);
  for (int j = 0; j < nb; ++j) {
    const RigidBody& rb = model_.bodies[j];
    V.segment<3>(3 * np + 6 * j) = rb.omega0;
    V.segment<3>(3 * np + 6 * j + 3) = e3(rb.v0);
  }
  const Eigen::VectorXd u0 = J.completeOrthogonalDecomposition().solve(V);
  for (int m = 0; m < nu; ++m) initial_.updU()[m] = u0[m];
  system_.realize(initial_, SimTK::Stage::Velocity);
  if (matter_.getNumConstraints() > 0) {
    system_.project(initial_, 1e-12);
    system_.realize(initial_, SimTK::Stage::Velocity);
  }
}

void Engine::natural_state(const SimTK::State& s, Eigen::VectorXd& q, Eigen::VectorXd* v) const {
  const int dim = model_.dim, np = points();
  for (int i = 0; i < np; ++i) {
    const MobilizedBody& mb = mobod_[i];
    const Vec3& r = mb.getBodyOriginLocation(s);
    for (int k = 0; k < dim; ++k) q[dim * i + k] = r[k];
    if (v == nullptr) continue;
    const Vec3& rd = mb.getBodyOriginVelocity(s);
    for (int k = 0; k < dim; ++k) (*v)[dim * i + k] = rd[k];
  }
  for (int j = 0; j < static_cast<int>(model_.bodies.size()); ++j) {
    const MobilizedBody& mb = mobod_[np + j];
    const int off = model_.body_offset(j);
    const Vec3& r = mb.getBodyOriginLocation(s);
    const SimTK::Mat33& R = mb.getBodyRotation(s).asMat33();
    for (int k = 0; k < dim; ++k) q[off + k] = r[k];
    for (int c = 0; c < dim; ++c)
      for (int k = 0; k < dim; ++k) q[off + dim * (c + 1) + k] = R(k, c);
    if (v == nullptr) continue;
    const Vec3& rd = mb.getBodyOriginVelocity(s);
    const Vec3& w = mb.getBodyAngularVelocity(s);
    for (int k = 0; k < dim; ++k) (*v)[off + k] = rd[k];
    for (int c = 0; c < dim; ++c) {
      const Vec3 ud = w % Vec3(R(0, c), R(1, c), R(2, c));  // u_c' = omega x u_c
      for (int k = 0; k < dim; ++k) (*v)[off + dim * (c + 1) + k] = ud[k];
    }
  }
}

NaturalForces::NaturalForces(const Engine& engine, std::vector<const Element*> elements)
    : engine_(engine), elements_(std::move(elements)), q_(engine.model().nq()), v_(engine.model().nq()), Q_(engine.model().nq()) {}

void NaturalForces::calcForce(const SimTK::State& s, SimTK::Vector_<SimTK::SpatialVec>& body_forces,
                              SimTK::Vector_<Vec3>& /*particle_forces*/, SimTK::Vector& /*mobility_forces*/) const {
  const Model& model = engine_.model();
  const int dim = model.dim, np = engine_.points();
  engine_.natural_state(s, q_, &v_);
  Q_.setZero();
  for (const Element* e : elements_) e->add_force(model, q_, v_, Q_);
  for (int i = 0; i < np; ++i) body_forces[engine_.index(i)][1] += to_vec3(e3(Q_.segment(dim * i, dim)));
  for (int j = 0; j < static_cast<int>(model.bodies.size()); ++j) {
    const int off = model.body_offset(j);
    Vec3 moment(0.0);
    for (int c = 0; c < dim; ++c)
      moment += to_vec3(e3(q_.segment(off + dim * (c + 1), dim))) % to_vec3(e3(Q_.segment(off + dim * (c + 1), dim)));
    body_forces[engine_.index(np + j)][0] += moment;
    body_forces[engine_.index(np + j)][1] += to_vec3(e3(Q_.segment(off, dim)));
  }
}

SimTK::Real NaturalForces::calcPotentialEnergy(const SimTK::State& s) const {
  engine_.natural_state(s, q_, nullptr);
  double V = 0.0;
  for (const Element* e : elements_) V += e->potential_energy(engine_.model(), q_);
  return V;
}

std::unique_ptr<SimTK::Integrator> make_integrator(Integrator kind, const SimTK::System& system) {
  switch (kind) {
    case Integrator::kMerson: return std::make_unique<SimTK::RungeKuttaMersonIntegrator>(system);
    case Integrator::kFeldberg: return std::make_unique<SimTK::RungeKuttaFeldbergIntegrator>(system);
    case Integrator::kRk3: return std::make_unique<SimTK::RungeKutta3Integrator>(system);
    case Integrator::kVerlet: return std::make_unique<SimTK::VerletIntegrator>(system);
    case Integrator::kSemiExplicitEuler2: return std::make_unique<SimTK::SemiExplicitEuler2Integrator>(system);
    // Simbody's copy of SUNDIALS' N_Vector functions shares names with SUNDIALS 6's, which the
    // build links statically and keeps unexported so that CPodes binds to its own (CMakeLists.txt).
    case Integrator::kCPodes:
      return std::make_unique<SimTK::CPodesIntegrator>(system, SimTK::CPodes::BDF, SimTK::CPodes::Newton);
  }
  throw SolverError("simbody: unknown integrator");
}

// The timed region is what a Simbody user calls to run a simulation: initialize the integrator from
// the initial state (set-up built it), then stepTo(t_end) returning after every internal step.
class SimbodySimulator final : public Simulator {
 public:
  SimbodySimulator(const Model& model, Method method, double accuracy)
      : Simulator(model), engine_(std::make_unique<Engine>(model)) {
    if (!engine_->why().empty()) throw SolverError(engine_->why());
    integ_ = make_integrator(method.integrator, engine_->system());
    integ_->setAccuracy(accuracy);
    // The case's fixed constraint tolerance, or Simbody's default (the accuracy), set explicitly.
    integ_->setConstraintTolerance(method.constraint_tolerance_at(accuracy));
    integ_->setReturnEveryInternalStep(true);
  }

 protected:
  void do_initialize(double t_end) override {
    integ_->setFinalTime(t_end);
    guarded([&] { integ_->initialize(engine_->initial_state()); });
  }
  void do_step(double t_end) override {
    // The first call after initialize() returns at once, reporting the start of the interval.
    guarded([&] {
      while (integ_->stepTo(t_end) == SimTK::Integrator::StartOfContinuousInterval) {}
    });
    if (integ_->isSimulationOver() && integ_->getTerminationReason() != SimTK::Integrator::ReachedFinalTime)
      throw SolverError(fmt::format("simbody: the integrator stopped at t = {:.9g} s ({})", integ_->getTime(),
                                    SimTK::Integrator::getTerminationReasonString(integ_->getTerminationReason()).c_str()));
  }
  double do_time() const override { return integ_->getTime(); }
  void do_model_state() override { engine_->natural_state(integ_->getState(), q_model_, &v_model_); }
  void do_finish_run() override {
    stats_.rhs_evals = integ_->getNumRealizations();
    stats_.failures = integ_->getNumStepsAttempted() - integ_->getNumStepsTaken();
    stats_.newton_iterations = integ_->getNumIterations();
  }

 private:
  // Simbody reports failures by exceptions (SimTK::Exception::Base, a std::exception).
  template <typename F>
  void guarded(F&& f) {
    try {
      f();
    } catch (const SolverError&) {
      throw;
    } catch (const std::exception& e) {
      throw SolverError(fmt::format("simbody at t = {:.9g} s: {}", integ_->getTime(), e.what()));
    }
  }

  std::unique_ptr<Engine> engine_;           // the system the integrator steps ...
  std::unique_ptr<SimTK::Integrator> integ_;  // ... destroyed after it
};

// Linearization from Simbody's system matrices about the initial state (a static equilibrium) at
// rest: M by SimbodyMatterSubsystem::calcM, and the stiffness by centered differences of Simbody's
// own forward dynamics (realize to Acceleration with u = 0), Simbody 3.7 offering no linearization
// of the dynamics itself. Coordinates: tangent increments delta of the mobilities, q = q0 + N(q0)
// delta (a spatial rod's LineOrientation: 2 rotations normal to the rod, no spin; quaternions
// unnormalized by O(delta^2), which centered differences cancel). About an equilibrium at rest
// udot = -M^-1 K delta, so K = -M dudot/ddelta; its antisymmetric part is a component of the gravity
// moment the joints transmit, zero at an equilibrium (as recursive's), and K is symmetrized. The
// differences' error, ~ g eps^2 / 6 (truncation) + u g / eps (rounding, u ~ 1e-16) in K, balances
// at eps = 1e-5 near 1e-10 relative, far below the rule. Eigenvalues and their judgement:
// LinearModes (formulations/common/linear_modes.hpp) on M y'' + K y = 0, with R = dq/dy, the natural
// coordinates' velocities of each unit mobility from Simbody's state.
constexpr double kDifferenceStep = 1e-5;  // rad or m of a mobility

class SimbodyLinearizer final : public Linearizer {
 public:
  explicit SimbodyLinearizer(const Model& model)
      : engine_(std::make_unique<Engine>(model)),
        nat_(model),
        n_(built(*engine_).initial_state().getNU()),
        modes_(n_, 0, model.nq(), 0, false),
        s_(engine_->initial_state()),
        q0_(s_.getQ()),
        e_(n_, 0.0),
        dq_(s_.getNQ(), 0.0),
        Nq_(n_),
        udot_plus_(n_),
        J_(n_, n_),
        tau_(n_),
        q_nat_(model.nq()),
        v_nat_(model.nq()) {
    lin_.coordinates = fmt::format(
        "Simbody's mobilities as tangent increments delta of q0, q = q0 + N(q0) delta ({} coordinates; a spatial "
        "rod's LineOrientation: 2 rotations normal to the rod, no spin); M by calcM, K = -M dudot/ddelta by centered "
        "differences ({:g}) of Simbody's forward dynamics, symmetrized",
        n_, kDifferenceStep);
    lin_.rule = modes_.rule();
    lin_.terms = {{"M", modes_.M}, {"K", modes_.K}, {"R = dq/dy", modes_.R}};
    modes_.prepare(lin_.eigenvalues);
  }

  const Linearization& linearize() override {
    try {
      return run();
    } catch (const SolverError&) {
      throw;
    } catch (const std::exception& e) {
      throw SolverError(fmt::format("simbody: {}", e.what()));
    }
  }

 private:
  static const Engine& built(const Engine& engine) {
    if (!engine.why().empty()) throw SolverError(engine.why());
    return engine;
  }

  const Linearization& run() {
    const SimTK::MultibodySystem& system = engine_->system();
    const SimTK::SimbodyMatterSubsystem& matter = engine_->matter();
    // The initial configuration at rest, whatever a previous call left in s_.
    s_.updQ() = q0_;
    s_.updU() = 0.0;
    system.realize(s_, SimTK::Stage::Acceleration);
    matter.calcM(s_, M_);
    for (int r = 0; r < n_; ++r)
      for (int c = 0; c < n_; ++c) modes_.M(r, c) = M_(r, c);
    // R: the natural coordinates' velocities of each unit mobility; N(q0) for the increments.
    for (int j = 0; j < n_; ++j) {
      e_ = 0.0;
      e_[j] = 1.0;
      s_.updU() = e_;
      system.realize(s_, SimTK::Stage::Velocity);
      engine_->natural_state(s_, q_nat_, &v_nat_);
      modes_.R.col(j) = v_nat_;
      matter.multiplyByN(s_, false, e_, dq_);
      Nq_[j] = dq_;
    }
    // Equilibrium: the generalized force M udot at rest against |Q| |R| (minimal's measure).
    s_.updU() = 0.0;
    system.realize(s_, SimTK::Stage::Acceleration);
    for (int r = 0; r < n_; ++r) {
      tau_[r] = 0.0;
      for (int c = 0; c < n_; ++c) tau_[r] += modes_.M(r, c) * s_.getUDot()[c];
    }
    const double scale = nat_.Q().norm() * modes_.R.norm();
    const double residual = scale > 0.0 ? tau_.norm() / scale : tau_.norm();
    if (!(residual <= NaturalEquilibrium::kEquilibriumTol))
      throw SolverError(fmt::format(
          "simbody: the initial configuration is not a static equilibrium (|M udot| = {:.3g} |Q| |R| > {:g} |Q| |R|)",
          residual, NaturalEquilibrium::kEquilibriumTol));
    for (int j = 0; j < n_; ++j) {
      for (const double sign : {1.0, -1.0}) {
        s_.updQ() = q0_ + (sign * kDifferenceStep) * Nq_[j];
        system.realize(s_, SimTK::Stage::Acceleration);
        const SimTK::Vector& udot = s_.getUDot();
        if (sign > 0.0) udot_plus_ = udot;
        else
          for (int r = 0; r < n_; ++r) J_(r, j) = (udot_plus_[r] - udot[r]) / (2.0 * kDifferenceStep);
      }
    }
    modes_.K.noalias() = -modes_.M * J_;
    modes_.K = 0.5 * (modes_.K + modes_.K.transpose()).eval();
    s_.updQ() = q0_;
    modes_.compute(lin_.eigenvalues);
    lin_.terms[0].second = modes_.M;
    lin_.terms[1].second = modes_.K;
    lin_.terms[2].second = modes_.R;
    return lin_;
  }

  std::unique_ptr<Engine> engine_;
  NaturalCoordinates nat_;
  int n_;
  LinearModes modes_;
  SimTK::State s_;
  SimTK::Vector q0_, e_, dq_;
  std::vector<SimTK::Vector> Nq_;  // N(q0) e_j per mobility j
  SimTK::Vector udot_plus_;
  SimTK::Matrix M_;
  Eigen::MatrixXd J_;
  Eigen::VectorXd tau_, q_nat_, v_nat_;
  Linearization lin_;
};

}  // namespace

std::string unsupported_reason(const Model& model) {
  try {
    return Engine(model).why();
  } catch (const std::exception& e) {
    return fmt::format("Simbody rejected the model: {}", e.what());
  }
}

std::unique_ptr<Simulator> create_simulator(const Model& model, Method method, double accuracy) {
  try {
    return std::make_unique<SimbodySimulator>(model, method, accuracy);
  } catch (const SolverError&) {
    throw;
  } catch (const std::exception& e) {
    throw SolverError(fmt::format("Simbody rejected the model: {}", e.what()));
  }
}

std::string linearization_unsupported_reason(const Model& model) {
  for (const auto& e : model.elements)
    if (e->role() != ElementRole::kJoint)
      return fmt::format("element {} ({}): gravity is the only load linearized, {} elements are not", e->name, e->kind(),
                         to_string(e->role()));
  try {
    const Engine engine(model);
    if (!engine.why().empty()) return engine.why();
    if (engine.matter().getNumConstraints() > 0)
      return "a closed loop (Simbody constraints): the linearization takes trees, where M is the mobilities' own";
  } catch (const std::exception& e) {
    return fmt::format("Simbody rejected the model: {}", e.what());
  }
  return "";
}

std::unique_ptr<Linearizer> create_linearizer(const Model& model) {
  try {
    return std::make_unique<SimbodyLinearizer>(model);
  } catch (const SolverError&) {
    throw;
  } catch (const std::exception& e) {
    throw SolverError(fmt::format("Simbody rejected the model: {}", e.what()));
  }
}

}  // namespace mbs::simbody
