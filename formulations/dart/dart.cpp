// `dart`: the DART engine (a Skeleton of joints over a kinematic tree, Featherstone's articulated-
// body dynamics, impulse-based constraints) as rows of the table: World::step, the one integrator
// DART 6.12 offers a World or a Skeleton, at a fixed step. The engine behind dart_adapter.hpp is the
// adapter or, without libdart-dev, the stub (docs/engines.md).
#include <array>

#include "common/engine_cases.hpp"
#include "common/integrator_table.hpp"
#include "dart/dart_adapter.hpp"

namespace mbs::dart {

namespace {

using Case = EngineCase<Integrator>;

// World::step is semi-implicit Euler, first order: its energy error oscillates with an amplitude
// proportional to h, so the benchmark's energy rules need steps of microseconds. The range stops
// at 1e-4 s, as MuJoCo's and Bullet's euler (docs/engines.md has the figures).
constexpr std::array<Case, 1> kCases{{
    {"semi-implicit-euler", Integrator::kSemiImplicitEuler,
     "DART World::step: semi-implicit Euler (velocity, then position with it), 1st order, fixed step", 1e-4,
     "first order: the energy error is proportional to h, and the energy rules of the benchmark need steps below "
     "the tightest of its range, 1e-4 s (docs/engines.md)"},
}};

class Dart final : public Formulation {
 public:
  std::string name() const override { return "dart"; }
  std::string description() const override {
    return "the DART engine: a Skeleton over a kinematic tree, articulated-body dynamics (loops not mapped)";
  }
  FormulationOrigin origin() const override { return FormulationOrigin::kEngine; }
  std::vector<IntegratorInfo> integrators() const override {
    return engine_integrators(kCases, SettingKind::kFixedStep, kStepRange.loosest);
  }
  // Tree joints only; force elements and contacts are not mapped yet (docs/engines.md).
  Accepts accepts() const override { return {{}, engine_tree_joints()}; }
  std::unique_ptr<Simulator> create(const Model& model, const std::string& integrator, double setting) const override {
    const Case& c = find_engine_case("dart", kCases, integrator, "step", setting);
    return dart::create_simulator(model, c.integrator, setting);
  }

 private:
  std::string structure_unsupported_reason(const Model& model) const override { return dart::unsupported_reason(model); }
};

}  // namespace

MBS_REGISTER_FORMULATION(Dart);

}  // namespace mbs::dart
