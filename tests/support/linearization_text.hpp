// A linearization as text (coordinates, rule, every eigenvalue with its judgement), for test
// failure messages and dumps.
#pragma once

#include <cstdio>
#include <string>

#include "core/linearization.hpp"

namespace mbs::testing {

inline std::string dump(const Linearization& lin) {
  std::string out = lin.coordinates + "\n" + lin.rule + "\n";
  char buf[400];
  for (const Eigenvalue& e : lin.eigenvalues) {
    std::snprintf(buf, sizeof buf, "  %+.16e %+.16ei  %-8s %s\n", e.s.real(), e.s.imag(), e.is_true ? "TRUE" : "spurious",
                  e.why.c_str());
    out += buf;
  }
  return out;
}

}  // namespace mbs::testing
