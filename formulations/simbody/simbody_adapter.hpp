// The seam between the `simbody` formulation (simbody.cpp, always built) and the engine: the
// adapter (simbody_model.cpp, built when CMake finds libsimbody-dev) or the stub (simbody_stub.cpp).
// No Simbody header here, so the formulation and its rows exist in either build.
#pragma once

#include <algorithm>
#include <memory>
#include <string>

#include "core/formulation.hpp"

namespace mbs::simbody {

// Simbody's integrators (SimTKmath), every one error-controlled: the setting is the accuracy.
// kCPodes: CPodesIntegrator with Simbody's default method, BDF with Newton iterations.
enum class Integrator { kMerson, kFeldberg, kRk3, kVerlet, kSemiExplicitEuler2, kCPodes };

// An integrator and its constraint tolerance (setConstraintTolerance). Simbody's default ties the
// latter to the accuracy; a fixed one holds loop constraints near round-off at any accuracy, which
// keeps A02's cranks on their branch (docs/engines.md, "Simbody at A02's singular positions").
struct Method {
  Integrator integrator;
  double constraint_tolerance = 0.0;  // 0: tied to the accuracy, Simbody's default

  // The tolerance the integrator gets at `accuracy`: the accuracy, or the fixed one if tighter.
  double constraint_tolerance_at(double accuracy) const {
    return constraint_tolerance > 0.0 ? std::min(constraint_tolerance, accuracy) : accuracy;
  }
};

// Empty when the adapter builds this model; otherwise why not (the stub: the engine is not built).
std::string unsupported_reason(const Model& model);
// Setup (the Simbody system, its initial state and the integrator) for one model and accuracy.
std::unique_ptr<Simulator> create_simulator(const Model& model, Method method, double accuracy);
// Linearization about the initial configuration (Simbody's M and differences of its dynamics): empty
// when the adapter linearizes this model (a tree, gravity the only load), otherwise why not.
std::string linearization_unsupported_reason(const Model& model);
std::unique_ptr<Linearizer> create_linearizer(const Model& model);

}  // namespace mbs::simbody
