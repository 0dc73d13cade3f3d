// The budget of one case (--timeout): a thread that requests cancellation (core/formulation.hpp)
// when the budget is spent and lifts it again when the case ends. Runs see it once per step,
// set-up loops through throw_if_cancelled() (core/cancellation.hpp).
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "core/formulation.hpp"

namespace mbs {

class Watchdog {
 public:
  // seconds <= 0: no budget, no thread.
  explicit Watchdog(double seconds) : start_(std::chrono::steady_clock::now()) {
    if (seconds <= 0) return;
    thread_ = std::thread([this, seconds] {
      std::unique_lock<std::mutex> lock(mutex_);
      if (!cv_.wait_for(lock, std::chrono::duration<double>(seconds), [this] { return done_; }))
        request_cancellation(true);
    });
  }
  ~Watchdog() {
    if (thread_.joinable()) {
      {
        std::lock_guard<std::mutex> lock(mutex_);
        done_ = true;
      }
      cv_.notify_all();
      thread_.join();
    }
    request_cancellation(false);
  }
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

  double elapsed_s() const { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count(); }

 private:
  std::chrono::steady_clock::time_point start_;
  std::mutex mutex_;
  std::condition_variable cv_;
  bool done_ = false;
  std::thread thread_;
};

}  // namespace mbs
