// Built when CMake did not find libsimbody-dev: the rows exist, every model is unsupported.
#include "simbody/simbody_adapter.hpp"

namespace mbs::simbody {

namespace {
constexpr const char* kNotBuilt = "engine not built: libsimbody-dev was not found when CMake configured";
}  // namespace

std::string unsupported_reason(const Model& /*model*/) { return kNotBuilt; }

std::unique_ptr<Simulator> create_simulator(const Model& /*model*/, Method /*method*/, double /*accuracy*/) {
  throw SolverError(kNotBuilt);
}

std::string linearization_unsupported_reason(const Model& /*model*/) { return kNotBuilt; }

std::unique_ptr<Linearizer> create_linearizer(const Model& /*model*/) { throw SolverError(kNotBuilt); }

}  // namespace mbs::simbody
