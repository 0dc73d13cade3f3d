#include "run/timing.hpp"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <ctime>
#include <vector>

namespace mbs {

double thread_cpu_seconds() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

Timing time_calls(const std::function<void()>& fn, double min_total_s, int min_samples, WarmUp warm_up) {
  if (warm_up == WarmUp::kCallFirst) fn();
  std::vector<double> samples;
  double total = 0.0;
  long batch = 1;
  for (;;) {
    const double t0 = thread_cpu_seconds();
    for (long i = 0; i < batch; ++i) fn();
    const double dt = thread_cpu_seconds() - t0;
    if (dt >= 2e-3 || batch >= (1L << 30)) {
      // The sizing run that settled the batch ran at it: it is the first sample (for a case of
      // seconds, one run fewer).
      total += dt;
      samples.push_back(dt / batch);
      break;
    }
    batch = dt <= 0 ? batch * 16 : std::max(batch * 2, static_cast<long>(batch * 2.5e-3 / dt));
  }
  while ((total < min_total_s || static_cast<int>(samples.size()) < min_samples) && samples.size() < 1000) {
    const double t0 = thread_cpu_seconds();
    for (long i = 0; i < batch; ++i) fn();
    const double dt = thread_cpu_seconds() - t0;
    total += dt;
    samples.push_back(dt / batch);
  }
  Timing t;
  t.samples = static_cast<int>(samples.size());
  t.calls_per_sample = batch;
  t.min_s = *std::min_element(samples.begin(), samples.end());
  std::nth_element(samples.begin(), samples.begin() + samples.size() / 2, samples.end());
  t.median_s = samples[samples.size() / 2];
  return t;
}

namespace {
// Opaque to the optimiser so the kernel cannot be constant-folded across calls.
volatile double g_over_l = 9.81;
volatile double theta_start = -M_PI / 2;
}  // namespace

double calibration_kernel() {
  using V2 = Eigen::Vector2d;  // (theta, theta_dot)
  const double w2 = g_over_l;
  constexpr int kSteps = 276;
  const double h = 10.0 / kSteps;
  auto f = [w2](const V2& y) { return V2(y[1], -w2 * std::sin(y[0])); };
  V2 y(theta_start, 0.0);
  for (int i = 0; i < kSteps; ++i) {
    const V2 k1 = f(y);
    const V2 k2 = f(y + 0.5 * h * k1);
    const V2 k3 = f(y + 0.5 * h * k2);
    const V2 k4 = f(y + h * k3);
    y += (h / 6.0) * (k1 + 2.0 * k2 + 2.0 * k3 + k4);
  }
  return y[0];
}

}  // namespace mbs
