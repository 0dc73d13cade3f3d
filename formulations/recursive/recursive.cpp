// Formulation "recursive": joint coordinates for any kinematic tree (spatial_tree.hpp), forward
// dynamics by the articulated-body algorithm (aba-*, O(N)) or by the composite-rigid-body
// algorithm with a tree-sparse L^T D L of the joint-space mass matrix (crba-*, O(N d^2)), integrated
// by minimal's explicit Runge-Kutta methods (common/explicit_rk.hpp), and by Dormand & Prince's
// 8th-order method of DOP853 at a fixed step (*-dop853-fixed, as projection's: a smooth motion whose
// step is set by accuracy takes long steps at 8th order without an error estimate's stages). On a
// planar tree ABA runs on planar 3-vectors (spatial_tree.hpp). Frictionless point-plane contacts on
// the tree's points are events as in minimal (common/contact_events.hpp, tree_contacts.hpp). Force
// elements of every kind act as external forces on the tree's bodies (their natural-coordinate Q
// mapped by virtual work); bodies not joined to ground float on free roots (a free rigid body:
// 6 DOF, position + unit quaternion).
//
// Quaternions (spherical joints, spatial rods) are integrated as ordinary state components,
// q' = 1/2 q (x) (0, omega), and renormalized after every accepted step; within a step the joint
// rotation is read from q / |q|, so every stage sees an exact rotation. The exact flow keeps |q|,
// so the drift renormalized away is the method's own local error (tests/test_recursive.cpp checks
// that energy and a conical pendulum's cone angle converge at the method's order).
//
// A sibling of `minimal` rather than cases of it: a formulation declares what it accepts once
// (Formulation::accepts, unsupported_reason), and this engine accepts revolute, prismatic and fixed
// joints, spatial rods and free bodies that minimal's cases do not; as cases of one formulation
// either set would end as `error` rows on the other's problems instead of `unsupported` with a reason.
//
// Linearization about a static equilibrium: in the tree's velocity coordinates as tangent
// increments, M = H(q0) by CRBA and the gravity stiffness K analytic (linearizer.cpp).
#include <fmt/format.h>

#include "common/contact_events.hpp"
#include "common/explicit_rk.hpp"
#include "core/formulation.hpp"
#include "recursive/linearizer.hpp"
#include "recursive/spatial_tree.hpp"
#include "recursive/tree_contacts.hpp"

namespace mbs::recursive {
namespace {

enum class Algorithm { kAba, kCrba };

class TreeOde {
 public:
  using State = Eigen::VectorXd;
  TreeOde(const Model& model, const SpatialTree& tree, Algorithm algorithm)
      : tree_(tree), algorithm_(algorithm), contacts_(model, tree),
        ws_(tree, algorithm == Algorithm::kCrba || contacts_.active()), forces_(tree, model), cdy_(size()) {}
  int size() const { return tree_.nq + tree_.nv; }
  void rhs(double /*t*/, const State& y, State& dydt) {
    const auto q = y.head(tree_.nq);
    const auto v = y.tail(tree_.nv);
    configuration_rate(tree_, q, v, dydt.head(tree_.nq));
    const BodyForces* f_ext = forces_.empty() ? nullptr : &forces_.evaluate(q, v, ws_);
    if (algorithm_ == Algorithm::kAba) aba(tree_, q, v, ws_, dydt.tail(tree_.nv), f_ext);
    else crba(tree_, q, v, ws_, dydt.tail(tree_.nv), f_ext);
    if (contacts_.num_closed() != 0) contacts_.constrain(q, v, ws_, dydt.tail(tree_.nv));
  }

