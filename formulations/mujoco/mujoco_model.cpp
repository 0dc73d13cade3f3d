// The MuJoCo adapter: the generic model as MJCF text, loaded through MuJoCo's virtual file system,
// and the simulator that steps it with mj_step at a fixed step (docs/engines.md).
//
// Bodies. Every point mass and rigid body is a MuJoCo body whose frame is its natural coordinates'
// frame: a point mass's at the point, a rigid body's at its centroid along its principal axes, so
// positions, velocities and the principal axes u_k read back without a transform. A planar model
// runs in the plane z = 0 of its local frame; a planar body is a lamina. MuJoCo's compiler refuses a
// moving body without inertia, so a point mass gets a tiny one (common/engine_model.hpp).
//
// Joints. A spanning tree of the joint graph (common/joint_graph.hpp) nests the bodies, each with
// its joint to the parent placed so that every joint's qpos0 is the initial configuration. A joint
// that closes a loop would be a soft equality constraint in MuJoCo: refused (docs/engines.md).
#include <fmt/format.h>
#include <mujoco/mujoco.h>

#include <cmath>
#include <complex>
#include <cstring>
#include <memory>

#include "common/engine_model.hpp"
#include "common/linear_modes.hpp"
#include "common/root_order.hpp"
#include "mujoco/mujoco_adapter.hpp"

namespace mbs::mujoco {

namespace {

std::string vec(const Eigen::Vector3d& x) { return fmt::format("{:.17g} {:.17g} {:.17g}", x[0], x[1], x[2]); }

// MuJoCo reports fatal errors through mju_user_error, which by default prints and exits the process:
// throw instead (the adapter catches it where it calls MuJoCo). Warnings would go to a log file in the
// working directory: the adapter reads mjData's warning counters instead.
[[noreturn]] void throw_error(const char* msg) { throw SolverError(fmt::format("MuJoCo error: {}", msg)); }
void ignore_warning(const char* /*msg*/) {}
void install_handlers() {
  mju_user_error = throw_error;
  mju_user_warning = ignore_warning;
}

struct ModelDeleter {
  void operator()(mjModel* m) const { mj_deleteModel(m); }
};
struct DataDeleter {
  void operator()(mjData* d) const { mj_deleteData(d); }
};

// The MuJoCo model of one Model: built once (set-up), never changed afterwards but for its options.
class Engine {
 public:
  explicit Engine(const Model& model);

  const std::string& why() const { return why_; }  // non-empty: the model is unsupported, and why
  mjModel* m() const { return m_.get(); }
  mjData* d() const { return d_.get(); }
  const Eigen::VectorXd& qvel0() const { return qvel0_; }
  // Natural coordinates of d's state (qpos, qvel). Recomputes d's kinematics for it: mj_step leaves
  // them at the start of the step it took.
  void natural_state(Eigen::VectorXd& q, Eigen::VectorXd& v) const;
  // MuJoCo's velocity coordinates joint by joint, named by the model's bodies (for a linearization).
  std::string velocity_coordinates() const;

 private:
  std::string mjcf(const SpanningTree& tree);
  std::string body(const SpanningTree& tree, const SpanningTree::Link& link, std::string& xml) const;
  void initial_velocities();
  // A node's world pose and velocity (common/engine_model.hpp's NodeState) from d's kinematics.
  void node_state(int node, Eigen::Vector3d& r, Eigen::Matrix3d& R, Eigen::Vector3d& w, Eigen::Vector3d& v) const;

