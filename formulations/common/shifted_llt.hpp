// The Cholesky factorization of a Schur complement S = G A^-1 G^T that may turn near-singular along
// the motion (a singular position of a mechanism: common/kept_constraints.hpp's file comment states
// the method). S is factored as it is while its smallest Cholesky pivot's share of its row's
// diagonal stays above a floor (kSingularDrop times its value at the initial configuration, set
// once); below it, S + delta I is factored, delta = kSingularShift x S's largest diagonal entry, and
// every solve is refined once against S (iterated Tikhonov). Sized once; nothing after allocates.
#pragma once

#include <Eigen/Dense>

namespace mbs {

inline constexpr double kSingularShift = 1e-8;  // delta relative to the largest diagonal entry
inline constexpr double kSingularDrop = 1e-3;   // the floor relative to the pivot share at q0

template <class Mat, class Vec>
class ShiftedLlt {
 public:
  explicit ShiftedLlt(int n) : S_(n, n), S_reg_(n, n), llt_(n), rr_(n), dx_(n) {}

  // S, to be filled in place before factor().
  Mat& S() { return S_; }
  const Mat& S() const { return S_; }
  // Factors S() (kept: the refinement needs it); returns the smallest pivot share.
  double factor() {
    llt_.compute(S_);
    pivot_ratio_ = llt_.info() != Eigen::Success
                       ? 0.0
                       : (llt_.matrixLLT().diagonal().array().square() / S_.diagonal().array()).minCoeff();
    shifted_ = pivot_ratio_ < floor_;
    if (shifted_ && S_.rows() > 0) {
      S_reg_ = S_;
      S_reg_.diagonal().array() += kSingularShift * S_.diagonal().cwiseAbs().maxCoeff();
      llt_.compute(S_reg_);
    }
    return pivot_ratio_;
  }
  // The floor from the pivot share at the initial configuration (factor() there first).
  void set_floor_from_current() { floor_ = kSingularDrop * pivot_ratio_; }
  // x = S^-1 b, refined once when shifted.
  template <class B, class X>
  void solve(const B& b, X& x) {
    x = llt_.solve(b);
    if (!shifted_) return;
    rr_ = b;
    rr_.noalias() -= S_ * x;
    dx_ = llt_.solve(rr_);
    x += dx_;
  }
  bool shifted() const { return shifted_; }
  double pivot_ratio() const { return pivot_ratio_; }

 private:
  Mat S_, S_reg_;
  Eigen::LLT<Mat> llt_;
  Vec rr_, dx_;
  double pivot_ratio_ = 0.0, floor_ = 0.0;
  bool shifted_ = false;
};

}  // namespace mbs
