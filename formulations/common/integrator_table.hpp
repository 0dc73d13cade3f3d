// The tuner's standard setting ranges, and the table of the explicit Runge-Kutta methods that a
// formulation integrating an ODE offers (erk_simulators.hpp builds their simulators): a
// formulation's integrators() and create() both read its ErkCases, so a name is listed once.
#pragma once

#include <fmt/format.h>

#include <cmath>
#include <string>
#include <vector>

#include "common/explicit_rk.hpp"
#include "core/formulation.hpp"

namespace mbs {

// IntegratorInfo::loosest, tightest.
struct SettingRange {
  double loosest, tightest;
};
// Fixed steps h (s): an explicit method's stability, not the tuner, stops it well before 0.5 s.
inline constexpr SettingRange kStepRange{0.5, 1e-5};
// Tolerances rtol = atol of the adaptive methods.
inline constexpr SettingRange kToleranceRange{1e-2, 1e-13};

// How a method steps, i.e. which simulator erk_simulators.hpp builds for it.
enum class ErkStepper {
  kRk4,           // classical RK4 (Rk4)
  kButcherFixed,  // a table's propagating weights at a fixed step (FixedButcherRk)
  kEmbedded,      // an embedded pair, adaptive (EmbeddedRk)
};

// One explicit method: its name in a case ("rk4"; after a formulation's prefix: "aba-rk4"), how it
// is tuned, its line for --list, and how its simulator is made.
struct ErkMethod {
  const char* name;
  SettingKind kind;
  SettingRange range;
  const char* description;
  ErkStepper stepper;
  ButcherTable (*table)();  // the coefficients (not for kRk4)
};

// ARKODE's tables by name (explicit_rk.hpp).
inline ButcherTable dopri5_table() { return ButcherTable::from_arkode("dopri5"); }
inline ButcherTable fehlberg8_table() { return ButcherTable::from_arkode("fehlberg8"); }

inline constexpr ErkMethod kRk4{"rk4", SettingKind::kFixedStep, kStepRange, "classical Runge-Kutta, fixed step",
                                ErkStepper::kRk4, nullptr};
inline constexpr ErkMethod kDop853Fixed{"dop853-fixed", SettingKind::kFixedStep, kStepRange,
                                        "Dormand-Prince's 8th-order method of DOP853 (12 stages) at a fixed step",
                                        ErkStepper::kButcherFixed, &ButcherTable::dop853};
inline constexpr ErkMethod kFehlberg8Fixed{
    "fehlberg8-fixed", SettingKind::kFixedStep, kStepRange,
    "Fehlberg's 8th-order weights (ARKODE's 8(7) table, 13 stages) at a fixed step", ErkStepper::kButcherFixed,
    &fehlberg8_table};
inline constexpr ErkMethod kDopri5{"dopri5", SettingKind::kTolerance, kToleranceRange,
                                   "Dormand-Prince 5(4), adaptive (ARKODE's table)", ErkStepper::kEmbedded,
                                   &dopri5_table};
inline constexpr ErkMethod kFehlberg8{"fehlberg8", SettingKind::kTolerance, kToleranceRange,
                                      "Fehlberg 8(7), 13 stages, adaptive (ARKODE's table)", ErkStepper::kEmbedded,
                                      &fehlberg8_table};

// A formulation's own algorithm under which every method is offered (recursive: "aba-" and
// "crba-"), prefixed to the methods' names and descriptions.
struct ErkVariant {
  const char* prefix;
  const char* description;
};

// A case found by ErkCases::find: the method and the index of its variant.
struct ErkCase {
  const ErkMethod* method;
  int variant;
};

// A formulation's explicit cases: each method in the order given, under each variant in turn.
class ErkCases {
 public:
  ErkCases(std::vector<const ErkMethod*> methods, std::vector<ErkVariant> variants = {{"", ""}})
      : methods_(std::move(methods)), variants_(std::move(variants)) {}

  std::vector<IntegratorInfo> integrators() const {
    std::vector<IntegratorInfo> out;
    for (const ErkVariant& v : variants_)
      for (const ErkMethod* m : methods_)
        out.push_back({std::string(v.prefix) + m->name, m->kind, m->range.loosest, m->range.tightest,
                       *v.description ? fmt::format("{}; {}", v.description, m->description) : m->description, ""});
    return out;
  }

  // The case `integrator` at a positive, finite setting; SolverError naming `formulation` otherwise.
  ErkCase find(const std::string& formulation, const std::string& integrator, double setting) const {
    std::string known;
    for (int k = 0; k < static_cast<int>(variants_.size()); ++k)
      for (const ErkMethod* m : methods_) {
        const std::string name = std::string(variants_[k].prefix) + m->name;
        if (name != integrator) {
          known += (known.empty() ? "" : ", ") + name;
          continue;
        }
        if (!(setting > 0.0) || !std::isfinite(setting))
          throw SolverError(fmt::format("{}: the setting must be positive and finite, got {}", formulation, setting));
        return {m, k};
      }
    throw SolverError(fmt::format("{}: unknown integrator '{}' (known: {})", formulation, integrator, known));
  }

 private:
  std::vector<const ErkMethod*> methods_;
  std::vector<ErkVariant> variants_;
};

}  // namespace mbs
