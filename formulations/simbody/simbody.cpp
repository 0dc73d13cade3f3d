// `simbody`: the Simbody engine (SimTK, joint coordinates on mobilizers, loop constraints by
// projection) as rows of the table, one case per integrator Simbody offers. The engine behind
// simbody_adapter.hpp is the adapter or, without libsimbody-dev, the stub (docs/engines.md).
#include <array>

#include "common/engine_cases.hpp"
#include "common/integrator_table.hpp"
#include "simbody/simbody_adapter.hpp"

namespace mbs::simbody {

namespace {

using Case = EngineCase<Method>;
constexpr double kTightest = kToleranceRange.tightest;

// SemiExplicitEuler2 is first order: its steps grow as tol^-1/2 and its energy error falls only as
// tol^1/2, each decade tighter costing 3.2 times the steps for 3.2 times less drift. Its range stops
// at 1e-7, still far from an energy rule of the benchmark (docs/engines.md has the figures).
constexpr double kSemiExplicitEulerTightest = 1e-7;

// The constraint tolerance of the -ctol1e-12 cases: loop constraints held near round-off, as our
// projection formulations hold them, whatever the accuracy (docs/engines.md).
constexpr double kTightConstraints = 1e-12;

// Simbody's integrators, the constraint tolerance tied to the accuracy as Simbody's default ties it;
// then the two 4(5) integrators and CPodes with a fixed tight one, which keeps A02's cranks on their
// branch and costs steps elsewhere.
constexpr std::array<Case, 9> kCases{{
    {"rk-merson", {Integrator::kMerson},
     "Simbody RungeKuttaMersonIntegrator: Merson 4(5), adaptive, accuracy-controlled", kTightest},
    {"rk-feldberg", {Integrator::kFeldberg}, "Simbody RungeKuttaFeldbergIntegrator: Fehlberg 4(5), adaptive",
     kTightest},
    {"rk3", {Integrator::kRk3}, "Simbody RungeKutta3Integrator: 3rd order with an embedded 2nd-order error estimate",
     kTightest},
    {"verlet", {Integrator::kVerlet}, "Simbody VerletIntegrator: velocity Verlet, 2nd order, adaptive step",
     kTightest},
    {"semi-explicit-euler2", {Integrator::kSemiExplicitEuler2},
     "Simbody SemiExplicitEuler2Integrator: semi-explicit Euler with a half-step error estimate",
     kSemiExplicitEulerTightest,
     "first order (steps grow as tol^-1/2, energy drift falls only as tol^1/2): the energy rules of the benchmark "
     "need tolerances far below the tightest of its range, 1e-7 (docs/engines.md)"},
    {"cpodes", {Integrator::kCPodes},
     "Simbody CPodesIntegrator: BDF of orders 1 to 5 with Newton iterations (Simbody's fork of SUNDIALS CVODE), "
     "adaptive",
     kTightest},
    {"rk-merson-ctol1e-12", {Integrator::kMerson, kTightConstraints},
     "Simbody RungeKuttaMersonIntegrator, constraint tolerance 1e-12 instead of the accuracy", kTightest},
    {"rk-feldberg-ctol1e-12", {Integrator::kFeldberg, kTightConstraints},
     "Simbody RungeKuttaFeldbergIntegrator, constraint tolerance 1e-12 instead of the accuracy", kTightest},
    {"cpodes-ctol1e-12", {Integrator::kCPodes, kTightConstraints},
     "Simbody CPodesIntegrator (BDF, Newton), constraint tolerance 1e-12 instead of the accuracy", kTightest},
}};

class Simbody final : public Formulation {
 public:
  std::string name() const override { return "simbody"; }
  std::string description() const override {
    return "the Simbody engine: mobilizers over a spanning tree, loop joints as constraints with projection";
  }
  FormulationOrigin origin() const override { return FormulationOrigin::kEngine; }
  std::vector<IntegratorInfo> integrators() const override {
    return engine_integrators(kCases, SettingKind::kTolerance, kToleranceRange.loosest);
  }
  // Joints by their tree descriptions (tree mobilizers or loop constraints), force elements of any
  // kind through their own Q (one Simbody Force::Custom, see simbody_model.cpp); no contacts.
  Accepts accepts() const override { return {{ElementRole::kForce}, engine_tree_joints()}; }
  std::unique_ptr<Simulator> create(const Model& model, const std::string& integrator, double setting) const override {
    const Case& c = find_engine_case("simbody", kCases, integrator, "accuracy", setting);
    return simbody::create_simulator(model, c.integrator, setting);
  }
  std::string linearization_unsupported_reason(const Model& model) const override {
    if (std::string why = unsupported_reason(model); !why.empty()) return why;
    return simbody::linearization_unsupported_reason(model);
  }
  std::unique_ptr<Linearizer> create_linearizer(const Model& model) const override {
    return simbody::create_linearizer(model);
  }

 private:
  std::string structure_unsupported_reason(const Model& model) const override { return simbody::unsupported_reason(model); }
};

}  // namespace

MBS_REGISTER_FORMULATION(Simbody);

}  // namespace mbs::simbody
