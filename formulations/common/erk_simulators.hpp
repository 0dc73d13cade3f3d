// The simulators of every formulation that integrates an ODE by an explicit Runge-Kutta method
// (minimal, recursive, projection / unprojected / baumgarte, partitioned): one fixed-step and one
// adaptive simulator over the formulation's ODE, with contacts as events and the work after a step,
// so that a formulation declares its ODE and its cases (integrator_table.hpp) and nothing else.
//
// The ODE (everything sized in its constructor; nothing allocates after it):
//   Ode(const Model& model, Args...)  or  Ode(const Model& model, RunStats& stats, Args...)
//                                    // stats: the simulator's counters (Newton iterations, Jacobians)
//   using State = Eigen::Matrix<double, S, 1>;   // S fixed or Eigen::Dynamic
//   int size() const;
//   void rhs(double t, const State& y, State& dydt);
//   void initial_state(State& y);                 // at the start of every run
//   void model_state(const State& y, Eigen::VectorXd& q, Eigen::VectorXd& v);  // natural coordinates
// and, where it needs them (found at compile time):
//   void finish_step(double t, State& y);         // after every step ending at t, the trial steps of
//                                                 // event location too (a projection, a renormalization)
//   bool change_coordinates(double t, State& y);  // after every accepted step: true when y is now in
//                                                 // other coordinates (an FSAL pair then drops its stage)
//   void anchor();                                // after every accepted adaptive step: where a
//                                                 // StageFailure's retry starts from
//   static constexpr bool kContacts = true;       // contacts as events: the ODE interface of
//                                                 // contact_events.hpp, and const char* name() const
//                                                 // (the formulation, for errors)
// Formulation-specific reports (ProjectionRun, PartitionedRun) wrap a simulator in a class
// template Run<Sim> that reads Sim::ode(); make_erk_simulator<Ode, Run> builds it.
#pragma once

#include <Eigen/Dense>
#include <memory>
#include <type_traits>
#include <utility>

#include "common/contact_events.hpp"
#include "common/explicit_rk.hpp"
#include "common/integrator_table.hpp"
#include "core/formulation.hpp"

namespace mbs {
namespace erk_detail {

template <class Ode, class = void>
struct HasContacts : std::false_type {};
template <class Ode>
struct HasContacts<Ode, std::enable_if_t<Ode::kContacts>> : std::true_type {};
template <class Ode, class = void>
struct HasFinish : std::false_type {};
template <class Ode>
struct HasFinish<Ode, std::void_t<decltype(std::declval<Ode&>().finish_step(0.0, std::declval<typename Ode::State&>()))>>
    : std::true_type {};
template <class Ode, class = void>
struct HasChange : std::false_type {};
template <class Ode>
struct HasChange<Ode, std::void_t<decltype(std::declval<Ode&>().change_coordinates(0.0, std::declval<typename Ode::State&>()))>>
    : std::true_type {};
template <class Ode, class = void>
struct HasAnchor : std::false_type {};
template <class Ode>
struct HasAnchor<Ode, std::void_t<decltype(std::declval<Ode&>().anchor())>> : std::true_type {};

// In place of the contact members of an ODE without contacts.
struct Nothing {
  template <class... A>
  explicit Nothing(A&&...) {}
};

template <class Ode, class... Args>
Ode make_ode(const Model& model, RunStats& stats, Args&&... args) {
  if constexpr (std::is_constructible_v<Ode, const Model&, RunStats&, Args&&...>)
    return Ode(model, stats, std::forward<Args>(args)...);
  else
    return Ode(model, std::forward<Args>(args)...);
}

template <template <class> class Stepper, class Ode>
Stepper<Ode> make_stepper(Ode& ode, const ButcherTable& table) {
  if constexpr (std::is_constructible_v<Stepper<Ode>, Ode&, const ButcherTable&>) return Stepper<Ode>(ode, table);
  else return Stepper<Ode>(ode);
}

}  // namespace erk_detail

// What an ODE declares (file comment).
template <class Ode>
struct ErkOdeHooks {
  static constexpr bool kContacts = erk_detail::HasContacts<Ode>::value;
  static constexpr bool kFinish = erk_detail::HasFinish<Ode>::value;
  static constexpr bool kChange = erk_detail::HasChange<Ode>::value;
  static constexpr bool kAnchor = erk_detail::HasAnchor<Ode>::value;
  static_assert(!(kContacts && (kChange || kAnchor)), "contacts with changing coordinates or retries: not implemented");
};

// Fixed step: Stepper is Rk4 or FixedButcherRk (with `table`).
template <class Ode, template <class> class Stepper>
class ErkFixedSimulator : public FixedStepSimulator {
 public:
  using State = typename Ode::State;
  template <class... Args>
  ErkFixedSimulator(const Model& model, double h, const ButcherTable& table, Args&&... ode_args)
      : FixedStepSimulator(model, h), ode_(erk_detail::make_ode<Ode>(model, stats_, std::forward<Args>(ode_args)...)),
        rk_(erk_detail::make_stepper<Stepper>(ode_, table)), y_(ode_.size()), events_(ode_, model) {}

  Ode& ode() { return ode_; }
  const Ode& ode() const { return ode_; }

 private:
  using Hooks = ErkOdeHooks<Ode>;

