// An engine adapter's state mapping, natural coordinates -> the engine's state -> natural
// coordinates: the first state a run reports equals the model's initial q and v to round-off.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "core/formulation.hpp"
#include "support/monitor.hpp"

namespace mbs::testing {

inline void expect_first_state_is_initial(const Formulation& formulation, const Model& model,
                                          const std::string& integrator, double setting) {
  const std::string& name = model.name;
  ASSERT_EQ(formulation.unsupported_reason(model), "") << name;
  auto sim = formulation.create(model, integrator, setting);
  Monitor mon(model, {true});
  sim->run(1e-3, &mon);
  const Eigen::VectorXd q0 = model.initial_q(), v0 = model.initial_v();
  ASSERT_GE(mon.history.size(), 2u);
  EXPECT_EQ(mon.history[0].t, 0.0);
  const double qs = std::max(1.0, q0.cwiseAbs().maxCoeff()), vs = std::max(1.0, v0.cwiseAbs().maxCoeff());
  EXPECT_LT((mon.history[0].q - q0).cwiseAbs().maxCoeff(), 4e-16 * 8 * qs) << name;
  EXPECT_LT((mon.history[0].v - v0).cwiseAbs().maxCoeff(), 4e-16 * 64 * vs) << name;
}

}  // namespace mbs::testing