  const Model& model_;
  const EngineNodes nodes_;
  std::unique_ptr<mjModel, ModelDeleter> m_;
  std::unique_ptr<mjData, DataDeleter> d_;
  std::vector<int> body_id_;  // per node: point masses, then rigid bodies
  Eigen::VectorXd qvel0_;
  std::string why_;
};

Engine::Engine(const Model& model) : model_(model), nodes_(model) {
  install_handlers();
  SpanningTree tree;
  why_ = spanning_tree(model, tree);
  if (!why_.empty()) return;
  why_ = loop_refusal(tree,
                      "MuJoCo closes loops only with soft equality constraints (connect, weld; solref/solimp), which "
                      "the adapter does not map");
  if (!why_.empty()) return;
  const std::string xml = mjcf(tree);
  if (!why_.empty()) return;
  // The MJCF text as a file of MuJoCo's virtual file system (mjVFS is 2 MB: on the heap).
  auto vfs = std::make_unique<mjVFS>();
  mj_defaultVFS(vfs.get());
  const char* file = "mbsbench.xml";
  if (mj_makeEmptyFileVFS(vfs.get(), file, static_cast<int>(xml.size())) != 0) {
    why_ = "MuJoCo's virtual file system refused the model's MJCF text";
    return;
  }
  std::memcpy(vfs->filedata[mj_findFileVFS(vfs.get(), file)], xml.data(), xml.size());
  char error[1000] = "";
  m_.reset(mj_loadXML(file, vfs.get(), error, sizeof error));
  mj_deleteVFS(vfs.get());
  if (!m_) {
    why_ = fmt::format("MuJoCo rejected the model: {}", error);
    return;
  }
  if (m_->nv == 0) {
    why_ = "no degree of freedom";
    return;
  }
  body_id_.resize(model_.points.size() + model_.bodies.size());
  for (size_t n = 0; n < body_id_.size(); ++n)
    body_id_[n] = mj_name2id(m_.get(), mjOBJ_BODY, fmt::format("n{}", n).c_str());
  // Options that differ from MuJoCo's defaults (docs/engines.md): the model's gravity; contacts off
  // (no geometry: the models here have none). No constraint is left for the solver (no loops, no
  // limits, no contacts), so its warm start has nothing to carry.
  const Eigen::Vector3d g = in_3d(model.gravity);
  for (int k = 0; k < 3; ++k) m_->opt.gravity[k] = g[k];
  m_->opt.disableflags |= mjDSBL_CONTACT;
  d_.reset(mj_makeData(m_.get()));
  initial_velocities();
}

// The MJCF text: bodies nested along the tree (parents before children), each body's frame its
// natural coordinates' frame, placed relative to its parent's at the initial configuration.
std::string Engine::mjcf(const SpanningTree& tree) {
  std::vector<std::vector<int>> children(model_.points.size() + model_.bodies.size() + 1);  // [0]: ground
  for (size_t i = 0; i < tree.links.size(); ++i) children[tree.links[i].parent + 1].push_back(static_cast<int>(i));
  std::string xml =
      "<mujoco model=\"mbsbench\">\n"
      "  <compiler angle=\"radian\" inertiafromgeom=\"false\"/>\n"
      "  <worldbody>\n";
  // Depth first, each body closed after its children.
  struct Frame {
    int link;
    size_t next;
  };
  std::vector<Frame> stack;
  for (int root : children[0]) {
    stack.push_back({root, 0});
    if (std::string why = body(tree, tree.links[root], xml); !why.empty()) {
      why_ = why;
      return "";
    }
    while (!stack.empty()) {
      Frame& f = stack.back();
      const std::vector<int>& kids = children[tree.links[f.link].node + 1];
      if (f.next == kids.size()) {
        xml += "</body>\n";
        stack.pop_back();
        continue;
      }
      const int k = kids[f.next++];
      stack.push_back({k, 0});
      if (std::string why = body(tree, tree.links[k], xml); !why.empty()) {
        why_ = why;
        return "";
      }
    }
  }
  xml += "  </worldbody>\n</mujoco>\n";
  return xml;
}

// Opens the body of link.node (closed by the caller) with its inertia and its joint to the parent.
std::string Engine::body(const SpanningTree& tree, const SpanningTree::Link& link, std::string& xml) const {
  const int c = link.node;
  const bool planar = model_.dim == 2;
  const bool point_child = c < nodes_.points();
  const Eigen::Matrix3d R_GP = nodes_.rotation0(link.parent), R_GB = nodes_.rotation0(c);
  const Eigen::Vector3d r_B = nodes_.position0(c);
  const Eigen::Vector3d pos = R_GP.transpose() * (r_B - nodes_.position0(link.parent));
  const Eigen::Quaterniond quat(R_GP.transpose() * R_GB);
  // Joint anchors and axes are in the body's own frame.
  auto local_point = [&](const Eigen::Vector3d& o) -> Eigen::Vector3d { return R_GB.transpose() * (o - r_B); };
  auto local_axis = [&](const Eigen::Vector3d& a) -> Eigen::Vector3d { return R_GB.transpose() * a.normalized(); };
  double point_length = 1.0;  // m: a point's rod (its kPointInertia)
  std::string joints;
  auto joint = [&](const char* type, const Eigen::Vector3d& at, const Eigen::Vector3d& axis) {
    joints += fmt::format("<joint type=\"{}\" pos=\"{}\" axis=\"{}\"/>\n", type, vec(at), vec(axis));
  };
  if (link.edge < 0) {  // a free root: a point translates; a rigid body moves freely (planar: in its plane)
    const Eigen::Vector3d o = Eigen::Vector3d::Zero();
    if (point_child || planar) {
      joint("slide", o, local_axis(Eigen::Vector3d::UnitX()));
      joint("slide", o, local_axis(Eigen::Vector3d::UnitY()));
      if (!planar) joint("slide", o, local_axis(Eigen::Vector3d::UnitZ()));
      if (planar && !point_child) joint("hinge", o, Eigen::Vector3d::UnitZ());
    } else {
      joints = "<freejoint/>\n";
    }
  } else {
    EngineJoint j;
    if (std::string why = engine_joint(model_, tree, link, "MuJoCo", j); !why.empty()) return why;
    const Eigen::Vector3d at = local_point(j.pivot);
    // A rod: planar, a hinge about the normal at the parent's end; spatial, a ball there (3 DOF: the
    // spin about the rod has only the point's tiny inertia, and nothing drives it).
    switch (j.type) {
      case TreeJointType::kRod:
        if (planar)
          joint("hinge", at, Eigen::Vector3d::UnitZ());
        else
          joints = fmt::format("<joint type=\"ball\" pos=\"{}\"/>\n", vec(at));
        point_length = j.point_length;
        break;
      case TreeJointType::kRevolute:
        joint("hinge", at, local_axis(j.axis));
        break;
      case TreeJointType::kSpherical:  // spatial only (planar: a hinge, above)
        joints = fmt::format("<joint type=\"ball\" pos=\"{}\"/>\n", vec(at));
        break;
      case TreeJointType::kPrismatic:
        joint("slide", at, local_axis(j.axis));
        break;
      default:  // kFixed: a body without a joint is welded to its parent
        break;
    }
  }
  const double mass = nodes_.mass(c);
  const Eigen::Vector3d I = nodes_.inertia(c, point_length);
  xml += fmt::format("<body name=\"n{}\" pos=\"{}\" quat=\"{:.17g} {:.17g} {:.17g} {:.17g}\">\n", c, vec(pos), quat.w(),
                     quat.x(), quat.y(), quat.z());
  xml += fmt::format("<inertial pos=\"0 0 0\" mass=\"{:.17g}\" diaginertia=\"{}\"/>\n", mass, vec(I));
  xml += joints;
  return "";
}

// t = 0: qpos0 is the model's initial configuration by construction; qvel is the least-squares fit
// of the bodies' initial velocities (a point's velocity; a rigid body's angular and centroid
// velocity) through the map qvel -> those velocities, exact when the model's velocities satisfy its
// joints.
void Engine::initial_velocities() {
  mjModel* m = m_.get();
  mjData* d = d_.get();
  mj_resetData(m, d);
  mj_kinematics(m, d);
  mj_comPos(m, d);
  auto set_unit = [m, d](int k) {
    mju_zero(d->qvel, m->nv);
    d->qvel[k] = 1.0;
    mj_comVel(m, d);
  };
  qvel0_ = fit_initial_velocities(model_, m->nv, set_unit, [this](int n, auto& r, auto& R, auto& w, auto& v) {
    node_state(n, r, R, w, v);
  });
  mj_resetData(m, d);
}

void Engine::node_state(int node, Eigen::Vector3d& r, Eigen::Matrix3d& R, Eigen::Vector3d& w,
                        Eigen::Vector3d& v) const {
  const int b = body_id_[node];
  mjtNum vel[6];  // angular, then linear (world frame)
  mj_objectVelocity(m_.get(), d_.get(), mjOBJ_BODY, b, vel, 0);
  r = Eigen::Map<const Eigen::Vector3d>(d_->xpos + 3 * b);
  R = Eigen::Map<const Eigen::Matrix<double, 3, 3, Eigen::RowMajor>>(d_->xmat + 9 * b);
  w = Eigen::Map<const Eigen::Vector3d>(vel);
  v = Eigen::Map<const Eigen::Vector3d>(vel + 3);
}

void Engine::natural_state(Eigen::VectorXd& q, Eigen::VectorXd& v) const {
  mjModel* m = m_.get();
  mjData* d = d_.get();
  mj_kinematics(m, d);
  mj_comPos(m, d);
  mj_comVel(m, d);
  write_natural_state(model_, [this](int n, auto& r, auto& R, auto& w, auto& vel) { node_state(n, r, R, w, vel); }, q,
                      v);
}

std::string Engine::velocity_coordinates() const {
  const mjModel* m = m_.get();
  std::string out;
  for (size_t n = 0; n < body_id_.size(); ++n) {
    const int b = body_id_[n];
    for (int j = m->body_jntadr[b]; j >= 0 && j < m->body_jntadr[b] + m->body_jntnum[b]; ++j) {
      const char* what = "";
      switch (m->jnt_type[j]) {
        case mjJNT_FREE: what = "free: velocity and angular velocity"; break;
        case mjJNT_BALL: what = "ball: rotation vector, in its frame"; break;
        case mjJNT_SLIDE: what = "slide"; break;
        case mjJNT_HINGE: what = "hinge: angle"; break;
      }
      out += fmt::format(" {} ({}, dof {});", nodes_.name(static_cast<int>(n)), what, m->jnt_dofadr[j]);
    }
  }
  if (!out.empty()) out.pop_back();
  return out;
}

int mj_integrator(Integrator kind) {
  switch (kind) {
    case Integrator::kEuler: return mjINT_EULER;
    case Integrator::kRk4: return mjINT_RK4;
    case Integrator::kImplicit: return mjINT_IMPLICIT;
  }
  throw SolverError("mujoco: unknown integrator");
}

// The timed region is what a MuJoCo user calls to run a simulation: mj_resetData, the initial qvel,
// then mj_step to the end time (qpos0 is the initial configuration).
class MujocoSimulator final : public FixedStepSimulator {
 public:
  MujocoSimulator(const Model& model, Integrator kind, double h)
      : FixedStepSimulator(model, h), engine_(std::make_unique<Engine>(model)), kind_(kind) {
    if (!engine_->why().empty()) throw SolverError(engine_->why());
    engine_->m()->opt.integrator = mj_integrator(kind);
  }

