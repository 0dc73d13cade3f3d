// The seam between the `bullet` formulation (bullet.cpp, always built) and the engine: the adapter
// (bullet_model.cpp, built when CMake finds libbullet-dev's double-precision build) or the stub
// (bullet_stub.cpp). No Bullet header here, so the formulation and its rows exist in either build.
#pragma once

#include <memory>
#include <string>

#include "core/formulation.hpp"

namespace mbs::bullet {

// How Bullet 3.24 steps a btMultiBody, every way at a fixed step: the setting is the step.
enum class Integrator {
  kWorldEuler,   // btMultiBodyDynamicsWorld::stepSimulation: semi-implicit Euler
  kWorldRk4,     // the same world, each btMultiBody with useRK4Integration(true)
  kDirectEuler,  // the btMultiBody's own calls without the world: the same semi-implicit Euler
};

// Empty when the adapter builds this model; otherwise why not (the stub: the engine is not built).
std::string unsupported_reason(const Model& model);
// Setup (the multibodies, the world, the initial velocities) for one model and nominal step h (s).
std::unique_ptr<Simulator> create_simulator(const Model& model, Integrator integrator, double h);

}  // namespace mbs::bullet