  // The contact interface of common/contact_events.hpp (tree_contacts.hpp does the mechanics).
  ContactSet& contact_set() { return contacts_.set(); }
  void contact_state(const State& y, Eigen::VectorXd& gap, Eigen::VectorXd& vn) {
    contacts_.state(y.head(tree_.nq), y.tail(tree_.nv), ws_, gap, vn);
  }
  void closed_forces(const State& y, Eigen::VectorXd& force) {
    rhs(0.0, y, cdy_);
    contacts_.closed_forces(force);
  }
  void apply_impulses(State& y, const std::vector<int>& idx, const std::vector<char>& eq, const Eigen::VectorXd& e, int k,
                      Eigen::VectorXd& impulse, Eigen::VectorXd& vn_after) {
    contacts_.apply_impulses(y.head(tree_.nq), y.tail(tree_.nv), ws_, idx, eq, e, k, impulse, vn_after);
  }
  void initial_state(State& y) const {
    y.head(tree_.nq) = tree_.q0;
    y.tail(tree_.nv) = tree_.v0;
  }
  void finish_step(State& y) const { normalize(tree_, y.head(tree_.nq)); }
  void model_state(const Model& model, const State& y, Eigen::VectorXd& qn, Eigen::VectorXd& vn) {
    recursive::model_state(tree_, model, y.head(tree_.nq), y.tail(tree_.nv), ws_, qn, vn);
  }

 private:
  const SpatialTree& tree_;
  Algorithm algorithm_;
  TreeContacts contacts_;
  TreeWorkspace ws_;
  TreeForces forces_;  // the force elements (none: nothing evaluated)
  State cdy_;  // closed_forces' right-hand side
};

// Fixed-step cases: Method is Rk4<TreeOde> or FixedButcherRk<TreeOde> (its table after the ODE).
template <class Method>
class FixedSimulator final : public FixedStepSimulator {
 public:
  template <class... Table>
  FixedSimulator(const Model& model, SpatialTree tree, Algorithm algorithm, double h, const Table&... table)
      : FixedStepSimulator(model, h), tree_(std::move(tree)), ode_(model, tree_, algorithm), rk_(ode_, table...),
        y_(ode_.size()), events_(ode_, model) {}

 private:
  void do_initialize_state() override {
    ode_.initial_state(y_);
    events_.reset();
  }
  void do_fixed_step(double h) override {
    if (events_.active()) {
      contact_step(h);
      return;
    }
    rk_.step(time(), h, y_, stats_);
    ode_.finish_step(y_);
  }
  EIGEN_DONT_INLINE void contact_step(double h) {
    fixed_step_with_events(events_, "recursive", time(), h, y_, [this](double t0, double dt, Eigen::VectorXd& y) {
      rk_.step(t0, dt, y, stats_);
      ode_.finish_step(y);
    });
  }
  void do_model_state() override { ode_.model_state(*model_, y_, q_model_, v_model_); }

  SpatialTree tree_;
  TreeOde ode_;
  Method rk_;
  Eigen::VectorXd y_;
  ContactEvents<TreeOde> events_;
};

class ErkSimulator final : public Simulator {
 public:
  ErkSimulator(const Model& model, SpatialTree tree, Algorithm algorithm, const ButcherTable& table, double tol)
      : Simulator(model), tree_(std::move(tree)), ode_(model, tree_, algorithm), rk_(ode_, table, tol, tol), y_(ode_.size()),
        events_(ode_, model), single_(ode_, table) {}

 private:
  void do_initialize(double /*t_end*/) override {
    ode_.initial_state(y_);
    events_.reset();
    t_ = 0.0;
    rk_.initialize(t_, y_, stats_);
  }
  void do_step(double t_end) override {
    if (events_.active()) {
      contact_step(t_end);
      return;
    }
    rk_.step(t_, y_, t_end, stats_);
    ode_.finish_step(y_);
  }
  EIGEN_DONT_INLINE void contact_step(double t_end) {
    adaptive_step_with_events(
        events_, "recursive", t_, y_,
        [&] {
          rk_.step(t_, y_, t_end, stats_);
          ode_.finish_step(y_);
        },
        [this](double ts, double dt, const Eigen::VectorXd& y0, Eigen::VectorXd& out) {
          out = y0;
          single_.step(ts, dt, out, stats_);
          ode_.finish_step(out);
        },
        [this] { rk_.initialize(t_, y_, stats_); });
  }
  double do_time() const override { return t_; }
  void do_model_state() override { ode_.model_state(*model_, y_, q_model_, v_model_); }

