// What a "partitioned" simulator reports beyond RunStats, for tests: dynamic_cast the Simulator
// that the formulation creates to PartitionedRun.
#pragma once

#include "partitioned/partition.hpp"

namespace mbs::partitioned {

// Re-partition rule: at the end of every accepted step, if the smallest Phi_d pivot ratio met by
// any stage of the step (PartitionedOde::pivot_ratio) has fallen below this fraction of its value
// when the partition was chosen, the partition is re-chosen from Phi_q at the step's end (if the
// rule picks the same coordinates, only the reference value is lowered to the current one).
// Close to 1 on purpose: the coordinates are then (nearly) a function of the configuration alone.
// Hysteresis makes them depend on the direction of motion, which breaks the symmetry under which
// the errors of a swing's descent and ascent cancel: a smaller factor gave the planar pendulum a
// larger drift and a smaller tuned step (docs/formulations.md, Method notes).
// The 1 % left avoids re-choosing at every step where two partitions are equally good.
inline constexpr double kRepartitionFactor = 0.99;

class PartitionedRun {
 public:
  virtual ~PartitionedRun() = default;
  // Changes of the independent coordinates in the last run.
  virtual long repartitions() const = 0;
  // The partition in use (at the end of a run: the last one chosen).
  virtual const Partition& partition() const = 0;
};

}  // namespace mbs::partitioned
