// What a formulation plugin provides, and the simulator it creates for one model.
//
// A Formulation is stateless and registered once by name (MBS_REGISTER_FORMULATION). For a given
// Model, integrator and setting it creates a Simulator: setup (sizing, allocation, factorization
// structure) happens in the Simulator's constructor and is never timed; run() re-initializes the
// integrator from the model's initial state and integrates, and is what the harness times.
#pragma once

#include <Eigen/Dense>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/linearization.hpp"
#include "core/model.hpp"

namespace mbs {

// How an integrator is tuned: the harness searches the setting from `loosest` towards `tightest`.
enum class SettingKind {
  kFixedStep,  // setting is the step size h (s); the harness rounds it so that t_end / h is whole
  kTolerance,  // setting is the relative (and absolute) tolerance of an adaptive method
};

// Whole number of fixed steps of about h_nominal that span t_end (at least 1), and the step that
// divides t_end exactly. Throws SolverError when the count would not fit a long.
long fixed_step_count(double t_end, double h_nominal);
inline double fixed_step(double t_end, double h_nominal) { return t_end / fixed_step_count(t_end, h_nominal); }

struct IntegratorInfo {
  std::string name;         // e.g. "rk4"; with the formulation's name it forms the case "minimal/rk4"
  SettingKind kind;
  double loosest;           // first setting the tuner tries
  double tightest;          // the tuner gives up below this
  std::string description;  // one line for --list and the README
  // Non-empty for a control case, one the literature shows failing (e.g. no numerical dissipation
  // at index 3): why. Its rows that fail or stop get status control, which is no failure of the run
  // (mark_control); the conformance suites check that it fails rather than that it passes.
  std::string expected_failure;
};

// Statistics a run accumulates (Drake-style); reset by every run().
struct RunStats {
  long steps = 0;             // accepted steps
  long rhs_evals = 0;         // right-hand side / residual evaluations
  long jacobian_evals = 0;    // iteration-matrix or Jacobian evaluations
  long newton_iterations = 0;
  long failures = 0;          // rejected steps, error-test or convergence failures
};

// Raised by a simulator when it cannot continue (Newton divergence, solver error flag, ...).
class SolverError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Receives the state after the initial condition and after every accepted step, in natural
// coordinates of the model (point positions q and velocities v, local frame).
class StepObserver {
 public:
  virtual ~StepObserver() = default;
  virtual void on_step(double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v) = 0;
};

// Cooperative cancellation of every run in the process: the harness's watchdog sets it when a
// case exceeds its time budget (--timeout); Simulator::run checks it once per step (a relaxed
// atomic load) and throws a SolverError saying so.
void request_cancellation(bool on);
bool cancellation_requested();

class Simulator {
 public:
  explicit Simulator(const Model& model) : model_(&model), q_model_(model.nq()), v_model_(model.nq()) {}
  virtual ~Simulator() = default;
  Simulator(const Simulator&) = delete;
  Simulator& operator=(const Simulator&) = delete;

  // Integrates from the model's initial state to t_end (s). `observer` may be null (timed runs).
  // Throws SolverError on failure. Statistics are returned by reference into the simulator.
  const RunStats& run(double t_end, StepObserver* observer);

  const RunStats& stats() const { return stats_; }
  const Model& model() const { return *model_; }

 protected:
  // Hooks each method overrides.
  // Set t = 0 and the initial state; t_end is passed so that a method can set up everything that
  // depends on it (step size, stop time) here, before the first step.
  virtual void do_initialize(double t_end) = 0;
  virtual void do_step(double t_end) = 0;           // one accepted step, never past t_end
  virtual double do_time() const = 0;               // current time (s)
  // Writes the current state into q_model_ / v_model_ (natural coordinates of the model).
  virtual void do_model_state() = 0;
  // Called after the last step of a completed run, e.g. to collect a library's counters.
  virtual void do_finish_run() {}

  RunStats stats_;
  const Model* model_;
  Eigen::VectorXd q_model_, v_model_;

 private:
  void report(StepObserver* observer);
};

// Base for fixed-step methods: owns the time bookkeeping so that each method only writes its step.
// A run takes n = max(1, round(ceil(t_end / h_nominal))) steps of exactly h = t_end / n (chosen in
// do_initialize(t_end)), so the last step lands on t_end without a short remainder step; t is
// recomputed as i h (not accumulated) and set to t_end on the last step.
// The base hooks are final (Drake style); derived classes override the narrower hooks below and
// still implement do_model_state() and keep their own state.
class FixedStepSimulator : public Simulator {
 public:
  FixedStepSimulator(const Model& model, double h_nominal) : Simulator(model), h_nominal_(h_nominal) {}

