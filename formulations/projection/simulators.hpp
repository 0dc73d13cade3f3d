// The simulators of the index-1 formulations ("projection", "unprojected" in projection.cpp;
// "baumgarte" in formulations/baumgarte/): fixed-step and adaptive explicit Runge-Kutta on
// ProjectionOde, optionally projecting after every step. Each formulation instantiates its own, in
// its own translation unit (internal linkage: the plain equations' code is not shared with, nor
// shaped by, the Baumgarte instantiations).
#pragma once

#include <fmt/format.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common/contact_events.hpp"
#include "common/explicit_rk.hpp"
#include "common/independent_rows.hpp"
#include "common/sparse_natural.hpp"
#include "core/formulation.hpp"
#include "core/natural_coordinates.hpp"
#include "projection/projection.hpp"
#include "projection/projection_ode.hpp"

namespace mbs::projection {
namespace {  // see the file comment

// The formulation, for error messages.
template <bool kBaumgarte>
const char* index1_name(bool project) {
  return kBaumgarte ? "baumgarte" : project ? "projection" : "unprojected";
}

template <int NQ, int NR, template <class> class Stepper, bool kBaumgarte>
class FixedSimulator final : public FixedStepSimulator, public ProjectionRun {
 public:
  using Ode = ProjectionOde<NQ, NR, kBaumgarte>;
  template <typename... Args>
  FixedSimulator(const Model& model, std::vector<int> rows, bool sparse, bool project, double h, Args&&... args)
      : FixedStepSimulator(model, h), ode_(model, std::move(rows), stats_, sparse), rk_(ode_, std::forward<Args>(args)...),
        y_(ode_.size()), project_(project), events_(ode_, model) {}
  int kept_rows() const override { return ode_.kept_rows(); }
  int dropped_rows() const override { return ode_.dropped_rows(); }
  bool projects() const override { return project_; }
  bool sparse() const override { return ode_.sparse(); }
  void set_baumgarte(double alpha, double beta) override {
    if constexpr (!kBaumgarte) throw SolverError("projection: a simulator built without Baumgarte's feedback");
    ode_.set_baumgarte(alpha, beta);
  }

 private:
  void do_initialize_state() override {
    ode_.initial_state(y_);
    if (project_) ode_.project(0.0, y_);
    events_.reset();
  }
  void do_fixed_step(double h) override {
    if constexpr (Ode::kContacts) {
      if (events_.active()) {
        contact_step(h);
        return;
      }
    }
    rk_.step(time(), h, y_, stats_);
    if (project_) ode_.project(time() + h, y_);
  }
  // With contacts (common/contact_events.hpp); every trial step of the event location is projected
  // as a step is. Out of line: the plain step above compiles as it did without contacts.
  EIGEN_DONT_INLINE void contact_step(double h) {
    fixed_step_with_events(events_, who(), time(), h, y_,
                           [this](double t0, double dt, State& y) {
                             rk_.step(t0, dt, y, stats_);
                             if (project_) ode_.project(t0 + dt, y);
                           });
  }
  void do_model_state() override { ode_.model_state(y_, q_model_, v_model_); }
  const char* who() const { return index1_name<kBaumgarte>(project_); }

  using State = typename Ode::State;
  Ode ode_;
  Stepper<Ode> rk_;
  State y_;
  bool project_;
  ContactEvents<Ode> events_;
};

template <int NQ, int NR, bool kBaumgarte>
class ErkSimulator final : public Simulator, public ProjectionRun {
 public:
  using Ode = ProjectionOde<NQ, NR, kBaumgarte>;
  ErkSimulator(const Model& model, std::vector<int> rows, bool sparse, bool project, const ButcherTable& table, double tol)
      : Simulator(model), ode_(model, std::move(rows), stats_, sparse), rk_(ode_, table, tol, tol), y_(ode_.size()),
        project_(project), events_(ode_, model), single_(ode_, table) {}
  int kept_rows() const override { return ode_.kept_rows(); }
  int dropped_rows() const override { return ode_.dropped_rows(); }
  bool projects() const override { return project_; }
  bool sparse() const override { return ode_.sparse(); }
  void set_baumgarte(double alpha, double beta) override {
    if constexpr (!kBaumgarte) throw SolverError("projection: a simulator built without Baumgarte's feedback");
    ode_.set_baumgarte(alpha, beta);
  }

