#include "run/reference_setup.hpp"

#include <cmath>
#include <filesystem>
#include <fmt/format.h>
#include <iostream>

#include "references/converged.hpp"
#include "references/simple_pendulum.hpp"

namespace mbs {

std::string converged_reference_path(const std::string& results_dir, const std::string& problem) {
  return (std::filesystem::path(results_dir) / problem / "reference" / "trajectory.csv").string();
}

namespace {
void to_stderr(const std::string& line) { std::cerr << "bench: " << line << "\n"; }

// The exact solution at the output times: no uncertainty beyond round-off.
std::shared_ptr<const ReferenceTrajectory> simple_pendulum_trajectory(const Problem& problem) {
  const SimplePendulumExact exact = SimplePendulumExact::from_problem(problem);
  auto ref = std::make_shared<ReferenceTrajectory>();
  ref->kind = "simple_pendulum_exact";
  ref->dim = problem.model.dim;
  ref->dt = problem.run.output_interval;
  ref->t_end = problem.run.end_time;
  const int samples = static_cast<int>(std::ceil(ref->t_end / ref->dt - 1e-9)) + 1;
  ref->x.resize(samples, ref->dim);
  for (int k = 0; k < samples; ++k) ref->x.row(k) = exact.position(std::min(k * ref->dt, ref->t_end)).transpose();
  ref->provenance = "exact solution (Jacobi elliptic functions)";
  return ref;
}
}  // namespace

ReferenceSetup attach_reference(Problem& problem, const ReferenceOptions& options) {
  ReferenceSetup setup;
  problem.reference_trajectory.reset();
  if (!problem.reference || problem.analysis) return setup;
  if (problem.reference->kind == "simple_pendulum_exact") {
    problem.reference_trajectory = simple_pendulum_trajectory(problem);
    setup.note = problem.reference_trajectory->provenance;
    return setup;
  }
  if (problem.reference->kind != "converged") return setup;
  const std::string path = converged_reference_path(options.results_dir, problem.name);
  std::string why;
  if (!options.rebuild) {
    if (auto stored = read_converged_reference(problem, path, &why)) {
      problem.reference_trajectory = stored;
      setup.note = fmt::format("converged reference read from {} (uncertainty {:.3g} m)", path, stored->uncertainty);
      return setup;
    }
  } else {
    why = "--rebuild-reference";
  }
  to_stderr(fmt::format("{}: computing the converged reference ({})", problem.name, why));
  problem.reference_trajectory = compute_converged_reference(problem, to_stderr);
  setup.computed = true;
  setup.note = fmt::format("converged reference computed: {}; uncertainty {:.3g} m", problem.reference_trajectory->provenance,
                           problem.reference_trajectory->uncertainty);
  to_stderr(fmt::format("{}: {}", problem.name, setup.note));
  return setup;
}

}  // namespace mbs
