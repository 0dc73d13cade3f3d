// Built when CMake did not find libmujoco-dev: the rows exist, every model is unsupported.
#include "mujoco/mujoco_adapter.hpp"

namespace mbs::mujoco {

namespace {
constexpr const char* kNotBuilt = "engine not built: libmujoco-dev was not found when CMake configured";
}  // namespace

std::string unsupported_reason(const Model& /*model*/) { return kNotBuilt; }

std::unique_ptr<Simulator> create_simulator(const Model& /*model*/, Integrator /*integrator*/, double /*h*/) {
  throw SolverError(kNotBuilt);
}

std::unique_ptr<Linearizer> create_linearizer(const Model& /*model*/) { throw SolverError(kNotBuilt); }

}  // namespace mbs::mujoco
