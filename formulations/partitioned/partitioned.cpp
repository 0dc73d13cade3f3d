// Formulation "partitioned": generalized coordinate partitioning over the natural coordinates
// (Wehage & Haug 1982). The independent coordinates q_i are chosen from Phi_q by LU with full
// pivoting (partition.hpp); the reduced ODE in (q_i, v_i) (partitioned_ode.hpp) is integrated by the
// same explicit Runge-Kutta methods as "minimal". Works from NaturalCoordinates only, so closed
// loops and redundant constraints run as any tree does.
//
// Re-partitioning (common/partition_keeper.hpp, kRepartitionFactor) happens only at step boundaries, where the natural state is
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

#include "common/erk_simulators.hpp"
#include "common/integrator_table.hpp"
#include "common/partition.hpp"
#include "common/partition_keeper.hpp"
#include "core/formulation.hpp"
#include "core/natural_coordinates.hpp"
#include "partitioned/linearizer.hpp"
#include "partitioned/partitioned_ode.hpp"

namespace mbs::partitioned {
namespace {

// Dense linear algebra only (full-pivoting LU of Phi_q at every re-partition, LU of Phi_d at every
// Newton iteration of every stage): on the 40-window N-four-bar (486 coordinates, 485 rows) a step
// is so slow that tuning it would take hours (docs/formulations.md, Method notes). Larger models
// are declared unsupported. (That mechanism also passes singular positions, where every Phi_d is
// singular; how the integrators fared there on a small N-four-bar is in the same notes.)
constexpr int kMaxCoordinates = 200;

// Fixed sizes for the pendulum and the double pendulum, dynamic sizes otherwise.
std::unique_ptr<Simulator> make_sized(const ErkCase& c, const Model& model, const Partition& p, double setting) {
  if (model.nq() == 2 && model.nc() == 1 && p.rank == 1)
    return make_erk_simulator<KeptPartition<PartitionedOde<2, 1, 1>>, PartitionedSimulator>(c, model, setting, p);
  if (model.nq() == 4 && model.nc() == 2 && p.rank == 2)
    return make_erk_simulator<KeptPartition<PartitionedOde<4, 2, 2>>, PartitionedSimulator>(c, model, setting, p);
  return make_erk_simulator<KeptPartition<PartitionedOde<Eigen::Dynamic, Eigen::Dynamic, Eigen::Dynamic>>,
                            PartitionedSimulator>(
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
