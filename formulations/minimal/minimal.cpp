// Formulation "minimal": joint (minimal) coordinates from the model's joint tree, as an ODE
// integrated by fixed-step RK4 or DOP853's 8th-order method, or by adaptive embedded Runge-Kutta
// pairs. Frictionless point-plane contacts are events: located impacts with Newton's law,
// persistent contacts as bilateral constraints (common/contact_events.hpp). A model without
// contacts takes exactly the plain paths.
#include <fmt/format.h>

#include "common/contact_events.hpp"
#include "common/explicit_rk.hpp"
#include "core/formulation.hpp"
#include "minimal/hinge.hpp"
#include "minimal/joint_tree.hpp"
#include "minimal/linearizer.hpp"
#include "minimal/minimal_ode.hpp"

namespace mbs::minimal {
namespace {

// Fixed step: Stepper is Rk4 or FixedButcherRk (the extra arguments: its table).
template <int N, int NQ, template <class> class Stepper>
class FixedSimulator final : public FixedStepSimulator {
 public:
  using Ode = MinimalOde<N, NQ>;
  template <typename... Args>
  FixedSimulator(const Model& model, JointTree tree, double h, Args&&... args)
      : FixedStepSimulator(model, h), tree_(std::move(tree)), ode_(model, tree_), rk_(ode_, std::forward<Args>(args)...),
        y_(ode_.size()), events_(ode_, model) {}

 private:
  void do_initialize_state() override {
    ode_.initial_state(*model_, y_);
    events_.reset();
  }
  void do_fixed_step(double h) override {
    if (events_.active()) {
      contact_step(h);
      return;
    }
    rk_.step(time(), h, y_, stats_);
  }
  // With contacts (common/contact_events.hpp). Out of line, so that the plain step above compiles as
  // it did without contacts.
  EIGEN_DONT_INLINE void contact_step(double h) {
    fixed_step_with_events(events_, "minimal", time(), h, y_,
                           [this](double t0, double dt, State& y) { rk_.step(t0, dt, y, stats_); });
  }
  void do_model_state() override { ode_.model_state(y_, q_model_, v_model_); }

  using State = typename Ode::State;
  JointTree tree_;
  Ode ode_;
  Stepper<Ode> rk_;
  State y_;
  ContactEvents<Ode> events_;
};

template <int N, int NQ>
class ErkSimulator final : public Simulator {
 public:
  using Ode = MinimalOde<N, NQ>;
  ErkSimulator(const Model& model, JointTree tree, const ButcherTable& table, double tol)
      : Simulator(model), tree_(std::move(tree)), ode_(model, tree_), rk_(ode_, table, tol, tol), y_(ode_.size()),
        events_(ode_, model), single_(ode_, table) {}

 private:
  void do_initialize(double /*t_end*/) override {  // adaptive: steps are clipped to t_end in do_step
    ode_.initial_state(*model_, y_);
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
  }
  // With contacts (common/contact_events.hpp).
  EIGEN_DONT_INLINE void contact_step(double t_end) {
    adaptive_step_with_events(
        events_, "minimal", t_, y_, [&] { rk_.step(t_, y_, t_end, stats_); },
        [this](double ts, double dt, const State& y0, State& out) {
          out = y0;
          single_.step(ts, dt, out, stats_);
        },
        [this] { rk_.initialize(t_, y_, stats_); });
  }
  double do_time() const override { return t_; }
  void do_model_state() override { ode_.model_state(y_, q_model_, v_model_); }

  using State = typename Ode::State;
  JointTree tree_;
  Ode ode_;
  EmbeddedRk<Ode> rk_;
  State y_;
  ContactEvents<Ode> events_;
  FixedButcherRk<Ode> single_;  // one step of the pair's propagating method, for event location
  double t_ = 0.0;
};

template <int N, int NQ>
using Rk4Simulator = FixedSimulator<N, NQ, Rk4>;
template <int N, int NQ>
using Rk8Simulator = FixedSimulator<N, NQ, FixedButcherRk>;

// Fixed sizes for the smallest planar systems, dynamic sizes otherwise.
template <template <int, int> class Sim, typename... Args>
std::unique_ptr<Simulator> make_sized(const Model& model, JointTree tree, Args&&... args) {
  if (tree.ndof == 1 && model.nq() == 2)
    return std::make_unique<Sim<1, 2>>(model, std::move(tree), std::forward<Args>(args)...);
  if (tree.ndof == 2 && model.nq() == 4)
    return std::make_unique<Sim<2, 4>>(model, std::move(tree), std::forward<Args>(args)...);
  return std::make_unique<Sim<Eigen::Dynamic, Eigen::Dynamic>>(model, std::move(tree), std::forward<Args>(args)...);
}

class Minimal final : public Formulation {
 public:
  std::string name() const override { return "minimal"; }
  std::string description() const override {
    return "joint (minimal) coordinates from the joint tree; ODE by velocity transformation";
  }
  std::vector<IntegratorInfo> integrators() const override {
    return {
        {"rk4", SettingKind::kFixedStep, 0.5, 1e-5, "classical Runge-Kutta, fixed step", ""},
        {"dop853-fixed", SettingKind::kFixedStep, 0.5, 1e-5,
         "Dormand-Prince's 8th-order method of DOP853 (12 stages) at a fixed step", ""},
        {"dopri5", SettingKind::kTolerance, 1e-2, 1e-13, "Dormand-Prince 5(4), adaptive (ARKODE's table)", ""},
        {"fehlberg8", SettingKind::kTolerance, 1e-2, 1e-13, "Fehlberg 8(7), 13 stages, adaptive (ARKODE's table)",
         ""},
    };
  }
  // Joint coordinates are built from the kinds themselves: only those it knows.
  Accepts accepts() const override { return {{}, {"rod", "spherical", "point_plane"}}; }
  std::string structure_unsupported_reason(const Model& model) const override {
    if (!model.bodies.empty()) {  // a rigid body: only one hinged to the ground
      Hinge hinge;
      return build_hinge(model, hinge);
    }
    JointTree tree;
    return build_joint_tree(model, tree);
  }
  std::unique_ptr<Simulator> create(const Model& model, const std::string& integrator, double setting) const override {
    if (!model.bodies.empty()) {
      Hinge hinge;
      if (const std::string why = build_hinge(model, hinge); !why.empty()) throw SolverError(why);
      return make_hinge_simulator(model, hinge, integrator, setting);
    }
    JointTree tree;
    if (const std::string why = build_joint_tree(model, tree); !why.empty()) throw SolverError(why);
    if (integrator == "rk4") return make_sized<Rk4Simulator>(model, std::move(tree), setting);
    if (integrator == "dop853-fixed")
      return make_sized<Rk8Simulator>(model, std::move(tree), setting, ButcherTable::dop853());
    const ButcherTable table = ButcherTable::from_arkode(integrator);
    return make_sized<ErkSimulator>(model, std::move(tree), table, setting);
  }
  std::string linearization_unsupported_reason(const Model& model) const override {
    return linearizer_unsupported_reason(model);
  }
  std::unique_ptr<Linearizer> create_linearizer(const Model& model) const override { return make_linearizer(model); }
};

}  // namespace

MBS_REGISTER_FORMULATION(Minimal);

}  // namespace mbs::minimal
