#include "run/crossings.hpp"

#include <cmath>

namespace mbs {

std::vector<double> crossing_times(const std::vector<Sample>& s, double level, Direction direction) {
  std::vector<double> out;
  for (size_t i = 1; i < s.size(); ++i) {
    const double a = s[i - 1].x - level, b = s[i].x - level;
    const bool rising = a < 0 && b >= 0, falling = a > 0 && b <= 0;
    if (!(rising || falling)) continue;
    if ((direction == Direction::kRising && !rising) || (direction == Direction::kFalling && !falling)) continue;
    const double h = s[i].t - s[i - 1].t;
    // Hermite cubic p(u), u in [0, 1], matching values and slopes at both ends.
    auto p = [&](double u) {
      const double u2 = u * u, u3 = u2 * u;
      return (2 * u3 - 3 * u2 + 1) * a + (u3 - 2 * u2 + u) * h * s[i - 1].xdot + (-2 * u3 + 3 * u2) * b +
             (u3 - u2) * h * s[i].xdot;
    };
    // Bisection keeps the bracket: robust even where the cubic is not monotone.
    double lo = 0, hi = 1, plo = a;
    for (int it = 0; it < 60; ++it) {
      const double mid = 0.5 * (lo + hi), pm = p(mid);
      if ((pm < 0) == (plo < 0)) lo = mid, plo = pm;
      else hi = mid;
    }
    out.push_back(s[i - 1].t + 0.5 * (lo + hi) * h);
  }
  return out;
}

}  // namespace mbs
