// A case whose --timeout ran out while it was being tuned.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "run/bench_case.hpp"

namespace mbs::testing {

// The budget runs out between trials or, on a loaded machine, inside a trial's set-up (create()):
// either phase is where it ran out, so either is the right message. `after`: how the elapsed
// seconds begin ("2" for a 2 s budget), or nothing.
inline ::testing::AssertionResult timed_out_while_tuning(const CaseResult& r, const std::string& after = "") {
  if (r.status != CaseStatus::kError) return ::testing::AssertionFailure() << "status " << r.status << ": " << r.message;
  for (const char* phase : {"tuning", "set-up (tuning)"})
    if (r.message.rfind(std::string("timed out in ") + phase + " after " + after, 0) == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "message '" << r.message << "' is not a timeout while tuning";
}

}  // namespace mbs::testing
