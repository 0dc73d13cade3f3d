// Head and tail segments that stay compile-time sized on fixed-size paths: x.head<N>() when N is
// fixed, x.head(n) otherwise. Runtime-size segments of small fixed vectors go through Eigen's
// generic unaligned loops, a measurable share of a small model's step.
#pragma once

#include <Eigen/Core>

namespace mbs {

template <int N, typename V>
auto head_of(V& x, int n) {
  if constexpr (N == Eigen::Dynamic) return x.head(n);
  else return x.template head<N>();
}

template <int N, typename V>
auto tail_of(V& x, int n) {
  if constexpr (N == Eigen::Dynamic) return x.tail(n);
  else return x.template tail<N>();
}

}  // namespace mbs
