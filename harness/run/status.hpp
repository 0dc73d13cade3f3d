// What became of a row, and which run of its case it is.
#pragma once

#include <fmt/format.h>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>

namespace mbs {

enum class CaseStatus {
  kPass,         // met the rule (robustly, when tuned)
  kFail,         // ran, but no setting met the rule
  kError,        // the solver stopped, or the case ran out of its time budget
  kUnsupported,  // the formulation does not take the problem (the message says why)
  kControl,      // a control case (expected to fail, IntegratorInfo::expected_failure) that did not pass
};

inline std::string_view name(CaseStatus s) {
  switch (s) {
    case CaseStatus::kPass: return "pass";
    case CaseStatus::kFail: return "fail";
    case CaseStatus::kError: return "error";
    case CaseStatus::kUnsupported: return "unsupported";
    case CaseStatus::kControl: return "control";
  }
  return "?";
}
inline std::string to_string(CaseStatus s) { return std::string(name(s)); }

inline std::ostream& operator<<(std::ostream& os, CaseStatus s) { return os << name(s); }

inline std::optional<CaseStatus> status_from_name(std::string_view s) {
  for (const CaseStatus c :
       {CaseStatus::kPass, CaseStatus::kFail, CaseStatus::kError, CaseStatus::kUnsupported, CaseStatus::kControl})
    if (name(c) == s) return c;
  return std::nullopt;
}

enum class RunKind {
  kTuned,      // the tuner's setting
  kGiven,      // --step / --tol
  kBaseline,   // --baseline-settings
  kPublished,  // the source's own step
};

inline std::string_view name(RunKind k) {
  switch (k) {
    case RunKind::kTuned: return "tuned";
    case RunKind::kGiven: return "given";
    case RunKind::kBaseline: return "baseline";
    case RunKind::kPublished: return "published";
  }
  return "?";
}
inline std::string to_string(RunKind k) { return std::string(name(k)); }

inline std::ostream& operator<<(std::ostream& os, RunKind k) { return os << name(k); }

inline std::optional<RunKind> run_kind_from_name(std::string_view s) {
  for (const RunKind k : {RunKind::kTuned, RunKind::kGiven, RunKind::kBaseline, RunKind::kPublished})
    if (name(k) == s) return k;
  return std::nullopt;
}

}  // namespace mbs

// Printed by name: fmt::format("{}", CaseStatus::kPass) is "pass".
template <>
struct fmt::formatter<mbs::CaseStatus> : fmt::formatter<std::string_view> {
  template <typename Context>
  auto format(mbs::CaseStatus x, Context& ctx) const {
    return fmt::formatter<std::string_view>::format(mbs::name(x), ctx);
  }
};
template <>
struct fmt::formatter<mbs::RunKind> : fmt::formatter<std::string_view> {
  template <typename Context>
  auto format(mbs::RunKind x, Context& ctx) const {
    return fmt::formatter<std::string_view>::format(mbs::name(x), ctx);
  }
};
