#include "run/reference_setup.hpp"

#include <filesystem>

#include "problem/reference_kinds.hpp"

namespace mbs {

std::string converged_reference_path(const std::string& results_dir, const std::string& problem) {
  return (std::filesystem::path(results_dir) / problem / "reference" / "trajectory.csv").string();
}

ReferenceSetup attach_reference(Problem& problem, const ReferenceOptions& options) {
  ReferenceSetup setup;
  problem.reference_trajectory.reset();
  if (!problem.reference || problem.analysis) return setup;
  problem.reference_trajectory = problem.reference->trajectory(problem, options, setup);
  return setup;
}

}  // namespace mbs