 private:
  void do_initialize(double /*t_end*/) override {  // adaptive: steps are clipped to t_end in do_step
    t_ = 0.0;
    ode_.initial_state(y_);
    if (project_) ode_.project(t_, y_);
    events_.reset();
    rk_.initialize(t_, y_, stats_);
  }
  void do_step(double t_end) override {
    if constexpr (Ode::kContacts) {
      if (events_.active()) {
        contact_step(t_end);
        return;
      }
    }
    rk_.step(t_, y_, t_end, stats_);
    if (project_) ode_.project(t_, y_);  // FSAL stage kept (file comment)
  }
  // With contacts (common/contact_events.hpp), projected as above.
  EIGEN_DONT_INLINE void contact_step(double t_end) {
    adaptive_step_with_events(
        events_, who(), t_, y_,
        [&] {
          rk_.step(t_, y_, t_end, stats_);
          if (project_) ode_.project(t_, y_);
        },
        [this](double ts, double dt, const State& y0, State& out) {
          out = y0;
          single_.step(ts, dt, out, stats_);
          if (project_) ode_.project(ts + dt, out);
        },
        [this] { rk_.initialize(t_, y_, stats_); });
  }
  double do_time() const override { return t_; }
  void do_model_state() override { ode_.model_state(y_, q_model_, v_model_); }
  const char* who() const { return index1_name<kBaumgarte>(project_); }

  using State = typename Ode::State;
  Ode ode_;
  EmbeddedRk<Ode> rk_;
  State y_;
  bool project_;
  ContactEvents<Ode> events_;
  FixedButcherRk<Ode> single_;  // one step of the pair's propagating method, for event location
  double t_ = 0.0;
};

// Fixed sizes for the planar and spatial pendulum and the planar double pendulum (no row dropped,
// no contacts), dynamic sizes otherwise (dense or sparse).
template <template <int, int> class Sim, typename... Args>
std::unique_ptr<Simulator> make_sized(const Model& model, std::vector<int> rows, bool sparse, Args&&... args) {
  const int nq = model.nq(), nc = model.nc(), nr = static_cast<int>(rows.size());
  if (nr == nc && !sparse && !model.has_role(ElementRole::kContact)) {
    if (nq == 2 && nc == 1) return std::make_unique<Sim<2, 1>>(model, std::move(rows), false, std::forward<Args>(args)...);
    if (nq == 3 && nc == 1) return std::make_unique<Sim<3, 1>>(model, std::move(rows), false, std::forward<Args>(args)...);
    if (nq == 4 && nc == 2) return std::make_unique<Sim<4, 2>>(model, std::move(rows), false, std::forward<Args>(args)...);
  }
  return std::make_unique<Sim<Eigen::Dynamic, Eigen::Dynamic>>(model, std::move(rows), sparse, std::forward<Args>(args)...);
}

// The three simulator kinds of an index-1 formulation, with or without Baumgarte's feedback.
template <bool kBaumgarte>
struct Simulators {
  template <int NQ, int NR>
  using Rk4Fixed = FixedSimulator<NQ, NR, Rk4, kBaumgarte>;
  template <int NQ, int NR>
  using Rk8Fixed = FixedSimulator<NQ, NR, FixedButcherRk, kBaumgarte>;
  template <int NQ, int NR>
  using Adaptive = ErkSimulator<NQ, NR, kBaumgarte>;
};

// The simulator for `integrator` (checked by the caller: check_index1_request).
template <bool kBaumgarte>
std::unique_ptr<Simulator> make_index1(const Model& model, const std::string& integrator, double setting, bool project,
                                       LinearAlgebra la) {
  using S = Simulators<kBaumgarte>;
  const bool sparse = sparse_path(la, model);
  std::vector<int> rows = independent_rows(NaturalCoordinates(model), model);
  if (integrator == "rk4") return make_sized<S::template Rk4Fixed>(model, std::move(rows), sparse, project, setting);
  if (integrator == "dop853-fixed")
    return make_sized<S::template Rk8Fixed>(model, std::move(rows), sparse, project, setting, ButcherTable::dop853());
  if (integrator == "fehlberg8-fixed")
    return make_sized<S::template Rk8Fixed>(model, std::move(rows), sparse, project, setting,
                                            ButcherTable::from_arkode("fehlberg8"));
  return make_sized<S::template Adaptive>(model, std::move(rows), sparse, project, ButcherTable::from_arkode(integrator),
                                          setting);
}

}  // namespace
}  // namespace mbs::projection
