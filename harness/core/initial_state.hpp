// Making a model's initial state consistent with its constraints (`--project-initial-state`).
#pragma once

#include <string>

#include "core/model.hpp"

namespace mbs {

// Projects the initial state onto the constraints: positions by mass-weighted Gauss-Newton onto
// Phi(q) = 0 (the smallest correction in the kinetic-energy norm), then velocities
// mass-orthogonally onto Phi_q v = 0; writes the result back into the model's points and bodies
// (rotations re-orthonormalized). The caller checks the result: a model whose joints cannot
// assemble stays violated. The projection is dense (redundant rows allowed): a model whose
// O(nc^2 (nc + nq)) work per iteration exceeds kMaxUninterruptibleDenseWork (core/cancellation.hpp)
// is left untouched and the reason returned (the load is not under a case's --timeout); otherwise
// an empty string.
[[nodiscard]] std::string project_initial_state(Model& model);

}  // namespace mbs
