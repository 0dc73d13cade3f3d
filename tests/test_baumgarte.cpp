// Formulation "baumgarte": the index-1 equations with Baumgarte's feedback make the constraint
// violation of a rod obey Phi'' + 2 alpha Phi' + beta^2 Phi = 0 exactly (Phi is the rod's
// (d.d - L^2) / 2L, whose second derivative is G q'' + d/dt(G) q'), so a pendulum started with a
// radial velocity delta (Phi(0) = 0, Phi'(0) = delta) has Phi(t) = delta t exp(-alpha t) for
// alpha = beta; without the feedback ("unprojected") Phi(t) = delta t.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "core/formulation.hpp"
#include "support/monitor.hpp"
#include "core/natural_coordinates.hpp"
#include "problem/problem.hpp"
#include "support/models.hpp"

namespace mbs {
namespace {

constexpr double kAlpha = 10.0;  // 1/s: formulations/baumgarte/baumgarte.cpp's alpha = beta
constexpr double kDelta = 1e-3;  // m/s: radial velocity at t = 0

// Horizontal pendulum (L = 1 m) moving outward at delta: gravity is tangential, the rod stretches.
Model stretching_pendulum() {
  return testing::chain_model(2, {{1.0, Eigen::Vector3d(1, 0, 0), Eigen::Vector3d(kDelta, 0, 0)}});
}

// Every reported state, for Phi at the times of the steps.
testing::Monitor run(const std::string& formulation, const std::string& integrator, double h, double t_end) {
  const Model model = stretching_pendulum();
  testing::Monitor rec(model, {true});
  Registry::instance().find(formulation)->create(model, integrator, h)->run(t_end, &rec);
  return rec;
}

TEST(Baumgarte, ViolationDecaysAsTheCriticallyDampedConstraintDynamics) {
  for (const char* integrator : {"rk4", "fehlberg8-fixed"}) {
    SCOPED_TRACE(integrator);
    const testing::Monitor b = run("baumgarte", integrator, 1e-3, 1.0);
    const testing::Monitor u = run("unprojected", integrator, 1e-3, 1.0);
    for (const double t : {0.05, 0.1, 0.2, 0.5, 1.0}) {
      // The integration error of the swing itself moves Phi by ~1e-11 m at h = 1e-3 s (it is the
      // whole drift of a consistent start), far below the signal (4.5e-8 m at t = 1 s).
      EXPECT_NEAR(b.Phi_at(t)[0], kDelta * t * std::exp(-kAlpha * t), 1e-10) << "t = " << t;
      EXPECT_NEAR(u.Phi_at(t)[0], kDelta * t, 1e-10) << "t = " << t;
    }
  }
}

TEST(Baumgarte, RefusesContactsAndUnknownIntegrators) {
  const Formulation& f = *Registry::instance().find("baumgarte");
  EXPECT_THROW(f.create(stretching_pendulum(), "euler", 0.01), SolverError);
  EXPECT_THROW(f.create(stretching_pendulum(), "rk4", -1.0), SolverError);
  const Problem p = load_problem(MBS_SOURCE_DIR "/problems/double_pendulum_wall.yaml");
  EXPECT_NE(f.unsupported_reason(p.model), "");
}

}  // namespace
}  // namespace mbs
