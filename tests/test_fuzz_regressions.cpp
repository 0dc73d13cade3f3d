// Every input in tests/fuzz/regressions/ (crashes the loader fuzzer found, and hand-made nasty
// inputs) must load or be rejected with a ProblemError carrying file and position; nothing else.
#include <gtest/gtest.h>

#include <filesystem>
#include <regex>

#include "problem/problem.hpp"

namespace mbs {
namespace {

TEST(FuzzRegressions, EveryInputIsLoadedOrRejectedWithAMessage) {
  const std::filesystem::path dir = MBS_SOURCE_DIR "/tests/fuzz/regressions";
  int n = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    ++n;
    const std::string file = entry.path().string();
    try {
      load_problem(file);
    } catch (const ProblemError& e) {
      // "file:line:column: what", or "file: what" for a whole-file problem (cannot open it).
      EXPECT_TRUE(std::regex_search(e.what(), std::regex("^" + std::regex_replace(file, std::regex(R"([.^$|()\[\]{}*+?\\])"), R"(\$&)") +
                                                         ":([0-9]+:[0-9]+:)? ")))
          << e.what();
    }
  }
  EXPECT_GE(n, 3);
}

}  // namespace
}  // namespace mbs
