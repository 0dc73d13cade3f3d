// Formulation "partitioned": generalized coordinate partitioning over the natural coordinates
// (Wehage & Haug 1982). The independent coordinates q_i are chosen from Phi_q by LU with full
// pivoting (partition.hpp); the reduced ODE in (q_i, v_i) (partitioned_ode.hpp) is integrated by the
// same explicit Runge-Kutta methods as "minimal". Works from NaturalCoordinates only, so closed
// loops and redundant constraints run as any tree does.
//
// Re-partitioning (kRepartitionFactor) happens only at step boundaries, where the natural state is
// recovered whole, so the new coordinates start from a consistent state. The integrators carry
// nothing else from step to step but the step size and, for a FSAL pair (Dormand-Prince), the last
// stage f(t, y): RK4 and Fehlberg (not FSAL: its next step evaluates f at the new y itself) simply
// continue in the new coordinates, Fehlberg with its step size; Dormand-Prince is re-initialized,
// since its stored stage is the derivative of the old coordinates and EmbeddedRk can only drop it
// together with the step size (the first step is then re-estimated: 2 right-hand sides).
//
// A stage whose dependent coordinates Newton-Raphson cannot find (a long step carries an
// independent coordinate past its extremum, as a driven crank's coordinate does near a quarter
// turn: the pivot-ratio trigger above does not see that coming on a 42-coordinate model) throws
// StageFailure: the adaptive integrators retry the step 4x shorter, from the state of the last
// accepted step (PartitionedOde::anchor); fixed-step RK4 stops with the error.
#include <fmt/format.h>

#include <utility>

#include "common/erk_simulators.hpp"
#include "common/integrator_table.hpp"
#include "core/formulation.hpp"
#include "core/natural_coordinates.hpp"
#include "partitioned/linearizer.hpp"
#include "partitioned/partition.hpp"
#include "partitioned/partitioned.hpp"
#include "partitioned/partitioned_ode.hpp"

namespace mbs::partitioned {
namespace {

// Dense linear algebra only (full-pivoting LU of Phi_q at every re-partition, LU of Phi_d at every
// Newton iteration of every stage): on the 40-window N-four-bar (486 coordinates, 485 rows) a step
// is so slow that tuning it would take hours (docs/formulations.md, Method notes). Larger models
// are declared unsupported. (That mechanism also passes singular positions, where every Phi_d is
// singular; how the integrators fared there on a small N-four-bar is in the same notes.)
constexpr int kMaxCoordinates = 200;

// Holds the partition in use: the initial one at the start of a run, a new one when Phi_d degrades.
template <int NQ, int NC, int NR>
class PartitionKeeper {
 public:
  using Ode = PartitionedOde<NQ, NC, NR>;
  using State = typename Ode::State;

  PartitionKeeper(const Model& model, const Partition& initial, Ode& ode)
      : ode_(ode), partitioner_(model.nc(), model.nq()), initial_(initial), current_(partitioner_.reserved()),
        candidate_(partitioner_.reserved()), q0_(model.initial_q()), v0_(model.initial_v()),
        Phi_q_(model.nc(), model.nq()) {}

  // The initial partition (chosen at setup: the same every run) and y from the model's initial state.
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
    ode_.natural_state(t, y);
    Phi_q_ = ode_.Phi_q();
    partitioner_.choose(Phi_q_, candidate_);
    if (candidate_.rank != current_.rank)
      throw SolverError(fmt::format("partitioned: the rank of Phi_q changed from {} to {} at t = {:.9g} s "
                                    "(the mechanism passes a singular configuration)",
                                    current_.rank, candidate_.rank, t));
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
  typename Ode::VecQ q0_, v0_;
  Eigen::MatrixXd Phi_q_;  // dynamic copy for the partitioner
  double ratio0_ = 1.0;    // Phi_d's pivot ratio when the partition was chosen
  long repartitions_ = 0;
};

// The ODE of common/erk_simulators.hpp: PartitionedOde in the partition that the keeper holds,
// re-chosen after a step where Phi_d degrades.
template <int NQ, int NC, int NR>
class KeptPartitionOde final : public PartitionedOde<NQ, NC, NR> {
 public:
  using Base = PartitionedOde<NQ, NC, NR>;
  using typename Base::State;
  KeptPartitionOde(const Model& model, RunStats& stats, const Partition& initial)
      : Base(model, initial.rank, stats), keeper_(model, initial, *this) {}
  void initial_state(State& y) {
    t_ = 0.0;
    keeper_.start(y);
  }
  // Base::anchor() after every accepted adaptive step: a retry starts from the accepted state.
  bool change_coordinates(double t, State& y) {
    t_ = t;
    return keeper_.after_step(t, y);
  }
  void model_state(const State& y, Eigen::VectorXd& q, Eigen::VectorXd& v) { this->natural_state(t_, y, q, v); }
  const PartitionKeeper<NQ, NC, NR>& keeper() const { return keeper_; }