 protected:
  void do_step_size_chosen(double h) override { engine_->m()->opt.timestep = h; }
  void do_initialize_state() override {
    mjData* d = engine_->d();
    mj_resetData(engine_->m(), d);
    mju_copy(d->qvel, engine_->qvel0().data(), engine_->m()->nv);
  }
  void do_fixed_step(double /*h*/) override {
    mjData* d = engine_->d();
    mj_step(engine_->m(), d);
    // mj_step resets the state to qpos0 when qpos, qvel or qacc turn bad, and only counts a warning.
    if (d->warning[mjWARN_BADQPOS].number + d->warning[mjWARN_BADQVEL].number + d->warning[mjWARN_BADQACC].number > 0)
      throw SolverError(fmt::format("mujoco: the state became non-finite or too large at t = {:.9g} s (MuJoCo reset it)",
                                    time()));
  }
  void do_model_state() override { engine_->natural_state(q_model_, v_model_); }
  void do_finish_run() override { stats_.rhs_evals = stats_.steps * (kind_ == Integrator::kRk4 ? 4 : 1); }

 private:
  std::unique_ptr<Engine> engine_;
  Integrator kind_;
};

// Linearization about a static equilibrium by MuJoCo's mjd_transitionFD: A = d x+ / d x, the
// centered-difference Jacobian of one mj_step about the initial configuration at rest, in MuJoCo's
// tangent state x = [dqpos; qvel] (2 nv: a ball joint's rotation vector and angular velocity in its
// body's frame, through mj_integratePos and mj_differentiatePos), and the eigenvalues mu of A turned
// into continuous ones s.
//
// Integrator: semi-implicit Euler, v+ = v + h qacc(q, v), q+ = q (+) h v+. About an equilibrium at
// rest the linearized motion is M y'' + K y = 0 (velocity terms are quadratic in v, and the adapter
// maps no damper), on which a step gives y+ - 2 y + y- = -h^2 M^-1 K y: a mode of s^2 = -omega^2 has
// mu + 1/mu - 2 = h^2 s^2, so s = (mu^1/2 - mu^-1/2) / h exactly (principal root; +-i omega when
// |mu| = 1, a real pair for an unstable mode), at any h with |omega h| < 2. Not RK4: log(mu) / h
// would be off by s^5 h^4 / 120, and MuJoCo 2.2.2's mjd_transitionFD differences RK4 wrongly (it
// skips the position stage for its velocity perturbations, reusing what the last RK4 stage of the
// previous perturbed step left in mjData: an O(h) error in s; docs/engines.md).
//
// Step and difference. Centered differences leave ~ omega^2 eps^2 / 6 in s (their truncation, the
// cubic term of g/l sin); rounding is relative to the perturbations themselves (every joint's qpos0
// is 0 or the identity quaternion), u eps, so it stays near u / h, and at most u / eps relative
// where positions of order 1 cancel. eps = 1e-6 puts both near 1e-12 1/s, six decades below the
// rule (1e-6 1/s); h = 1e-2 s (omega h = 0.03 on the pendulum) only has to keep |omega h| < 2. The
// adapter's point inertia (kPointInertia) lowers omega by its half, 5e-10 relative.
constexpr double kLinearizationStep = 1e-2;  // s
constexpr double kLinearizationEps = 1e-6;   // of the tangent state (rad, m, rad/s, m/s)
// Discrimination: a mode moves mass when x_q^* M x_q > kMassless |M|_F |x_q|^2 (x_q its position part,
// M MuJoCo's joint-space mass matrix at q0). A point mass's spin about its rod carries only the
// adapter's kPointInertia (1e-9 relative) and no stiffness: its eigenvalues sit at or near 0, and
// fail by three decades; every other mode of a rod-and-body tree moves a mass of the model.
constexpr double kMassless = 1e-6;
constexpr const char* kWhyTrue = "true: moves mass";
constexpr const char* kWhySpurious = "spurious: moves no mass (a point mass's spin about its rod)";
constexpr const char* kWhyInfinite = "infinite: mu = 0";

// A, its eigen-decomposition and M, sized at setup: Max = the fixed maximum size or Eigen::Dynamic.
template <int Max>
struct Transition {
  using Mat = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::ColMajor, Max, Max>;
  Transition(int n, int nv) : A(Mat::Zero(n, n)), M(Mat::Zero(nv, nv)), eig(n) {}
  Mat A, M;
  Eigen::EigenSolver<Mat> eig;
};

class MujocoLinearizer final : public Linearizer {
 public:
  explicit MujocoLinearizer(const Model& model) : engine_(std::make_unique<Engine>(model)) {
    if (!engine_->why().empty()) throw SolverError(engine_->why());
    mjModel* m = engine_->m();
    mjData* d = engine_->d();
    m->opt.integrator = mjINT_EULER;
    m->opt.timestep = kLinearizationStep;
    nv_ = m->nv;
    n_ = 2 * nv_;
    a_.assign(static_cast<size_t>(n_) * n_, 0.0);
    if (n_ <= 2 * LinearModes::kSmall) small_ = std::make_unique<Transition<2 * LinearModes::kSmall>>(n_, nv_);
    else dynamic_ = std::make_unique<Transition<Eigen::Dynamic>>(n_, nv_);
    roots_.resize(n_);
    // The scale of the generalized gravity force, as recursive's: |g| |J_m|_F with J_m = sum_k m_k
    // J_k, J_k body k's centroid Jacobian at q0 (tau = -J_m^T g; off the equilibrium by an angle a,
    // |tau| / scale ~ a).
    mj_resetData(m, d);
    mj_forward(m, d);
    std::vector<mjtNum> jac(3 * static_cast<size_t>(nv_));
    Eigen::MatrixXd Jm = Eigen::MatrixXd::Zero(3, nv_);
    for (int b = 1; b < m->nbody; ++b) {
      mj_jacBodyCom(m, d, jac.data(), nullptr, b);
      for (int r = 0; r < 3; ++r)
        for (int c = 0; c < nv_; ++c) Jm(r, c) += m->body_mass[b] * jac[r * nv_ + c];
    }
    scale_ = Eigen::Vector3d(m->opt.gravity[0], m->opt.gravity[1], m->opt.gravity[2]).norm() * Jm.norm();
    lin_.coordinates = fmt::format(
        "MuJoCo's tangent state [dqpos; qvel] (2 nv = {}), velocity coordinates:{}; s from the eigenvalues mu of "
        "mjd_transitionFD's A (semi-implicit Euler, h = {:g} s, centered differences of {:g}) as s = (mu^1/2 - "
        "mu^-1/2) / h, exact for that integrator on M y'' + K y = 0",
        n_, engine_->velocity_coordinates(), kLinearizationStep, kLinearizationEps);
    lin_.rule = fmt::format(
        "true when its mode moves mass, x_q^* M x_q > {:g} |M|_F |x_q|^2 (x_q its position part, M MuJoCo's mass "
        "matrix at q0): a point mass's spin about its rod, with the adapter's inertia {:g} m L^2 and no stiffness "
        "(s ~ 0), is spurious",
        kMassless, kPointInertia);
    lin_.terms = {{"A", Eigen::MatrixXd::Zero(n_, n_)}, {"M", Eigen::MatrixXd::Zero(nv_, nv_)}};
    lin_.eigenvalues.resize(n_);
    for (Eigenvalue& e : lin_.eigenvalues) e.why.reserve(std::strlen(kWhySpurious));  // the longest: no allocation later
  }

