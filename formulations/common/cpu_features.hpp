// glibc's view of the CPU's features after its tunables (<sys/platform/x86.h>, CPU_FEATURE_ACTIVE),
// where there is one: MBS_HAVE_CPU_FEATURES. The header is C and spells bool `_Bool`, which g++
// accepts in C++ and clang does not (the sanitized tests are built by clang).
#pragma once

#if defined(__x86_64__) && __has_include(<sys/platform/x86.h>)
#define MBS_HAVE_CPU_FEATURES 1
#if defined(__clang__)
#define _Bool bool
#include <sys/platform/x86.h>
#undef _Bool
#else
#include <sys/platform/x86.h>
#endif
#endif

#if defined(MBS_HAVE_CPU_FEATURES)
namespace mbs {
// FMA active after glibc's tunables: scripts/perf-check masks it, so that its instruction counts
// take the code without FMA on every machine.
inline bool fma_active() {
  static const bool active = CPU_FEATURE_ACTIVE(FMA);
  return active;
}
inline bool avx2_active() {
  static const bool active = CPU_FEATURE_ACTIVE(AVX2);
  return active;
}
}  // namespace mbs
#endif
