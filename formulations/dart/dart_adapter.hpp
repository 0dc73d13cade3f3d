// The seam between the `dart` formulation (dart.cpp, always built) and the engine: the adapter
// (dart_model.cpp, built when CMake finds libdart-dev) or the stub (dart_stub.cpp). No DART header
// here, so the formulation and its rows exist in either build.
#pragma once

#include <memory>
#include <string>

#include "core/formulation.hpp"

namespace mbs::dart {

// What DART 6.12 offers to advance a World or a Skeleton: World::step, semi-implicit Euler at a
// fixed step (the setting is the step). dart/integration's RK4Integrator is no case: it integrates
// an IntegrableSystem, which neither World nor Skeleton is in 6.12, and it is itself abstract (it
// does not implement Integrator's integratePos and integrateVel) (docs/engines.md).
enum class Integrator { kSemiImplicitEuler };

// Empty when the adapter builds this model; otherwise why not (the stub: the engine is not built).
std::string unsupported_reason(const Model& model);
// Setup (the Skeleton in its World, the initial velocities) for one model and nominal step h (s).
std::unique_ptr<Simulator> create_simulator(const Model& model, Integrator integrator, double h);

}  // namespace mbs::dart
