// Formulation "gen-alpha": the generalized-alpha coefficients, second-order convergence of
// positions on a pendulum, constraints held to round-off at index 3 (redundant rows too), the
// instability of its control case rho_inf = 1, and the declaration (no contacts, known integrators). Dense against sparse and the sparse loop's
// allocations are in test_n_four_bar.cpp, beside the other formulations'.
#include <gtest/gtest.h>

#include <cmath>

#include "core/formulation.hpp"
#include "core/natural_coordinates.hpp"
#include "gen_alpha/gen_alpha.hpp"
#include "problem/problem.hpp"
#include "support/models.hpp"
#include "support/monitor.hpp"

namespace mbs {
namespace {

TEST(GenAlphaCoefficients, ChungHulbertAtBothEnds) {
  // rho_inf = 1: the trapezoidal rule (Newmark's average acceleration), no dissipation.
  const gen_alpha::Coefficients one = gen_alpha::coefficients(1.0);
  EXPECT_DOUBLE_EQ(one.alpha_m, 0.5);
  EXPECT_DOUBLE_EQ(one.alpha_f, 0.5);
  EXPECT_DOUBLE_EQ(one.gamma, 0.5);
  EXPECT_DOUBLE_EQ(one.beta, 0.25);
  // rho_inf = 0.9: second order (gamma = 1/2 - alpha_m + alpha_f) and Chung & Hulbert's beta.
  const gen_alpha::Coefficients c = gen_alpha::coefficients(0.9);
  EXPECT_NEAR(c.alpha_m, 0.8 / 1.9, 1e-15);
  EXPECT_NEAR(c.alpha_f, 0.9 / 1.9, 1e-15);
  EXPECT_NEAR(c.gamma, 0.5 - c.alpha_m + c.alpha_f, 1e-15);
  EXPECT_NEAR(c.beta, 0.25 * (c.gamma + 0.5) * (c.gamma + 0.5), 1e-15);
}

// The run's largest constraint violation and its last state.
testing::Monitor run(const Model& model, const char* integrator, double h, double t_end) {
  testing::Monitor rec(model);
  Registry::instance().find("gen-alpha")->create(model, integrator, h)->run(t_end, &rec);
  return rec;
}

// A 1 m pendulum released horizontally: the mass's position at t = 1 s against the run at h / 8;
// halving h cuts the error by 2^2 (second order) within 25 %, and the rod holds to round-off.
TEST(GenAlpha, SecondOrderAndConstraintsToRoundOff) {
  const Model model = testing::chain_model(2, {{1.0, Eigen::Vector3d(1, 0, 0), Eigen::Vector3d::Zero()}});
  const double h = 4e-3, t_end = 1.0;
  const testing::Monitor ref = run(model, "rho-0.9", h / 8, t_end);
  const testing::Monitor coarse = run(model, "rho-0.9", h, t_end);
  const testing::Monitor fine = run(model, "rho-0.9", h / 2, t_end);
  const double e_coarse = (coarse.q_final - ref.q_final).norm(), e_fine = (fine.q_final - ref.q_final).norm();
  // The h/8 reference carries 1/64 of the coarse error: the ratio is (1 - 1/64) / (1/4 - 1/64) = 4.2 exactly for order 2.
  EXPECT_GT(e_coarse / e_fine, 4.2 / 1.25) << e_coarse << " -> " << e_fine;
  EXPECT_LT(e_coarse / e_fine, 4.2 * 1.25) << e_coarse << " -> " << e_fine;
  EXPECT_LT(e_coarse, 1e-3);
  // Index 3: Newton stops at |dq| <= 1e-10 m, so Phi is at most ~|Phi_q| 1e-10 m, and in practice round-off.
  for (const testing::Monitor* r : {&coarse, &fine, &ref}) EXPECT_LT(r->max_Phi, 1e-12);
}

// The pinned bar's redundant joints (rank below the row count): the kept rows hold, and so do the dropped ones.
TEST(GenAlpha, RedundantConstraintsHold) {
  const Problem p = load_problem(MBS_SOURCE_DIR "/problems/pinned_bar.yaml");
  ASSERT_GT(p.model.nc(), 0);
  for (const char* integrator : {"rho-0.9", "rho-1"}) {
    SCOPED_TRACE(integrator);
    const testing::Monitor r = run(p.model, integrator, 1e-2, 1.0);
    EXPECT_LT(r.max_Phi, 1e-12);
  }
}

// Velocity-level violation |Phi_q v| of a run, largest over the first and the last second.
struct ViolationGrowth {
  double first = 0.0, last = 0.0;
};
ViolationGrowth velocity_violation(const Model& model, double rho_inf, double h, double t_end) {
  class Observer final : public StepObserver {
   public:
    Observer(const Model& m, double t_end) : nat_(m), w_(m.nc()), t_end_(t_end) {}
    void on_step(double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v) override {
      nat_.Phi_q_times(q, v, w_);
      const double x = w_.cwiseAbs().maxCoeff();
      if (t <= 1.0) g.first = std::max(g.first, x);
      if (t >= t_end_ - 1.0) g.last = std::max(g.last, x);
    }
    ViolationGrowth g;

   private:
    NaturalCoordinates nat_;
    Eigen::VectorXd w_;
    double t_end_;
  } obs(model, t_end);
  gen_alpha::make_simulator(model, rho_inf, h)->run(t_end, &obs);
  return obs.g;
}

// The control case's claim: without numerical dissipation (rho_inf = 1, the trapezoidal rule) the
// index-3 method's velocity violation grows (Cardona & Geradin 1989; Negrut et al. 2007), while
// rho_inf = 0.9 keeps it at its O(h^2) level. Pendulum released horizontally, h = 0.01 s, 4 s
// (by 5 s the undamped multipliers are so large that Newton stalls above its tolerance).
TEST(GenAlpha, NoDissipationIsUnstableAtIndex3) {
  const Model model = testing::chain_model(2, {{1.0, Eigen::Vector3d(1, 0, 0), Eigen::Vector3d::Zero()}});
  const ViolationGrowth damped = velocity_violation(model, 0.9, 0.01, 4.0);
  const ViolationGrowth undamped = velocity_violation(model, 1.0, 0.01, 4.0);
  EXPECT_LT(damped.last, 2.0 * damped.first) << damped.first << " -> " << damped.last;
  EXPECT_GT(undamped.last, 10.0 * undamped.first) << undamped.first << " -> " << undamped.last;
}

TEST(GenAlpha, RefusesContactsAndUnknownIntegrators) {
  const Formulation& f = *Registry::instance().find("gen-alpha");
  const Model pendulum = testing::chain_model(2, {{1.0, Eigen::Vector3d(1, 0, 0), Eigen::Vector3d::Zero()}});
  EXPECT_THROW(f.create(pendulum, "hht", 0.01), SolverError);
  EXPECT_THROW(f.create(pendulum, "rho-0.9", -1.0), SolverError);
  EXPECT_THROW(gen_alpha::make_simulator(pendulum, 1.5, 0.01), SolverError);
  const Problem p = load_problem(MBS_SOURCE_DIR "/problems/double_pendulum_wall.yaml");
  EXPECT_NE(f.unsupported_reason(p.model), "");
}

}  // namespace
}  // namespace mbs
