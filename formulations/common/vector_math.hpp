// Sines and cosines of many independent angles, two at a time through glibc's vector math library
// (libmvec's SSE2 variants, at most 4 ulp; tests/test_recursive.cpp bounds them against libm) where
// the build found it (MBS_HAVE_LIBMVEC, x86-64), one at a time through libm otherwise. A loop of
// sines and cosines off a recursion's dependency chain is bound by their throughput, which the
// vector calls raise (docs/formulations.md has the measurement).
#pragma once

#include <cmath>

#if defined(MBS_HAVE_LIBMVEC) && defined(__x86_64__)
#include <emmintrin.h>
extern "C" __m128d _ZGVbN2v_sin(__m128d x);  // glibc's vector ABI names (bits/math-vector.h)
extern "C" __m128d _ZGVbN2v_cos(__m128d x);
#endif

namespace mbs {

// From this many angles on the vector calls are used: below, a libm sincos per angle is as fast
// (one call each, where the vector path makes two) and costs fewer instructions.
inline constexpr int kVectorSinCosFrom = 8;

// For i < n: si(i) = sin(phi(i)), co(i) = cos(phi(i)); phi, si, co are callables giving references
// (the angles may live in an array of records).
template <class Phi, class Sin, class Cos>
inline void sin_cos_all(int n, Phi&& phi, Sin&& si, Cos&& co) {
  int i = 0;
#if defined(MBS_HAVE_LIBMVEC) && defined(__x86_64__)
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
