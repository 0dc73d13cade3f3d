// What a "projection" / "unprojected" simulator reports beyond RunStats, for tests: dynamic_cast the
// Simulator that the formulation creates to ProjectionRun; and its factory.
#pragma once

#include <memory>
#include <string>

#include "common/integrator_table.hpp"
#include "common/sparse_natural.hpp"
#include "core/formulation.hpp"

namespace mbs::projection {

class ProjectionRun {
 public:
  virtual ~ProjectionRun() = default;
  virtual int kept_rows() const = 0;     // independent constraint rows in G
  virtual int dropped_rows() const = 0;  // redundant rows removed at setup
  virtual bool projects() const = 0;     // projection after every step ("projection"), or none ("unprojected")
  virtual bool sparse() const = 0;       // sparse G and G M^-1 G^T (common/sparse_natural.hpp)
  // Baumgarte's feedback Phi'' + 2 alpha Phi' + beta^2 Phi = 0 (1/s), before the run (simulators
  // built with it, simulators.hpp's make_index1<true>; the others throw SolverError).
  virtual void set_baumgarte(double alpha, double beta) = 0;
};

// The explicit Runge-Kutta cases of the index-1 formulations ("projection", "unprojected",
// "baumgarte").
const ErkCases& index1_cases();

// The simulator of "projection" (project = true) or "unprojected" for one of index1_cases() at
// `setting` (SolverError for another or a setting that is not positive and finite); kAuto: dense
// or sparse by model size.
std::unique_ptr<Simulator> make_simulator(const Model& model, const std::string& integrator, double setting, bool project,
                                          LinearAlgebra la = LinearAlgebra::kAuto);

}  // namespace mbs::projection
