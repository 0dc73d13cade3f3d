// The message a problem text is rejected with, or "(accepted)": for tests of the loader's messages.
#pragma once

#include <string>

#include "problem/problem.hpp"

namespace mbs::testing {

inline std::string load_error(const std::string& text, const std::string& file = "bad.yaml") {
  try {
    load_problem_text(text, file);
  } catch (const ProblemError& e) {
    return e.what();
  }
  return "(accepted)";
}

}  // namespace mbs::testing
