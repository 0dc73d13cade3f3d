// Linearization of formulation "ida-index3" (formulations/ida_index3/linearizer.cpp).
#pragma once

#include <memory>
#include <string>

#include "core/linearization.hpp"
#include "core/model.hpp"

namespace mbs::ida_index3 {

std::string linearizer_unsupported_reason(const Model& model);
std::unique_ptr<Linearizer> make_linearizer(const Model& model);

}  // namespace mbs::ida_index3
