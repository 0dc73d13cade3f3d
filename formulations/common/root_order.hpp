// The order in which a linearizer reports its finite eigenvalues, LinearModes' own: by |s|, ties
// (to 1e-9) by imaginary then real part.
#pragma once

#include <algorithm>
#include <cmath>
#include <vector>

namespace mbs {

// Sorts roots (each with .s, a std::complex<double>, and .magnitude = |s|, computed once: std::abs
// of a complex is a hypot call) in that order. Insertion sort: stable and without allocation.
template <class Root>
void sort_by_magnitude(std::vector<Root>& roots) {
  auto less = [](const Root& a, const Root& b) {
    const double tol = 1e-9 * std::max(a.magnitude, b.magnitude);
    if (std::abs(a.magnitude - b.magnitude) > tol) return a.magnitude < b.magnitude;
    if (std::abs(a.s.imag() - b.s.imag()) > tol) return a.s.imag() < b.s.imag();
    return a.s.real() < b.s.real() - tol;
  };
  for (size_t i = 1; i < roots.size(); ++i) {
    const Root v = roots[i];
    size_t j = i;
    for (; j > 0 && less(v, roots[j - 1]); --j) roots[j] = roots[j - 1];
    roots[j] = v;
  }
}

}  // namespace mbs
