// Times at which a sampled signal crosses a level, located by cubic Hermite interpolation between
// samples (values and their time derivatives), so the error is O(h^4) rather than linear
// interpolation's O(h^2): periods measured at a coarse step stay as accurate as the step itself.
#pragma once

#include <vector>

namespace mbs {

struct Sample {
  double t, x, xdot;
};

enum class Direction { kAny, kRising, kFalling };

std::vector<double> crossing_times(const std::vector<Sample>& samples, double level, Direction direction);

}  // namespace mbs
