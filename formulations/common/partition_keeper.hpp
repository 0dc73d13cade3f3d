// Keeping a coordinate partition (common/partition.hpp) along a run: the initial one at the start,
// a new one when the dependent block of the Jacobian degrades. Shared by `partitioned` (natural
// coordinates) and `joint-partitioned` (a spanning tree's joint coordinates), whose ODEs differ in
// the coordinates only.
//
// The partitioned ODE (Base of KeptPartition) provides, besides common/erk_simulators.hpp's ODE:
//   Base(const Model& model, RunStats& stats, int rank, Args...)
//   using VecQ;                                   // the full coordinates q (and velocities v)
//   const char* name() const;                     // the formulation, for errors
//   void initial_full_state(VecQ& q, VecQ& v) const;
//   double set_partition(const Partition& p, const VecQ& q, const VecQ& v, State& y);
//                                                 // y from the consistent (q, v) in p; returns the
//                                                 // conditioning of the new dependent block
//   void full_state(double t, const State& y);    // q(), v() and Phi_q() at y
//   const VecQ& q() const; const VecQ& v() const; const <matrix>& Phi_q() const;
//   double take_min_pivot_ratio();                // the smallest ratio met since the last call
//   void model_state_at(double t, const State& y, Eigen::VectorXd& q, Eigen::VectorXd& v);
#pragma once

#include <fmt/format.h>

#include <Eigen/Dense>
#include <utility>

#include "common/partition.hpp"
#include "core/formulation.hpp"

namespace mbs {

// Re-partition rule: at the end of every accepted step, if the smallest Phi_d pivot ratio met by
// any stage of the step has fallen below this fraction of its value when the partition was chosen,
// the partition is re-chosen from Phi_q at the step's end (if the rule picks the same coordinates,
// only the reference value is lowered to the current one).
// Close to 1 on purpose: the coordinates are then (nearly) a function of the configuration alone.
// Hysteresis makes them depend on the direction of motion, which breaks the symmetry under which
// the errors of a swing's descent and ascent cancel: a smaller factor gave the planar pendulum a
// larger drift and a smaller tuned step (docs/formulations.md, Method notes).
// The 1 % left avoids re-choosing at every step where two partitions are equally good.
inline constexpr double kRepartitionFactor = 0.99;

// What a partitioned simulator reports beyond RunStats, for tests: dynamic_cast the Simulator that
// the formulation creates to PartitionedRun.
class PartitionedRun {
 public:
  virtual ~PartitionedRun() = default;
  // Changes of the independent coordinates in the last run.
  virtual long repartitions() const = 0;
  // The partition in use (at the end of a run: the last one chosen).
  virtual const Partition& partition() const = 0;
};

// Holds the partition in use: the initial one at the start of a run, a new one when Phi_d degrades.
// Re-partitioning happens only at step boundaries, where the full state is recovered whole.
template <class Ode>
class PartitionKeeper {
 public:
  using State = typename Ode::State;
  using VecQ = typename Ode::VecQ;

  PartitionKeeper(Ode& ode, const Partition& initial)
      : ode_(ode), partitioner_(static_cast<int>(ode.Phi_q().rows()), static_cast<int>(ode.Phi_q().cols())),
        initial_(initial), current_(partitioner_.reserved()), candidate_(partitioner_.reserved()),
        Phi_q_(ode.Phi_q().rows(), ode.Phi_q().cols()) {
    ode.initial_full_state(q0_, v0_);
  }

  // The initial partition (chosen at setup: the same every run) and y from the initial state.
  void start(State& y) {
    current_ = initial_;  // the lists' capacity is reserved: no allocation
    ratio0_ = ode_.set_partition(current_, q0_, v0_, y);
    ode_.take_min_pivot_ratio();
    repartitions_ = 0;
  }

  // After an accepted step ending at time t in state y. Returns true when the independent
  // coordinates changed: y is then in the new ones, and the integrator must restart from it.
  bool after_step(double t, State& y) {
    if (ode_.take_min_pivot_ratio() >= kRepartitionFactor * ratio0_) return false;
    ode_.full_state(t, y);
    Phi_q_ = ode_.Phi_q();
    partitioner_.choose(Phi_q_, candidate_);
    if (candidate_.rank != current_.rank)
      throw SolverError(fmt::format("{}: the rank of Phi_q changed from {} to {} at t = {:.9g} s "
                                    "(the mechanism passes a singular configuration)",
                                    ode_.name(), current_.rank, candidate_.rank, t));
    const bool changed = candidate_.dependent != current_.dependent;
    std::swap(current_, candidate_);
    // Same coordinates: y is unchanged and only the reference ratio (and possibly the kept rows) moves.
    ratio0_ = ode_.set_partition(current_, ode_.q(), ode_.v(), y);
    ode_.take_min_pivot_ratio();
    if (changed) ++repartitions_;
    return changed;
  }

  long repartitions() const { return repartitions_; }
  const Partition& partition() const { return current_; }

 private:
  Ode& ode_;
  Partitioner partitioner_;
  Partition initial_, current_, candidate_;
  VecQ q0_, v0_;
  Eigen::MatrixXd Phi_q_;  // dynamic copy for the partitioner
  double ratio0_ = 1.0;    // Phi_d's pivot ratio when the partition was chosen
  long repartitions_ = 0;
};

// The ODE of common/erk_simulators.hpp: Base in the partition that the keeper holds, re-chosen
// after a step where Phi_d degrades.
template <class Base>
class KeptPartition final : public Base {
 public:
  using typename Base::State;
  template <class... Args>
  KeptPartition(const Model& model, RunStats& stats, const Partition& initial, Args&&... args)
      : Base(model, stats, initial.rank, std::forward<Args>(args)...), keeper_(*this, initial) {}
  void initial_state(State& y) {
    t_ = 0.0;
    keeper_.start(y);
  }
  // Base::anchor() after every accepted adaptive step: a retry starts from the accepted state.
  bool change_coordinates(double t, State& y) {
    t_ = t;
    return keeper_.after_step(t, y);
  }
  void model_state(const State& y, Eigen::VectorXd& q, Eigen::VectorXd& v) { this->model_state_at(t_, y, q, v); }
  const PartitionKeeper<Base>& keeper() const { return keeper_; }

 private:
  PartitionKeeper<Base> keeper_;
  double t_ = 0.0;  // of the last accepted step, for messages
};

// A simulator of common/erk_simulators.hpp over a KeptPartition ODE that reports as a PartitionedRun.
template <class Sim>
class PartitionedSimulator final : public Sim, public PartitionedRun {
 public:
  using Sim::Sim;
  long repartitions() const override { return this->ode().keeper().repartitions(); }
  const Partition& partition() const override { return this->ode().keeper().partition(); }
};

}  // namespace mbs
