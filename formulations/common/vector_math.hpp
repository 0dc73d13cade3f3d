// Sines and cosines of many independent angles through glibc's vector math library (libmvec, at
// most 4 ulp; tests/test_recursive.cpp bounds them against libm) where the build found it
// (MBS_HAVE_LIBMVEC, x86-64): four at a time (the AVX2 variants) where glibc reports AVX2 active,
// two at a time (SSE2) otherwise; one at a time through libm without libmvec. A loop of sines and
// cosines off a recursion's dependency chain is bound by their throughput, which the vector calls
// raise (docs/formulations.md has the measurements). "Active" is glibc's own view of the CPU,
// after its tunables: scripts/perf-check masks AVX2 there, so its instruction counts take the SSE2
// calls on every machine.
#pragma once

#include <cmath>

#include "common/cpu_features.hpp"

#if defined(MBS_HAVE_LIBMVEC) && defined(MBS_HAVE_CPU_FEATURES)
#include <immintrin.h>
extern "C" __m128d _ZGVbN2v_sin(__m128d x);  // glibc's vector ABI names (bits/math-vector.h)
extern "C" __m128d _ZGVbN2v_cos(__m128d x);
// The AVX2 variants take and return __m256d in AVX registers: declared for AVX2 code, which is the
// only code that calls them (clang refuses the call otherwise; g++ only warns, -Wpsabi).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpsabi"
extern "C" __attribute__((target("avx2"))) __m256d _ZGVdN4v_sin(__m256d x);
extern "C" __attribute__((target("avx2"))) __m256d _ZGVdN4v_cos(__m256d x);
#pragma GCC diagnostic pop
#endif

namespace mbs {

// From this many angles on the vector calls are used: below, a libm sincos per angle is as fast
// (one call each, where the vector path makes two) and costs fewer instructions.
inline constexpr int kVectorSinCosFrom = 8;

#if defined(MBS_HAVE_LIBMVEC) && defined(MBS_HAVE_CPU_FEATURES)
namespace detail {

// Four angles a call from i on while four remain; returns where it stopped.
template <class Phi, class Sin, class Cos>
__attribute__((target("avx2"))) int sin_cos_by_four(int i, int n, Phi& phi, Sin& si, Cos& co) {
  for (; i + 3 < n; i += 4) {
    const __m256d x = _mm256_set_pd(phi(i + 3), phi(i + 2), phi(i + 1), phi(i));
    alignas(32) double s[4], c[4];
    _mm256_store_pd(s, _ZGVdN4v_sin(x));
    _mm256_store_pd(c, _ZGVdN4v_cos(x));
    for (int k = 0; k < 4; ++k) {
      si(i + k) = s[k];
      co(i + k) = c[k];
    }
  }
  return i;
}
}  // namespace detail
#endif

// For i < n: si(i) = sin(phi(i)), co(i) = cos(phi(i)); phi, si, co are callables giving references
// (the angles may live in an array of records).
template <class Phi, class Sin, class Cos>
inline void sin_cos_all(int n, Phi&& phi, Sin&& si, Cos&& co) {
  int i = 0;
#if defined(MBS_HAVE_LIBMVEC) && defined(MBS_HAVE_CPU_FEATURES)
  if (n >= kVectorSinCosFrom && avx2_active()) i = detail::sin_cos_by_four(i, n, phi, si, co);
  for (; n >= kVectorSinCosFrom && i + 1 < n; i += 2) {
    const __m128d x = _mm_set_pd(phi(i + 1), phi(i));
    const __m128d s = _ZGVbN2v_sin(x), c = _ZGVbN2v_cos(x);
    _mm_storel_pd(&si(i), s);
    _mm_storeh_pd(&si(i + 1), s);
    _mm_storel_pd(&co(i), c);
    _mm_storeh_pd(&co(i + 1), c);
  }
#endif
  for (; i < n; ++i) {
    si(i) = std::sin(phi(i));
    co(i) = std::cos(phi(i));
  }
}

}  // namespace mbs
