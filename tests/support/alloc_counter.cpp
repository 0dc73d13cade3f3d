#include "support/alloc_counter.hpp"

#include <atomic>
#include <cstdlib>
#include <malloc.h>
#include <new>

namespace {
std::atomic<bool> g_counting{false};
std::atomic<long> g_allocations{0};
std::atomic<long> g_live_bytes{0}, g_peak_bytes{0};
[[maybe_unused]] inline void count() {  // unused under ASan (below)
  if (g_counting.load(std::memory_order_relaxed)) g_allocations.fetch_add(1, std::memory_order_relaxed);
}
}  // namespace

// Under AddressSanitizer the allocator belongs to ASan: no interposition, counting unsupported.
#if defined(__SANITIZE_ADDRESS__)
#define MBS_COUNT_ALLOCATIONS 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define MBS_COUNT_ALLOCATIONS 0
#endif
#endif
#ifndef MBS_COUNT_ALLOCATIONS
#define MBS_COUNT_ALLOCATIONS 1
#endif

#if MBS_COUNT_ALLOCATIONS
// glibc lets the executable define malloc and free; forward to the real allocator.
extern "C" void* __libc_malloc(std::size_t);
extern "C" void __libc_free(void*);
extern "C" void* malloc(std::size_t n) {
  count();
  void* p = __libc_malloc(n);
  if (p && g_counting.load(std::memory_order_relaxed)) {
    const long live = g_live_bytes.fetch_add(static_cast<long>(malloc_usable_size(p)), std::memory_order_relaxed) +
                      static_cast<long>(malloc_usable_size(p));
    long peak = g_peak_bytes.load(std::memory_order_relaxed);
    while (live > peak && !g_peak_bytes.compare_exchange_weak(peak, live, std::memory_order_relaxed)) {
    }
  }
  return p;
}
extern "C" void free(void* p) {
  if (p && g_counting.load(std::memory_order_relaxed))
    g_live_bytes.fetch_sub(static_cast<long>(malloc_usable_size(p)), std::memory_order_relaxed);
  __libc_free(p);
}

// operator new is counted through malloc above; it is replaced so that the count does not depend on
// how libstdc++ was built.
void* operator new(std::size_t n) {
  if (void* p = malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t n) { return operator new(n); }
// GCC pairs operator new with free() here knowingly: both sides use the C allocator.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
#pragma GCC diagnostic pop
#endif

namespace mbs::testing {

bool allocation_counting_supported() { return MBS_COUNT_ALLOCATIONS != 0; }

void start_counting_allocations() {
  g_allocations = 0;
  g_live_bytes = 0;
  g_peak_bytes = 0;
  g_counting = true;
}

long stop_counting_allocations() {
  g_counting = false;
  return g_allocations.load();
}

long peak_counted_bytes() { return g_peak_bytes.load(); }

}  // namespace mbs::testing
