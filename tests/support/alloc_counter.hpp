// Exact heap-allocation counting for tests: this binary replaces operator new and interposes
// malloc (Eigen allocates with std::malloc, libstdc++ with operator new), counting only while a
// function runs under allocations_during().
#pragma once

#include <utility>

namespace mbs::testing {

// False in sanitizer builds, where the sanitizer owns malloc: allocation tests skip there.
bool allocation_counting_supported();
void start_counting_allocations();
long stop_counting_allocations();  // allocations since start
// The most heap bytes (malloc_usable_size) held at once between start and stop by the blocks that
// malloc and operator new allocated since start, less those freed (a block from before start freed
// in between counts against it): what the code under count needed at its peak.
long peak_counted_bytes();

// In sanitizer builds this counts nothing and returns 0: the release build is the one that asserts.
template <typename F>
long allocations_during(F&& f) {
  start_counting_allocations();
  std::forward<F>(f)();
  return stop_counting_allocations();
}

}  // namespace mbs::testing

// For tests whose point is the count itself.
#define MBS_SKIP_WITHOUT_ALLOCATION_COUNTING()                                    \
  if (!::mbs::testing::allocation_counting_supported())                           \
  GTEST_SKIP() << "allocation counting is off in sanitizer builds"
