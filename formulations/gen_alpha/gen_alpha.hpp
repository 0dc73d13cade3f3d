// Formulation "gen-alpha" (gen_alpha.cpp): the simulator factory and the method's coefficients,
// exposed for tests that choose the linear algebra or check the coefficients themselves.
#pragma once

#include <memory>

#include "common/sparse_natural.hpp"
#include "core/formulation.hpp"

namespace mbs::gen_alpha {

// Chung & Hulbert's parameters for spectral radius at infinity rho_inf (Arnold & Bruels 2007, eq. 10):
// second order, and the high-frequency dissipation rho_inf in [0, 1] chooses.
struct Coefficients {
  double alpha_m, alpha_f, gamma, beta;
};
Coefficients coefficients(double rho_inf);

// The index-3 generalized-alpha simulator at step h (s); kAuto: dense or sparse by model size.
std::unique_ptr<Simulator> make_simulator(const Model& model, double rho_inf, double h,
                                          LinearAlgebra la = LinearAlgebra::kAuto);

}  // namespace mbs::gen_alpha
