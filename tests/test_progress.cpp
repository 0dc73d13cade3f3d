// bench's progress line: what it says, and that it is written only when enabled (a terminal).
#include <gtest/gtest.h>

#include <sstream>

#include "run/progress.hpp"

namespace mbs {
namespace {

TEST(Progress, LineNamesCaseTrialElapsedAndEstimate) {
  EXPECT_EQ(Progress::line(3, 17, "planar_pendulum", "alm-index3/trapezoidal", "tuning, trial 4: h = 0.01 s", 12.4, 75.0),
            "[3/17] planar_pendulum alm-index3/trapezoidal: tuning, trial 4: h = 0.01 s | 12 s elapsed, ~1 min 15 s left");
  EXPECT_EQ(Progress::line(1, 2, "n_four_bar", "projection/rk4", "", 0.2, -1.0), "[1/2] n_four_bar projection/rk4 | 0 s elapsed");
  EXPECT_EQ(Progress::line(2, 2, "p", "c", "timing", 3725.0, 0.0), "[2/2] p c: timing | 1 h 02 min elapsed, ~0 s left");
}

TEST(Progress, WritesOnlyWhenEnabledAndErasesItsLine) {
  std::ostringstream off, on;
  {
    Progress p(off, false, 2);
    p.begin_case("p", "a/b");
    p.update("timing");
    p.end_case();
    p.clear();
  }
  EXPECT_EQ(off.str(), "");
  {
    Progress p(on, true, 2);
    p.begin_case("p", "a/b");
    p.end_case();
    p.begin_case("p", "c/d");
    p.update("verifying");
  }  // the destructor erases the line
  const std::string s = on.str();
  EXPECT_NE(s.find("\r[1/2] p a/b | "), std::string::npos) << s;
  EXPECT_NE(s.find("\r[2/2] p c/d: verifying | "), std::string::npos) << s;
  EXPECT_NE(s.find(" left"), std::string::npos) << s;  // an estimate once a case is done
  EXPECT_EQ(s.substr(s.size() - 4), "\r\x1b[K");
}

}  // namespace
}  // namespace mbs