  SpatialTree tree_;
  TreeOde ode_;
  EmbeddedRk<TreeOde> rk_;
  Eigen::VectorXd y_;
  ContactEvents<TreeOde> events_;
  FixedButcherRk<TreeOde> single_;  // one step of the pair's propagating method, for event location
  double t_ = 0.0;
};

class Recursive final : public Formulation {
 public:
  std::string name() const override { return "recursive"; }
  std::string description() const override {
    return "joint coordinates for kinematic trees (spatial vectors, quaternion spherical joints); ABA or CRBA + tree-sparse LTDL";
  }
  std::vector<IntegratorInfo> integrators() const override {
    return {
        {"aba-rk4", SettingKind::kFixedStep, 0.5, 1e-5, "articulated-body algorithm; classical Runge-Kutta, fixed step", ""},
        {"aba-dopri5", SettingKind::kTolerance, 1e-2, 1e-13, "articulated-body algorithm; Dormand-Prince 5(4), adaptive", ""},
        {"aba-fehlberg8", SettingKind::kTolerance, 1e-2, 1e-13, "articulated-body algorithm; Fehlberg 8(7), adaptive", ""},
        {"aba-dop853-fixed", SettingKind::kFixedStep, 0.5, 1e-5,
         "articulated-body algorithm; Dormand-Prince's 8th-order method of DOP853 (12 stages), fixed step", ""},
        {"crba-rk4", SettingKind::kFixedStep, 0.5, 1e-5, "CRBA + tree-sparse L^T D L; classical Runge-Kutta, fixed step", ""},
        {"crba-dopri5", SettingKind::kTolerance, 1e-2, 1e-13, "CRBA + tree-sparse L^T D L; Dormand-Prince 5(4), adaptive", ""},
        {"crba-fehlberg8", SettingKind::kTolerance, 1e-2, 1e-13, "CRBA + tree-sparse L^T D L; Fehlberg 8(7), adaptive", ""},
        {"crba-dop853-fixed", SettingKind::kFixedStep, 0.5, 1e-5,
         "CRBA + tree-sparse L^T D L; Dormand-Prince's 8th-order method of DOP853 (12 stages), fixed step", ""},
    };
  }
  // Joints and contacts by kind (each is a tree joint or an event on a tree point of its own), force
  // elements of any kind (their Q in natural coordinates is mapped onto the tree's bodies by virtual
  // work, TreeForces).
  Accepts accepts() const override {
    return {{ElementRole::kForce}, {"rod", "spherical", "revolute", "prismatic", "fixed", "point_plane"}};
  }
  std::string structure_unsupported_reason(const Model& model) const override {
    SpatialTree tree;
    if (std::string why = build_spatial_tree(model, tree); !why.empty()) return why;
    if (!TreeContacts(model, tree).mapped()) return "a contact's point is not a point of the tree";
    return "";
  }
  std::string linearization_unsupported_reason(const Model& model) const override {
    return linearizer_unsupported_reason(model);
  }
  std::unique_ptr<Linearizer> create_linearizer(const Model& model) const override { return make_linearizer(model); }
  std::unique_ptr<Simulator> create(const Model& model, const std::string& integrator, double setting) const override {
    SpatialTree tree;
    if (const std::string why = build_spatial_tree(model, tree); !why.empty()) throw SolverError(why);
    const auto dash = integrator.find('-');
    if (dash == std::string::npos) throw SolverError(fmt::format("recursive: unknown integrator {}", integrator));
    const std::string algo = integrator.substr(0, dash), method = integrator.substr(dash + 1);
    Algorithm algorithm;
    if (algo == "aba") algorithm = Algorithm::kAba;
    else if (algo == "crba") algorithm = Algorithm::kCrba;
    else throw SolverError(fmt::format("recursive: unknown algorithm {}", algo));
    if (method == "rk4") return std::make_unique<FixedSimulator<Rk4<TreeOde>>>(model, std::move(tree), algorithm, setting);
    if (method == "dop853-fixed")
      return std::make_unique<FixedSimulator<FixedButcherRk<TreeOde>>>(model, std::move(tree), algorithm, setting,
                                                                      ButcherTable::dop853());
    return std::make_unique<ErkSimulator>(model, std::move(tree), algorithm, ButcherTable::from_arkode(method), setting);
  }
};

}  // namespace

MBS_REGISTER_FORMULATION(Recursive);

}  // namespace mbs::recursive
