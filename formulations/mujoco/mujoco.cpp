// `mujoco`: the MuJoCo engine (joint coordinates over a kinematic tree, recursive dynamics) as rows
// of the table, one case per integrator MuJoCo 2.2.2 offers, each at a fixed step. The engine
// behind mujoco_adapter.hpp is the adapter or, without libmujoco-dev, the stub (docs/engines.md).
#include <array>

#include "common/engine_cases.hpp"
#include "common/integrator_table.hpp"
#include "mujoco/mujoco_adapter.hpp"

namespace mbs::mujoco {

namespace {

using Case = EngineCase<Integrator>;

// Semi-implicit Euler is first order, and so is MuJoCo's implicit Euler, which differs from it only
// by the derivative of the velocity-dependent forces (none on a 1-DOF pendulum): the energy error
// oscillates with an amplitude proportional to h, so the benchmark's energy rules (5e-5 J and below)
// need steps of a few microseconds, millions of steps a run. Their range stops at 1e-4 s, where the
// planar pendulum's drift is still some 27 times its rule (docs/engines.md has the figures).
constexpr double kFirstOrderTightest = 1e-4;
constexpr const char* kFirstOrder =
    "first order: the energy error is proportional to h, and the energy rules of the benchmark need steps below the "
    "tightest of its range, 1e-4 s (the planar pendulum's about 3.7e-6 s; docs/engines.md)";

// mjtIntegrator of MuJoCo 2.2.2 (mjmodel.h): every value is a case.
constexpr std::array<Case, 3> kCases{{
    {"euler", Integrator::kEuler, "MuJoCo mjINT_EULER: semi-implicit (symplectic) Euler, 1st order, fixed step",
     kFirstOrderTightest, kFirstOrder},
    {"rk4", Integrator::kRk4, "MuJoCo mjINT_RK4: classical Runge-Kutta, 4th order, fixed step", kStepRange.tightest},
    {"implicit", Integrator::kImplicit,
     "MuJoCo mjINT_IMPLICIT: Euler implicit in the velocity-dependent forces, 1st order, fixed step",
     kFirstOrderTightest, kFirstOrder},
}};

class Mujoco final : public Formulation {
 public:
  std::string name() const override { return "mujoco"; }
  std::string description() const override {
    return "the MuJoCo engine: joints over a kinematic tree, recursive dynamics (loops not mapped)";
  }
  FormulationOrigin origin() const override { return FormulationOrigin::kEngine; }
  std::vector<IntegratorInfo> integrators() const override {
    return engine_integrators(kCases, SettingKind::kFixedStep, kStepRange.loosest);
  }
  // Tree joints only; force elements and contacts are not mapped yet (docs/engines.md).
  Accepts accepts() const override { return {{}, engine_tree_joints()}; }
  std::unique_ptr<Simulator> create(const Model& model, const std::string& integrator, double setting) const override {
    const Case& c = find_engine_case("mujoco", kCases, integrator, "step", setting);
    return mujoco::create_simulator(model, c.integrator, setting);
  }
  // mjd_transitionFD about the initial configuration, for every model the adapter builds.
  std::string linearization_unsupported_reason(const Model& model) const override { return unsupported_reason(model); }
  std::unique_ptr<Linearizer> create_linearizer(const Model& model) const override {
    return mujoco::create_linearizer(model);
  }

 private:
  std::string structure_unsupported_reason(const Model& model) const override { return mujoco::unsupported_reason(model); }
};

}  // namespace

MBS_REGISTER_FORMULATION(Mujoco);

}  // namespace mbs::mujoco
