// What a "projection" / "unprojected" simulator reports beyond RunStats, for tests: dynamic_cast the
// Simulator that the formulation creates to ProjectionRun.
#pragma once

namespace mbs::projection {

class ProjectionRun {
 public:
  virtual ~ProjectionRun() = default;
  virtual int kept_rows() const = 0;     // independent constraint rows in G
  virtual int dropped_rows() const = 0;  // redundant rows removed at setup
  virtual bool projects() const = 0;     // projection after every step ("projection"), or none ("unprojected")
};

}  // namespace mbs::projection
