// libFuzzer target for the problem loader: any input must load or be rejected with a ProblemError;
// anything else (another exception, a crash, a sanitizer report) is a bug.
#include <cstddef>
#include <cstdint>
#include <string>

#include "problem/problem.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    mbs::load_problem_text(text, "fuzz.yaml");
  } catch (const mbs::ProblemError&) {
    // rejected with a message: fine
  }
  return 0;
}
