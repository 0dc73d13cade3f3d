// Reads measured points at fixed times t_k = min(k dt, t_end) from the states a run reports: cubic
// Hermite interpolation between consecutive states, from each point's position and velocity. Every
// formulation's trajectory is read the same way whatever its steps, and the interpolation error is
// O(h^4) in the step, below the error of any method of order <= 3 at that step.
// Further scalar values of a state that have no rate in it (energy, |Phi|) may ride along: the same
// formula with the secant between the two states as their rate, which is linear interpolation.
#pragma once

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <vector>

#include "core/element.hpp"

namespace mbs {

class PointSampler {
 public:
  // Sizes everything once; on_step never allocates.
  PointSampler(std::vector<Combo> points, int dim, double dt, double t_end, int scalars = 0)
      : points_(std::move(points)), dim_(dim), scalars_(scalars), dt_(dt), t_end_(t_end),
        samples_(static_cast<int>(std::ceil(t_end / dt - 1e-9)) + 1),
        p0_(size()), pd0_(Eigen::VectorXd::Zero(size())), p1_(size()), pd1_(Eigen::VectorXd::Zero(size())), x_(size()) {}

  int width() const { return dim_ * static_cast<int>(points_.size()); }  // the points' coordinates
  int size() const { return width() + scalars_; }                        // values per sample
  int samples() const { return samples_; }
  double time(int k) const { return std::min(k * dt_, t_end_); }
  int next() const { return next_; }  // the first sample not yet taken
  void reset() { next_ = 0, have_ = false; }

  // With every reported state, in order; sink(k, x) receives sample k (width() values) for every
  // sample time up to t. The last sample is taken from a state within round-off of t_end.
  template <class Sink>
  void on_step(double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v, Sink&& sink) {
    on_step(t, q, v, Eigen::VectorXd(), sink);
  }
  // The same with the state's scalar values (as many as the constructor's `scalars`): x holds the
  // points' coordinates, then those values.
  template <class Sink>
  void on_step(double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v, const Eigen::Ref<const Eigen::VectorXd>& values,
               Sink&& sink) {
    evaluate(q, v, p1_, pd1_);
    p1_.tail(scalars_) = values;
    const double slack = 1e-12 * std::max(1.0, t_end_);
    if (!have_) {  // the initial state is sample 0 (and any sample before it: none)
      while (next_ < samples_ && time(next_) <= t + slack) sink(next_++, p1_);
    } else {
      const double h = t - t0_;
      if (h > 0.0) pd0_.tail(scalars_) = pd1_.tail(scalars_) = (p1_.tail(scalars_) - p0_.tail(scalars_)) / h;
      else pd0_.tail(scalars_).setZero(), pd1_.tail(scalars_).setZero();
      while (next_ < samples_ && time(next_) <= t + slack) {
        const double s = h > 0.0 ? std::clamp((time(next_) - t0_) / h, 0.0, 1.0) : 1.0;
        const double s2 = s * s, s3 = s2 * s;
        x_.noalias() = (2 * s3 - 3 * s2 + 1) * p0_ + ((s3 - 2 * s2 + s) * h) * pd0_ + (-2 * s3 + 3 * s2) * p1_ +
                       ((s3 - s2) * h) * pd1_;
        sink(next_++, x_);
      }
    }
    p0_.swap(p1_);
    pd0_.swap(pd1_);
    t0_ = t;
    have_ = true;
  }

 private:
  void evaluate(const Eigen::VectorXd& q, const Eigen::VectorXd& v, Eigen::VectorXd& p, Eigen::VectorXd& pd) const {
    for (size_t i = 0; i < points_.size(); ++i) {
      p.segment(dim_ * static_cast<Eigen::Index>(i), dim_) = points_[i].eval(q);
      pd.segment(dim_ * static_cast<Eigen::Index>(i), dim_) = points_[i].rate(v);
    }
  }

  std::vector<Combo> points_;
  int dim_, scalars_;
  double dt_, t_end_;
  int samples_;
  int next_ = 0;
  bool have_ = false;
  double t0_ = 0.0;
  Eigen::VectorXd p0_, pd0_, p1_, pd1_, x_;
};

}  // namespace mbs
