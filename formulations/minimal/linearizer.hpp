// Linearization of formulation "minimal" in joint angles (formulations/minimal/linearizer.cpp).
#pragma once

#include <memory>
#include <string>

#include "core/linearization.hpp"
#include "core/model.hpp"

namespace mbs::minimal {

// Empty when the model is a tree of rods hanging from ground (planar or spatial) plus free points;
// otherwise why not (closed loops, redundant rods, floating chains).
std::string linearizer_unsupported_reason(const Model& model);
std::unique_ptr<Linearizer> make_linearizer(const Model& model);

}  // namespace mbs::minimal