  void do_initialize_state() override {
    ode_.initial_state(y_);
    if constexpr (Hooks::kContacts) events_.reset();
  }
  void do_fixed_step(double h) override {
    if constexpr (Hooks::kContacts) {
      if (events_.active()) {
        contact_step(h);
        return;
      }
    }
    rk_.step(time(), h, y_, stats_);
    if constexpr (Hooks::kFinish) ode_.finish_step(time() + h, y_);
    if constexpr (Hooks::kChange) ode_.change_coordinates(time() + h, y_);
  }
  // With contacts (common/contact_events.hpp); every trial step of the event location is finished
  // as a step is. Out of line, so that the plain step above compiles as it does without contacts.
  EIGEN_DONT_INLINE void contact_step(double h) {
    fixed_step_with_events(events_, ode_.name(), time(), h, y_, [this](double t0, double dt, State& y) {
      rk_.step(t0, dt, y, stats_);
      if constexpr (Hooks::kFinish) ode_.finish_step(t0 + dt, y);
    });
  }
  void do_model_state() override { ode_.model_state(y_, q_model_, v_model_); }

  Ode ode_;
  Stepper<Ode> rk_;
  State y_;
  std::conditional_t<Hooks::kContacts, ContactEvents<Ode>, erk_detail::Nothing> events_;
};

// Adaptive: an embedded pair at rtol = atol = tol.
template <class Ode>
class ErkAdaptiveSimulator : public Simulator {
 public:
  using State = typename Ode::State;
  template <class... Args>
  ErkAdaptiveSimulator(const Model& model, double tol, const ButcherTable& table, Args&&... ode_args)
      : Simulator(model), ode_(erk_detail::make_ode<Ode>(model, stats_, std::forward<Args>(ode_args)...)),
        rk_(ode_, table, tol, tol), y_(ode_.size()), events_(ode_, model), single_(ode_, table), fsal_(table.fsal) {}

  Ode& ode() { return ode_; }
  const Ode& ode() const { return ode_; }

 private:
  using Hooks = ErkOdeHooks<Ode>;

  void do_initialize(double /*t_end*/) override {  // steps are clipped to t_end in do_step
    t_ = 0.0;
    ode_.initial_state(y_);
    if constexpr (Hooks::kContacts) events_.reset();
    rk_.initialize(t_, y_, stats_);
  }
  void do_step(double t_end) override {
    if constexpr (Hooks::kContacts) {
      if (events_.active()) {
        contact_step(t_end);
        return;
      }
    }
    rk_.step(t_, y_, t_end, stats_);
    if constexpr (Hooks::kFinish) ode_.finish_step(t_, y_);  // an FSAL stage is kept (projection.cpp)
    if constexpr (Hooks::kAnchor) ode_.anchor();
    if constexpr (Hooks::kChange) {
      if (ode_.change_coordinates(t_, y_) && fsal_) rk_.initialize(t_, y_, stats_);
    }
  }
  // With contacts (common/contact_events.hpp): a step ends at an impact, located by single steps of
  // the pair's propagating method; each finished as a step is.
  EIGEN_DONT_INLINE void contact_step(double t_end) {
    adaptive_step_with_events(
        events_, ode_.name(), t_, y_,
        [&] {
          rk_.step(t_, y_, t_end, stats_);
          if constexpr (Hooks::kFinish) ode_.finish_step(t_, y_);
        },
        [this](double ts, double dt, const State& y0, State& out) {
          out = y0;
          single_.step(ts, dt, out, stats_);
          if constexpr (Hooks::kFinish) ode_.finish_step(ts + dt, out);
        },
        [this] { rk_.initialize(t_, y_, stats_); });
  }
  double do_time() const override { return t_; }
  void do_model_state() override { ode_.model_state(y_, q_model_, v_model_); }

  Ode ode_;
  EmbeddedRk<Ode> rk_;
  State y_;
  std::conditional_t<Hooks::kContacts, ContactEvents<Ode>, erk_detail::Nothing> events_;
  std::conditional_t<Hooks::kContacts, FixedButcherRk<Ode>, erk_detail::Nothing> single_;  // for event location
  bool fsal_;  // the pair carries its last stage into the next step
  double t_ = 0.0;
};

// No report beyond RunStats: the simulator itself.
template <class Sim>
using PlainRun = Sim;

// The simulator of case `c` at `setting` for an ODE built from (model[, stats], ode_args...).
template <class Ode, template <class> class Run = PlainRun, class... Args>
std::unique_ptr<Simulator> make_erk_simulator(const ErkCase& c, const Model& model, double setting, Args&&... ode_args) {
  const ErkMethod& m = *c.method;
  const ButcherTable table = m.table != nullptr ? m.table() : ButcherTable{};
  switch (m.stepper) {
    case ErkStepper::kRk4:
      return std::make_unique<Run<ErkFixedSimulator<Ode, Rk4>>>(model, setting, table, std::forward<Args>(ode_args)...);
    case ErkStepper::kButcherFixed:
      return std::make_unique<Run<ErkFixedSimulator<Ode, FixedButcherRk>>>(model, setting, table,
                                                                           std::forward<Args>(ode_args)...);
    case ErkStepper::kEmbedded:
      break;
  }
  return std::make_unique<Run<ErkAdaptiveSimulator<Ode>>>(model, setting, table, std::forward<Args>(ode_args)...);
}

}  // namespace mbs
