#include "run/progress.hpp"

#include <cmath>
#include <fmt/format.h>

namespace mbs {

namespace {
std::string duration(double s) {
  if (s < 60.0) return fmt::format("{:.0f} s", s);
  if (s < 3600.0) return fmt::format("{:.0f} min {:02.0f} s", std::floor(s / 60.0), std::fmod(s, 60.0));
  return fmt::format("{:.0f} h {:02.0f} min", std::floor(s / 3600.0), std::fmod(s, 3600.0) / 60.0);
}
}  // namespace

Progress::Progress(std::ostream& out, bool enabled, int total_cases) : out_(out), enabled_(enabled), total_(total_cases) {}

std::string Progress::line(int index, int total, const std::string& problem, const std::string& case_name,
                           const std::string& what, double elapsed_s, double left_s) {
  std::string s = fmt::format("[{}/{}] {} {}", index, total, problem, case_name);
  if (!what.empty()) s += ": " + what;
  s += " | " + duration(elapsed_s) + " elapsed";
  if (left_s >= 0.0) s += ", ~" + duration(left_s) + " left";
  return s;
}

double Progress::elapsed() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

void Progress::draw() {
  if (!enabled_) return;
  const double t = elapsed();
  // Cases differ by orders of magnitude (unsupported ones are instant): the mean of those done is
  // a rough guide, shown once there is one.
  const double left = done_ > 0 ? t / done_ * (total_ - done_) : -1.0;
  out_ << '\r' << line(done_ + 1, total_, problem_, case_, what_, t, left) << "\x1b[K" << std::flush;
  shown_ = true;
}

void Progress::begin_case(const std::string& problem, const std::string& case_name) {
  problem_ = problem;
  case_ = case_name;
  what_.clear();
  draw();
}

void Progress::update(const std::string& what) {
  what_ = what;
  draw();
}

void Progress::end_case() {
  ++done_;
  what_.clear();
}

void Progress::clear() {
  if (!enabled_ || !shown_) return;
  out_ << "\r\x1b[K" << std::flush;
  shown_ = false;
}

}  // namespace mbs
