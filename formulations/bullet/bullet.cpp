// `bullet`: the Bullet engine's btMultiBody (Featherstone's articulated-body algorithm over a
// kinematic tree) as rows of the table, one case per way Bullet 3.24 steps it, each at a fixed step.
// The engine behind bullet_adapter.hpp is the adapter or, without libbullet-dev, the stub
// (docs/engines.md).
#include <array>

#include "bullet/bullet_adapter.hpp"
#include "common/engine_cases.hpp"
#include "common/integrator_table.hpp"

namespace mbs::bullet {

namespace {

using Case = EngineCase<Integrator>;

// Semi-implicit Euler is first order: its energy error oscillates with an amplitude proportional
// to h, and the benchmark's energy rules (5e-5 J and below) need steps of a few microseconds. Its
// range stops at 1e-4 s, as MuJoCo's euler (docs/engines.md has the figures).
constexpr double kFirstOrderTightest = 1e-4;
constexpr const char* kFirstOrder =
    "first order: the energy error is proportional to h, and the energy rules of the benchmark need steps below the "
    "tightest of its range, 1e-4 s (docs/engines.md)";

constexpr std::array<Case, 3> kCases{{
    {"euler", Integrator::kWorldEuler,
     "Bullet btMultiBodyDynamicsWorld::stepSimulation: semi-implicit (symplectic) Euler, 1st order, fixed step",
     kFirstOrderTightest, kFirstOrder},
    {"rk4", Integrator::kWorldRk4,
     "Bullet's world with btMultiBody::useRK4Integration: classical Runge-Kutta, 4th order, fixed step",
     kStepRange.tightest},
    {"direct-euler", Integrator::kDirectEuler,
     "Bullet btMultiBody stepped without the world (computeAccelerations..., stepPositionsMultiDof): semi-implicit "
     "Euler, fixed step",
     kFirstOrderTightest, kFirstOrder},
}};

class Bullet final : public Formulation {
 public:
  std::string name() const override { return "bullet"; }
  std::string description() const override {
    return "the Bullet engine's btMultiBody: joints over a kinematic tree, Featherstone's algorithm (loops not mapped)";
  }
  FormulationOrigin origin() const override { return FormulationOrigin::kEngine; }
  std::vector<IntegratorInfo> integrators() const override {
    return engine_integrators(kCases, SettingKind::kFixedStep, kStepRange.loosest);
  }
  // Tree joints only; force elements and contacts are not mapped yet (docs/engines.md).
  Accepts accepts() const override { return {{}, engine_tree_joints()}; }
  std::unique_ptr<Simulator> create(const Model& model, const std::string& integrator, double setting) const override {
    const Case& c = find_engine_case("bullet", kCases, integrator, "step", setting);
    return bullet::create_simulator(model, c.integrator, setting);
  }

 private:
  std::string structure_unsupported_reason(const Model& model) const override { return bullet::unsupported_reason(model); }
};

}  // namespace

MBS_REGISTER_FORMULATION(Bullet);

}  // namespace mbs::bullet
