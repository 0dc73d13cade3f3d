// Linearization of formulation "alm-index3" (formulations/alm_index3/linearizer.cpp).
#pragma once

#include <memory>
#include <string>

#include "core/linearization.hpp"
#include "core/model.hpp"

namespace mbs::alm_index3 {

std::string linearizer_unsupported_reason(const Model& model);
// alpha_per_mass: the simulator's penalty factor per unit of the largest mass (alm_index3.cpp passes it).
std::unique_ptr<Linearizer> make_linearizer(const Model& model, double alpha_per_mass);

}  // namespace mbs::alm_index3