  // The step size h = t_end / n of the current run; valid once the run has been initialized.
  double step_size() const { return h_; }

 protected:
  // Set the initial state (and any integrator start-up); time and step counter are already reset.
  virtual void do_initialize_state() = 0;
  // Called once per run, before do_initialize_state() and the first do_fixed_step(): for methods
  // whose parameters depend on h (e.g. a penalty scaled by 1/h^2).
  virtual void do_step_size_chosen(double /*h*/) {}
  // Advance the state from time() to time() + h (exactly t_end on the last step).
  virtual void do_fixed_step(double h) = 0;

  // Current time (s): time() during do_fixed_step() is the start of the step.
  double time() const { return t_; }

  void do_initialize(double t_end) final;
  void do_step(double t_end) final;
  double do_time() const final { return t_; }

 private:
  double h_nominal_;
  double h_ = 0.0, t_ = 0.0;
  long i_ = 0, n_ = 1;  // steps taken in this run; steps in the run
};

// What a formulation accepts, declared once, by what the elements provide (core/element.hpp), never
// by kind. A natural-coordinate formulation takes every element of a role it implements through
// NaturalCoordinates (any joint by its constraint rows, any force element by Q(q, v) and its
// Jacobians, any contact by its gap form); a joint-coordinate formulation takes the joints whose
// tree-joint description (Element::tree_joint) it implements. Anything else is unsupported, with a
// generated reason, so a new kind is never silently ignored.
struct Accepts {
  std::vector<ElementRole> roles;          // every element of these roles
  std::vector<TreeJointType> tree_joints;  // and the joints that describe themselves as one of these
  bool accepts(const Element& e) const;
};

// Whose code steps the model: mbsbench's own formulations, or an established engine's through an
// adapter (formulations/<engine>/, docs/engines.md). An engine row differs where the engine does: it
// allocates in its own loop, and the test suites judge it by the interface suites on closed-form
// systems, the per-problem suites being for our own methods (docs/engines.md says why).
enum class FormulationOrigin { kOwn, kEngine };

class Formulation {
 public:
  virtual ~Formulation() = default;
  virtual std::string name() const = 0;
  virtual std::string description() const = 0;
  virtual FormulationOrigin origin() const { return FormulationOrigin::kOwn; }
  virtual std::vector<IntegratorInfo> integrators() const = 0;
  virtual Accepts accepts() const = 0;
  // Empty when the formulation can run this model; otherwise why it cannot (shown in the table):
  // first the declaration (an element it does not accept), then the formulation's own structural
  // reasons (a closed loop in joint coordinates, no degree of freedom, ...).
  std::string unsupported_reason(const Model& model) const;
  // Setup for one (model, integrator, setting). The model must outlive the simulator.
  virtual std::unique_ptr<Simulator> create(const Model& model, const std::string& integrator,
                                            double setting) const = 0;

  // Linearization about a static equilibrium (analysis problems). Empty when supported for this
  // model; otherwise why not. The default: the formulation has no linearization.
  virtual std::string linearization_unsupported_reason(const Model& /*model*/) const {
    return "no linearization implemented for " + name();
  }
  // Setup of a linearizer for the model (called only when the reason above is empty). The model
  // must outlive the linearizer, as a simulator.
  virtual std::unique_ptr<Linearizer> create_linearizer(const Model& /*model*/) const { return nullptr; }

 private:
  // The formulation's own reasons, for a model whose elements it accepts. Default: none.
  virtual std::string structure_unsupported_reason(const Model& /*model*/) const { return ""; }
};

// Formulations by name, sorted by name so case order is deterministic.
class Registry {
 public:
  static Registry& instance();
  bool add(std::unique_ptr<Formulation> formulation);
  const Formulation* find(const std::string& name) const;
  std::vector<const Formulation*> all() const;

 private:
  std::vector<std::unique_ptr<Formulation>> formulations_;
};

}  // namespace mbs

// One line beside a formulation's definition registers it with the harness.
#define MBS_REGISTER_FORMULATION(Class)                                                 \
  [[maybe_unused]] static const bool mbs_registered_##Class =                           \
      ::mbs::Registry::instance().add(std::make_unique<Class>())
