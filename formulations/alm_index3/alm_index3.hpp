// Formulation "alm-index3" (alm_index3.cpp): the simulator factory, exposed for tests and
// measurements that choose the linear algebra themselves.
#pragma once

#include <memory>

#include "common/sparse_natural.hpp"
#include "core/formulation.hpp"

namespace mbs::alm_index3 {

// The trapezoidal ALI3-P simulator at step h (s); kAuto: dense or sparse by model size.
std::unique_ptr<Simulator> make_simulator(const Model& model, double h, LinearAlgebra la = LinearAlgebra::kAuto);

}  // namespace mbs::alm_index3