  const Linearization& linearize() override { return small_ ? run(*small_) : run(*dynamic_); }

 private:
  struct Root {
    std::complex<double> s;
    double magnitude;
    double mass;  // x_q^* M x_q / (|M|_F |x_q|^2)
  };

  template <class T>
  const Linearization& run(T& t) {
    mjModel* m = engine_->m();
    mjData* d = engine_->d();
    // From qpos0 (the initial configuration) at rest, whatever a previous call left in d: the state
    // mjd_transitionFD reads, set directly (mj_resetData would also clear mjData's whole stack, 10 MB
    // here, ten times the linearization's own time).
    mju_copy(d->qpos, m->qpos0, m->nq);
    mju_zero(d->qvel, nv_);
    mju_zero(d->qacc_warmstart, nv_);
    mju_zero(d->act, m->na);
    mju_zero(d->ctrl, m->nu);
    d->time = 0.0;
    for (mjWarningStat& w : d->warning) w = mjWarningStat{};
    mj_forward(m, d);
    double tau2 = 0.0;
    for (int k = 0; k < nv_; ++k) tau2 += std::pow(d->qfrc_bias[k] - d->qfrc_passive[k], 2);
    const double residual = scale_ > 0.0 ? std::sqrt(tau2) / scale_ : std::sqrt(tau2);
    if (!(residual <= NaturalEquilibrium::kEquilibriumTol))
      throw SolverError(fmt::format(
          "mujoco: the initial configuration is not a static equilibrium (|tau| = {:.3g} |g| |J_m| > {:g} |g| |J_m|)",
          residual, NaturalEquilibrium::kEquilibriumTol));
    mj_fullM(m, a_.data(), d->qM);  // row-major, symmetric
    for (int r = 0; r < nv_; ++r)
      for (int c = 0; c < nv_; ++c) t.M(r, c) = a_[r * nv_ + c];
    mjd_transitionFD(m, d, kLinearizationEps, 1, a_.data(), nullptr, nullptr, nullptr);
    if (d->warning[mjWARN_BADQPOS].number + d->warning[mjWARN_BADQVEL].number + d->warning[mjWARN_BADQACC].number > 0)
      throw SolverError("mujoco: a perturbed step of mjd_transitionFD became non-finite (MuJoCo reset it)");
    for (int r = 0; r < n_; ++r)
      for (int c = 0; c < n_; ++c) t.A(r, c) = a_[r * n_ + c];  // row-major
    t.eig.compute(t.A, true);
    if (t.eig.info() != Eigen::Success) throw SolverError("mujoco: the eigenvalues of A did not converge");
    const auto& mu = t.eig.eigenvalues();
    const auto& V = t.eig.pseudoEigenvectors();  // a complex pair's vector is col(k) + i col(k + 1)
    const double M_norm = t.M.norm();
    for (int k = 0; k < n_; ++k) {
      const bool pair = mu[k].imag() != 0.0;
      double energy = 0.0, norm2 = 0.0;
      for (int part = 0; part < (pair ? 2 : 1); ++part) {
        const int col = k + part;
        for (int r = 0; r < nv_; ++r) {
          norm2 += V(r, col) * V(r, col);
          for (int c = 0; c < nv_; ++c) energy += V(r, col) * t.M(r, c) * V(c, col);
        }
      }
      const double mass = norm2 > 0.0 && M_norm > 0.0 ? energy / (M_norm * norm2) : 0.0;
      for (int part = 0; part < (pair ? 2 : 1); ++part) {
        const std::complex<double> root = std::sqrt(mu[k + part]);
        const std::complex<double> s = (root - 1.0 / root) / kLinearizationStep;
        roots_[k + part] = {s, std::abs(s), mass};
      }
      if (pair) ++k;
    }
    sort_by_magnitude(roots_);
    for (int i = 0; i < n_; ++i) {
      Eigenvalue& e = lin_.eigenvalues[i];
      const Root& r = roots_[i];
      e.s = r.s;
      e.finite = std::isfinite(r.s.real()) && std::isfinite(r.s.imag());
      e.is_true = e.finite && r.mass > kMassless;
      e.why = !e.finite ? kWhyInfinite : e.is_true ? kWhyTrue : kWhySpurious;
    }
    lin_.terms[0].second = t.A;
    lin_.terms[1].second = t.M;
    return lin_;
  }

  std::unique_ptr<Engine> engine_;
  int nv_ = 0, n_ = 0;
  double scale_ = 0.0;
  std::vector<mjtNum> a_;  // A (n x n) or M (nv x nv), row-major, as MuJoCo writes them
  std::unique_ptr<Transition<2 * LinearModes::kSmall>> small_;
  std::unique_ptr<Transition<Eigen::Dynamic>> dynamic_;
  std::vector<Root> roots_;
  Linearization lin_;
};

}  // namespace

std::string unsupported_reason(const Model& model) {
  try {
    return Engine(model).why();
  } catch (const std::exception& e) {
    return fmt::format("MuJoCo rejected the model: {}", e.what());
  }
}

std::unique_ptr<Simulator> create_simulator(const Model& model, Integrator integrator, double h) {
  return std::make_unique<MujocoSimulator>(model, integrator, h);
}

std::unique_ptr<Linearizer> create_linearizer(const Model& model) { return std::make_unique<MujocoLinearizer>(model); }

}  // namespace mbs::mujoco
