// The N-four-bar mechanism (IFToMM A02, problems/n_four_bar.yaml) for any N, built as problem text,
// and its reduced 1-DOF model: every crank at one angle theta from the vertical (clockwise), so
// B0 = (sin theta, cos theta) and J theta'' = g c sin theta with J = (N + 1)/3 + N (kg m^2, the
// cranks about their pivots plus the translating couplers) and c = (N + 1)/2 + N (kg m, the
// gravity moment arm), theta(0) = 0, theta'(0) = 1 rad/s.
#pragma once

#include <fmt/format.h>

#include <Eigen/Dense>
#include <cmath>
#include <string>

namespace mbs::testing {

// Problem text: N + 1 cranks (points A, B) on ground pivots (i, 0), N couplers (points L, R) at
// y = 1, 3N + 1 revolutes, gravity 9.81 m/s^2 along -y, B0 at +1 m/s along x, over end_time (s).
inline std::string n_four_bar_yaml(int n, double end_time) {
  std::string s = fmt::format(
      "name: n_four_bar_{}\nspace: planar\ngravity: [0.0, -9.81, 0.0]\nbodies:\n", n);
  for (int i = 0; i <= n; ++i)
    s += fmt::format(
        "  - {{name: crank{}, kind: rigid_body, mass: 1.0, inertia: 0.08333333333333333, position: [{}.0, 0.5, 0.0], "
        "velocity: [0.5, 0.0, 0.0], angular_velocity: -1.0, points: {{A: [0.0, -0.5], B: [0.0, 0.5]}}}}\n",
        i, i);
  for (int j = 1; j <= n; ++j)
    s += fmt::format(
        "  - {{name: coupler{}, kind: rigid_body, mass: 1.0, inertia: 0.08333333333333333, position: [{:.1f}, 1.0, 0.0], "
        "velocity: [1.0, 0.0, 0.0], angular_velocity: 0.0, points: {{L: [-0.5, 0.0], R: [0.5, 0.0]}}}}\n",
        j, j - 0.5);
  s += "joints:\n";
  for (int i = 0; i <= n; ++i)
    s += fmt::format("  - {{name: A{0}, kind: revolute, a: ground, b: crank{0}.A, at: [{0}.0, 0.0, 0.0]}}\n", i);
  for (int i = 0; i <= n; ++i) {
    if (i >= 1)
      s += fmt::format("  - {{name: B{0}_left, kind: revolute, a: crank{0}.B, b: coupler{0}.R, at: [{0}.0, 1.0, 0.0]}}\n", i);
    if (i <= n - 1)
      s += fmt::format("  - {{name: B{0}_right, kind: revolute, a: crank{0}.B, b: coupler{1}.L, at: [{0}.0, 1.0, 0.0]}}\n",
                       i, i + 1);
  }
  s += fmt::format(
      "run: {{end_time: {}, output_interval: {}, history_point: crank0.B}}\n"
      "score:\n  rule: {{metric: max_energy_drift, below: 1.0}}\n  objective: cpu_time\n",
      end_time, end_time / 100.0);
  return s;
}

// theta(t), theta'(t) of the reduced model, by classical RK4 at step h (s): error ~1e-13 rad at
// h = 1e-4 s over a few seconds.
inline Eigen::Vector2d n_four_bar_reduced(int n, double t, double h = 1e-4) {
  const double g = 9.81, J = (n + 1) / 3.0 + n, c = (n + 1) / 2.0 + n, k = g * c / J;
  auto f = [k](const Eigen::Vector2d& y) { return Eigen::Vector2d(y[1], k * std::sin(y[0])); };
  Eigen::Vector2d y(0.0, 1.0);
  const long steps = std::max(1L, std::lround(std::ceil(t / h)));
  const double dt = t / steps;
  for (long i = 0; i < steps; ++i) {
    const Eigen::Vector2d k1 = f(y), k2 = f(y + 0.5 * dt * k1), k3 = f(y + 0.5 * dt * k2), k4 = f(y + dt * k3);
    y += dt / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4);
  }
  return y;
}

// Times (s) at which the reduced model passes the singular positions theta = pi/2 + k pi, up to t_end,
// located to ~h on an RK4 walk (for choosing test spans).
inline int n_four_bar_singular_crossings(int n, double t_end, double h = 1e-4) {
  int crossings = 0;
  Eigen::Vector2d y(0.0, 1.0);
  const double g = 9.81, J = (n + 1) / 3.0 + n, c = (n + 1) / 2.0 + n, k = g * c / J;
  auto f = [k](const Eigen::Vector2d& z) { return Eigen::Vector2d(z[1], k * std::sin(z[0])); };
  for (double t = 0.0; t < t_end; t += h) {
    const double before = std::floor((y[0] - M_PI / 2) / M_PI);
    const Eigen::Vector2d k1 = f(y), k2 = f(y + 0.5 * h * k1), k3 = f(y + 0.5 * h * k2), k4 = f(y + h * k3);
    y += h / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4);
    if (std::floor((y[0] - M_PI / 2) / M_PI) != before) ++crossings;
  }
  return crossings;
}

}  // namespace mbs::testing
