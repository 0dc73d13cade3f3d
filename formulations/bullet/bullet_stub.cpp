// Built when CMake did not find libbullet-dev: the rows exist, every model is unsupported.
#include "bullet/bullet_adapter.hpp"

namespace mbs::bullet {

namespace {
constexpr const char* kNotBuilt =
    "engine not built: libbullet-dev (its double-precision build, pkg-config bullet-float64) was not found when "
    "CMake configured";
}  // namespace

std::string unsupported_reason(const Model& /*model*/) { return kNotBuilt; }

std::unique_ptr<Simulator> create_simulator(const Model& /*model*/, Integrator /*integrator*/, double /*h*/) {
  throw SolverError(kNotBuilt);
}

}  // namespace mbs::bullet
