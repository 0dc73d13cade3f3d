// Linearization of formulation "partitioned" about a static equilibrium, in its own reduced
// coordinates: the independent natural coordinates y = q_i that its partition rule picks at q0.
#pragma once

#include <memory>
#include <string>

#include "core/linearization.hpp"
#include "core/model.hpp"

namespace mbs::partitioned {

std::string linearizer_unsupported_reason(const Model& model);
std::unique_ptr<Linearizer> make_linearizer(const Model& model);

}  // namespace mbs::partitioned
