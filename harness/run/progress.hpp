// Progress of a long bench run: one status line on stderr, rewritten in place (problem, case,
// what it is doing — tuner trial and setting, verifying, timing — elapsed time and an estimate of
// what is left). Only on a terminal: a pipe or a file gets nothing, and --quiet silences it.
#pragma once

#include <chrono>
#include <ostream>
#include <string>

namespace mbs {

class Progress {
 public:
  // total_cases: every case of every problem the run will do (the estimate's denominator).
  Progress(std::ostream& out, bool enabled, int total_cases);
  ~Progress() { clear(); }

  void begin_case(const std::string& problem, const std::string& case_name);
  void update(const std::string& what);  // within the case: "trial 3, h = 0.01 s", "timing"...
  void end_case();
  void clear();  // erase the line (before a table or a log line is printed)

  // The line itself: "[3/17] planar_pendulum alm-index3/trapezoidal: trial 4, h = 0.01 s | 12 s elapsed, ~40 s left".
  // left_s < 0: no estimate yet.
  static std::string line(int index, int total, const std::string& problem, const std::string& case_name,
                          const std::string& what, double elapsed_s, double left_s);

 private:
  double elapsed() const;
  void draw();

  std::ostream& out_;
  bool enabled_;
  int total_, done_ = 0;
  std::string problem_, case_, what_;
  bool shown_ = false;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

}  // namespace mbs
