// What the engine plugins (simbody, mujoco; docs/engines.md) share: a table of cases, one per
// integrator of the engine, listed and looked up by name, and the tree joints their adapters map.
#pragma once

#include <fmt/format.h>

#include <array>
#include <cmath>
#include <string>
#include <vector>

#include "core/formulation.hpp"

namespace mbs {

// One case of an engine: its name, the engine's integrator, the line for --list, the tightest
// setting the tuner tries and, for a control, why it is expected to fail.
template <typename Integrator>
struct EngineCase {
  const char* name;
  Integrator integrator;
  const char* description;
  double tightest;
  const char* expected_failure = "";
};

template <typename Integrator, std::size_t N>
std::vector<IntegratorInfo> engine_integrators(const std::array<EngineCase<Integrator>, N>& cases, SettingKind kind,
                                               double loosest) {
  std::vector<IntegratorInfo> out;
  for (const auto& c : cases) out.push_back({c.name, kind, loosest, c.tightest, c.description, c.expected_failure});
  return out;
}

// The case named `integrator`, for a setting (what: "accuracy", "step") that must be positive and
// finite; a SolverError naming the engine otherwise.
template <typename Integrator, std::size_t N>
const EngineCase<Integrator>& find_engine_case(const char* engine, const std::array<EngineCase<Integrator>, N>& cases,
                                               const std::string& integrator, const char* what, double setting) {
  for (const auto& c : cases) {
    if (integrator != c.name) continue;
    if (!(setting > 0.0) || !std::isfinite(setting))
      throw SolverError(fmt::format("{}: the {} must be positive and finite, got {}", engine, what, setting));
    return c;
  }
  throw SolverError(fmt::format("{}: unknown integrator '{}'", engine, integrator));
}

// Every joint by its tree description (a mobilizer or joint of the engine, or a loop constraint).
inline std::vector<TreeJointType> engine_tree_joints() {
  return {TreeJointType::kRevolute, TreeJointType::kPrismatic, TreeJointType::kSpherical, TreeJointType::kFixed,
          TreeJointType::kRod};
}

}  // namespace mbs
