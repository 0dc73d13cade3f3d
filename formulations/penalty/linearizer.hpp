// Linearization of formulation "penalty" (formulations/penalty/linearizer.cpp).
#pragma once

#include <memory>
#include <string>

#include "core/linearization.hpp"
#include "core/model.hpp"

namespace mbs::penalty {

std::string linearizer_unsupported_reason(const Model& model);
// alpha_per_mass, xi, omega: the simulator's own constants (penalty.cpp passes them).
std::unique_ptr<Linearizer> make_linearizer(const Model& model, double alpha_per_mass, double xi, double omega);

}  // namespace mbs::penalty