 private:
  PartitionKeeper<NQ, NC, NR> keeper_;
  double t_ = 0.0;  // of the last accepted step, for messages
};

// A simulator of common/erk_simulators.hpp that reports as a PartitionedRun.
template <class Sim>
class PartitionedSimulator final : public Sim, public PartitionedRun {
 public:
  using Sim::Sim;
  long repartitions() const override { return this->ode().keeper().repartitions(); }
  const Partition& partition() const override { return this->ode().keeper().partition(); }
};

// Fixed sizes for the pendulum and the double pendulum, dynamic sizes otherwise.
std::unique_ptr<Simulator> make_sized(const ErkCase& c, const Model& model, const Partition& p, double setting) {
  if (model.nq() == 2 && model.nc() == 1 && p.rank == 1)
    return make_erk_simulator<KeptPartitionOde<2, 1, 1>, PartitionedSimulator>(c, model, setting, p);
  if (model.nq() == 4 && model.nc() == 2 && p.rank == 2)
    return make_erk_simulator<KeptPartitionOde<4, 2, 2>, PartitionedSimulator>(c, model, setting, p);
  return make_erk_simulator<KeptPartitionOde<Eigen::Dynamic, Eigen::Dynamic, Eigen::Dynamic>, PartitionedSimulator>(
      c, model, setting, p);
}

// The partition of Phi_q at the model's initial state.
Partition initial_partition(const Model& model) {
  const NaturalCoordinates nat(model);
  Eigen::MatrixXd Phi_q(nat.nc(), nat.nq());
  nat.Phi_q(model.initial_q(), Phi_q);
  return choose_partition(Phi_q);
}

class PartitionedFormulation final : public Formulation {
 public:
  std::string name() const override { return "partitioned"; }
  std::string description() const override {
    return "natural coordinates partitioned into independent and dependent ones (full-pivoting LU of Phi_q, "
           "re-chosen as Phi_d degrades); ODE in the independent ones by velocity transformation";
  }
  std::vector<IntegratorInfo> integrators() const override { return cases_.integrators(); }
  Accepts accepts() const override { return {{ElementRole::kJoint, ElementRole::kForce}, {}}; }
  std::string structure_unsupported_reason(const Model& model) const override {
    if (model.nq() > kMaxCoordinates)
      return fmt::format("{} natural coordinates: partitioned has dense factorizations only (LU of Phi_q and of "
                         "Phi_d at every stage) and refuses more than {}", model.nq(), kMaxCoordinates);
    // An explicit integrator needs a state: a structure (rank Phi_q = nq) has nothing to integrate.
    if (initial_partition(model).ndof() == 0) return "the model has no degrees of freedom (Phi_q has full column rank)";
    return "";
  }
  std::unique_ptr<Simulator> create(const Model& model, const std::string& integrator, double setting) const override {
    const ErkCase c = cases_.find(name(), integrator, setting);
    if (const std::string why = unsupported_reason(model); !why.empty()) throw SolverError("partitioned: " + why);
    return make_sized(c, model, initial_partition(model), setting);
  }
  std::string linearization_unsupported_reason(const Model& model) const override {
    return linearizer_unsupported_reason(model);
  }
  std::unique_ptr<Linearizer> create_linearizer(const Model& model) const override { return make_linearizer(model); }

 private:
  const ErkCases cases_{{&kRk4, &kDopri5, &kFehlberg8}};
};

}  // namespace

MBS_REGISTER_FORMULATION(PartitionedFormulation);

}  // namespace mbs::partitioned
