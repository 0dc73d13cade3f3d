// Built when CMake did not find libdart-dev: the rows exist, every model is unsupported.
#include "dart/dart_adapter.hpp"

namespace mbs::dart {

namespace {
constexpr const char* kNotBuilt = "engine not built: libdart-dev was not found when CMake configured";
}  // namespace

std::string unsupported_reason(const Model& /*model*/) { return kNotBuilt; }

std::unique_ptr<Simulator> create_simulator(const Model& /*model*/, Integrator /*integrator*/, double /*h*/) {
  throw SolverError(kNotBuilt);
}

}  // namespace mbs::dart
