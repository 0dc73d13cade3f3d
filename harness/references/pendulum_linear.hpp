// reference kind "pendulum_linear" (analysis problems): {kind, point, pivot}, a point mass hanging at
// rest below the pivot on one rod. Its linearization about that equilibrium has the exact spectrum
// +-i sqrt(g/l), each (dim - 1) times (run/linearization_case.hpp), the target of eigenvalue_error.
#pragma once

#include <Eigen/Dense>

#include "problem/reference_kinds.hpp"

namespace mbs {

class PendulumLinearReference final : public Reference {
 public:
  using Reference::Reference;
  int point = kNoPoint;   // point-mass index in the model
  Eigen::VectorXd pivot;  // local frame (m)

  std::vector<std::complex<double>> eigenvalues(const Problem& problem) const override;
};

}  // namespace mbs
