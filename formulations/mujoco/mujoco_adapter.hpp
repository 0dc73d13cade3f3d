// The seam between the `mujoco` formulation (mujoco.cpp, always built) and the engine: the adapter
// (mujoco_model.cpp, built when CMake finds libmujoco-dev) or the stub (mujoco_stub.cpp). No MuJoCo
// header here, so the formulation and its rows exist in either build.
#pragma once

#include <memory>
#include <string>

#include "core/formulation.hpp"

namespace mbs::mujoco {

// MuJoCo 2.2.2's integrators (mjtIntegrator), every one at a fixed step: the setting is the step.
enum class Integrator { kEuler, kRk4, kImplicit };

// Empty when the adapter builds this model; otherwise why not (the stub: the engine is not built).
std::string unsupported_reason(const Model& model);
// Setup (the MuJoCo model and data, the initial velocities) for one model and nominal step h (s).
std::unique_ptr<Simulator> create_simulator(const Model& model, Integrator integrator, double h);
// Setup of the linearization about the initial configuration (mjd_transitionFD), for a model the
// adapter builds.
std::unique_ptr<Linearizer> create_linearizer(const Model& model);

}  // namespace mbs::mujoco
