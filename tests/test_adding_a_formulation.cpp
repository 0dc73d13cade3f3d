// The "Adding a formulation" recipe of docs/formulations.md followed for the smallest explicit
// formulation: the planar pendulum in its angle, an ODE and a Formulation around it (the unit
// between the markers), tuned and scored by the harness on the planar pendulum like a registered
// case. It is not registered, so the suites that iterate the Registry do not pick it up.
#include <gtest/gtest.h>

#include <cmath>
#include <tuple>

#include "common/erk_simulators.hpp"
#include "common/integrator_table.hpp"
#include "core/formulation.hpp"
#include "elements/rod.hpp"
#include "problem/problem.hpp"
#include "run/scoring.hpp"
#include "run/tuner.hpp"

namespace mbs {
namespace {

// ---- the unit: a new explicit formulation ----
// A point on a rod to the ground, in its angle theta from the downward vertical: y = [theta, theta'].
class AngleOde {
 public:
  using State = Eigen::Vector2d;
  explicit AngleOde(const Model& model)
      : pivot_(model.elements_of<Rod>()[0]->a.at), g_(-model.gravity[1]), r0_(model.points[0].r0 - pivot_),
        v0_(model.points[0].v0), L_(r0_.norm()) {}
  int size() const { return 2; }
  void rhs(double /*t*/, const State& y, State& dydt) const { dydt << y[1], -g_ / L_ * std::sin(y[0]); }
  void initial_state(State& y) const {
    y << std::atan2(r0_[0], -r0_[1]), (r0_[0] * v0_[1] - r0_[1] * v0_[0]) / (L_ * L_);
  }
  void model_state(const State& y, Eigen::VectorXd& q, Eigen::VectorXd& v) const {
    const Eigen::Vector2d u(std::sin(y[0]), -std::cos(y[0]));
    q = pivot_ + L_ * u;
    v = L_ * y[1] * Eigen::Vector2d(-u[1], u[0]);
  }

 private:
  Eigen::Vector2d pivot_;
  double g_;
  Eigen::Vector2d r0_, v0_;
  double L_;
};

class PendulumAngle final : public Formulation {
 public:
  std::string name() const override { return "pendulum-angle"; }
  std::string description() const override { return "a planar pendulum in its angle"; }
  std::vector<IntegratorInfo> integrators() const override { return cases_.integrators(); }
  Accepts accepts() const override { return {{}, {TreeJointType::kRod}}; }
  std::unique_ptr<Simulator> create(const Model& model, const std::string& integrator, double setting) const override {
    return make_erk_simulator<AngleOde>(cases_.find(name(), integrator, setting), model, setting);
  }

 private:
  std::string structure_unsupported_reason(const Model& m) const override {
    const bool one_rod = m.dim == 2 && m.points.size() == 1 && m.bodies.empty() && m.elements.size() == 1;
    return one_rod && m.gravity[0] == 0.0 ? "" : "a single planar pendulum under gravity along -y only";
  }
  const ErkCases cases_{{&kRk4, &kDop853Fixed, &kDopri5, &kFehlberg8}};
};
// ---- end of the unit ----

const Problem& pendulum() {
  static const Problem p = load_problem(MBS_SOURCE_DIR "/problems/planar_pendulum.yaml");
  return p;
}

// As the conformance suite asks of a registered formulation: every case tunes to a setting that
// passes the problem's rule and ends within 1e-3 m of the exact solution.
TEST(AddingAFormulation, EveryCaseTunesToAPassingSettingNearTheExactSolution) {
  const Problem& p = pendulum();
  const PendulumAngle f;
  ASSERT_EQ(f.unsupported_reason(p.model), "");
  EXPECT_EQ(Registry::instance().find(f.name()), nullptr);
  ASSERT_EQ(f.integrators().size(), 4u);
  for (const IntegratorInfo& info : f.integrators()) {
    const TuneResult tr = tune(p, f, info);
    ASSERT_TRUE(tr.chosen.has_value()) << info.name << ": no setting passed";
    ScoringObserver observer(p, false);
    const Score s = run_at(p, f, info.name, *tr.chosen, observer);
    ASSERT_TRUE(s.completed) << info.name << ": " << s.error;
    EXPECT_TRUE(passes(p, s)) << info.name;
    EXPECT_LT(s.final_position_error, 1e-3) << info.name;
  }
}

// The fixed-step cases converge to the exact solution at their methods' orders p: halving h
// divides the error at t_end by 2^p, asserted within a factor of 2 either way.
TEST(AddingAFormulation, FixedStepErrorsFallAtTheMethodsOrders) {
  const Problem& p = pendulum();
  const PendulumAngle f;
  for (const auto& [integrator, order, h] : {std::tuple{"rk4", 4, 0.02}, std::tuple{"dop853-fixed", 8, 0.2}}) {
    ScoringObserver coarse(p, false), fine(p, false);
    const double e_h = run_at(p, f, integrator, h, coarse).final_position_error;
    const double e_h2 = run_at(p, f, integrator, h / 2, fine).final_position_error;
    EXPECT_GT(e_h / e_h2, std::pow(2.0, order - 1)) << integrator << ": " << e_h << " at h, " << e_h2 << " at h/2";
    EXPECT_LT(e_h / e_h2, std::pow(2.0, order + 1)) << integrator << ": " << e_h << " at h, " << e_h2 << " at h/2";
  }
}

// create() refuses what the case table does not list, naming the formulation and the known cases.
TEST(AddingAFormulation, UnknownIntegratorsAndSettingsAreRefused) {
  const PendulumAngle f;
  try {
    f.create(pendulum().model, "rk5", 0.01);
    FAIL() << "rk5 accepted";
  } catch (const SolverError& e) {
    EXPECT_STREQ(e.what(), "pendulum-angle: unknown integrator 'rk5' (known: rk4, dop853-fixed, dopri5, fehlberg8)");
  }
  EXPECT_THROW(f.create(pendulum().model, "rk4", 0.0), SolverError);
}

}  // namespace
}  // namespace mbs
