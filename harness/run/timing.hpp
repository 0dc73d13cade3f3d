// CPU timing of whole simulations and of the calibration kernel.
#pragma once

#include <functional>

namespace mbs {

struct Timing {
  double median_s = 0.0;  // CPU seconds per call, median over samples
  double min_s = 0.0;     // CPU seconds per call, fastest sample
  int samples = 0;
  long calls_per_sample = 0;
};

// Thread CPU time (s).
double thread_cpu_seconds();

// Whether time_calls first calls fn() once, untimed (caches, lazy initialisation, first touch of
// memory), or the caller has just done the same work on the same objects: bench_case's
// verification run of the simulator it then times, which for a case of seconds saves one run.
enum class WarmUp { kCallFirst, kAlreadyWarm };

// Times fn() by samples of `calls_per_sample` back-to-back calls, the batch grown until a sample
// lasts >= 2 ms (so clock overhead and resolution do not matter), and samples taken until
// `min_total_s` of CPU time is spent and at least 7 samples exist (at most 1000).
Timing time_calls(const std::function<void()>& fn, double min_total_s, int min_samples = 7,
                  WarmUp warm_up = WarmUp::kCallFirst);

// The fixed calibration kernel: a plain fixed-size RK4 loop on a pendulum's angle ODE
// theta'' = -(g/L) sin(theta), 276 steps over 10 s. Returns the final angle (so it is not elided).
double calibration_kernel();

}  // namespace mbs
