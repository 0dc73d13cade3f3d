// A linearization as text (coordinates, rule, every eigenvalue with its judgement), for test
// failure messages and dumps; and the checks every linearizer's tests share.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "core/formulation.hpp"
#include "core/linearization.hpp"
#include "support/models.hpp"

namespace mbs::testing {

inline std::string dump(const Linearization& lin) {
  std::string out = lin.coordinates + "\n" + lin.rule + "\n";
  char buf[400];
  for (const Eigenvalue& e : lin.eigenvalues) {
    std::snprintf(buf, sizeof buf, "  %+.16e %+.16ei  %-8s %s\n", e.s.real(), e.s.imag(), e.is_true ? "TRUE" : "spurious",
                  e.why.c_str());
    out += buf;
  }
  return out;
}

// Two point masses on rods hanging along -y from a ground pivot at the origin (dim 2 or 3), and
// its two frequencies: omega^2 the roots of m1 l1 l2 w^4 - (m1 + m2) g (l1 + l2) w^2 + (m1 + m2) g^2 = 0
// (once per horizontal direction).
struct DoublePendulum {
  Model model;
  double w_low, w_high;  // rad/s
};
inline DoublePendulum hanging_double_pendulum(int dim, double m1, double m2, double l1, double l2) {
  const double g = 9.81;
  const double a = m1 * l1 * l2, b = (m1 + m2) * g * (l1 + l2), c = (m1 + m2) * g * g;
  const double root = std::sqrt(b * b - 4 * a * c);
  return {chain_model(dim, {{m1, Eigen::Vector3d(0, -l1, 0)}, {m2, Eigen::Vector3d(0, -l1 - l2, 0)}}),
          std::sqrt((b - root) / (2 * a)), std::sqrt((b + root) / (2 * a))};
}

// The largest distance of a true eigenvalue from the nearest of +-i omega_k (omegas in rad/s), and
// how many are true.
inline double largest_error_from(const Linearization& lin, const std::vector<double>& omegas, int& n_true) {
  double worst = 0.0;
  n_true = 0;
  for (const Eigenvalue& e : lin.eigenvalues) {
    if (!e.is_true) continue;
    ++n_true;
    double nearest = INFINITY;
    for (const double w : omegas)
      for (const double sign : {1.0, -1.0}) nearest = std::min(nearest, std::abs(e.s - std::complex<double>(0.0, sign * w)));
    worst = std::max(worst, nearest);
  }
  return worst;
}

// The spatial hanging double pendulum (hanging_double_pendulum: 2 and 0.5 kg, 1.2 and 0.7 m): each
// true eigenvalue within `bound` of +-i omega, n_true of them, n_all in all.
inline void expect_double_pendulum(const Formulation& f, size_t n_all, int n_true, double (*bound)(double omega)) {
  const DoublePendulum dp = hanging_double_pendulum(3, 2.0, 0.5, 1.2, 0.7);
  auto lin = f.create_linearizer(dp.model);
  const Linearization& r = lin->linearize();
  SCOPED_TRACE(dump(r));
  ASSERT_EQ(r.eigenvalues.size(), n_all);
  int count = 0;
  EXPECT_LE(largest_error_from(r, {dp.w_low, dp.w_high}, count), bound(dp.w_high));
  EXPECT_EQ(count, n_true);
}

// Off the equilibrium by an angle a, the 3D pendulum's relative residual is ~ a: 30 degrees and
// 1e-6 rad throw SolverError, 1e-10 rad (inside NaturalEquilibrium's 1e-8) does not.
inline void expect_equilibrium_checked(const Formulation& f) {
  for (const double angle : {30.0 * M_PI / 180.0, 1e-6, 1e-10}) {
    SCOPED_TRACE(angle);
    const Model model = pendulum_3d(Eigen::Vector3d(std::sin(angle), 0.0, -std::cos(angle)));  // outlives lin
    auto lin = f.create_linearizer(model);
    if (angle > 1e-8) EXPECT_THROW(lin->linearize(), SolverError);
    else EXPECT_NO_THROW(lin->linearize());
  }
}

// Two results of one linearizer (a repeated call) agree to the bit: eigenvalues, reasons, terms.
inline void expect_identical(const Linearization& first, const Linearization& second) {
  ASSERT_EQ(first.eigenvalues.size(), second.eigenvalues.size());
  for (size_t i = 0; i < first.eigenvalues.size(); ++i) {
    EXPECT_EQ(std::memcmp(&first.eigenvalues[i].s, &second.eigenvalues[i].s, sizeof(std::complex<double>)), 0) << i;
    EXPECT_EQ(first.eigenvalues[i].why, second.eigenvalues[i].why);
  }
  ASSERT_EQ(first.terms.size(), second.terms.size());
  for (size_t i = 0; i < first.terms.size(); ++i) EXPECT_EQ(first.terms[i].second, second.terms[i].second);
}

}  // namespace mbs::testing
