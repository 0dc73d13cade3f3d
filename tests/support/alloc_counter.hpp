// Exact heap-allocation counting for tests: this binary replaces operator new and interposes
// malloc (Eigen allocates with std::malloc, libstdc++ with operator new), counting only while a
// function runs under allocations_during().
#pragma once

#include <utility>

namespace mbs::testing {

void start_counting_allocations();
long stop_counting_allocations();  // allocations since start

template <typename F>
long allocations_during(F&& f) {
  start_counting_allocations();
  std::forward<F>(f)();
  return stop_counting_allocations();
}

}  // namespace mbs::testing
