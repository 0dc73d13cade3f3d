// The size limit of the formulations that are dense by design (minimal: R and R^T M R; recursive's
// CRBA: the joint-space mass matrix H): a model whose dense objects would exceed kMaxDenseBytes, or
// whose one dense factorization (a step's, which --timeout cannot interrupt) would exceed
// kMaxUninterruptibleDenseWork, is refused up front, before anything of its size is allocated.
#pragma once

#include <fmt/format.h>

#include <string>

#include "core/cancellation.hpp"

namespace mbs {

inline constexpr double kMaxDenseBytes = 1024.0 * 1024.0 * 1024.0;  // 1 GiB

// Why a formulation refuses the model ("" when it takes it): `what` names the dense objects, `bytes`
// their size, `work` (flops) one factorization (0: none of that size).
inline std::string dense_limit_reason(const std::string& what, double bytes, double work) {
  if (bytes <= kMaxDenseBytes && work <= kMaxUninterruptibleDenseWork) return "";
  if (work <= 0.0)
    return fmt::format("dense by design: {} would take {:.3g} MB (limit {:.3g} MB): refused", what, bytes / 1e6,
                       kMaxDenseBytes / 1e6);
  return fmt::format("dense by design: {} would take {:.3g} MB and {:.2g} flops a factorization (limits {:.3g} MB, {:.2g} "
                     "flops): refused", what, bytes / 1e6, work, kMaxDenseBytes / 1e6, kMaxUninterruptibleDenseWork);
}

}  // namespace mbs
