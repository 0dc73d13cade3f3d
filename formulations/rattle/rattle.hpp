// Formulation "rattle" (rattle.cpp): the composition coefficients and the simulator factory,
// exposed for tests that check the coefficients or run a composition directly.
#pragma once

#include <memory>
#include <vector>

#include "common/sparse_natural.hpp"
#include "core/formulation.hpp"

namespace mbs::rattle {

// Step-size fractions gamma_i of a symmetric composition of RATTLE steps (sum 1): {1} for plain
// RATTLE (order 2), Suzuki's 5 stages (order 4), Kahan & Li's s9odr6a 9 stages (order 6).
struct Composition {
  const char* name;  // the case's integrator name
  int order;
  std::vector<double> gamma;
};
const std::vector<Composition>& compositions();

// The RATTLE simulator with a composition of the given fractions at step h (s); kAuto: dense or
// sparse G M^-1 G^T by model size (common/sparse_natural.hpp).
std::unique_ptr<Simulator> make_simulator(const Model& model, const std::vector<double>& gamma, double h,
                                          LinearAlgebra la = LinearAlgebra::kAuto);

}  // namespace mbs::rattle
