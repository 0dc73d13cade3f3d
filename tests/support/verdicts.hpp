// Every registered formulation's verdict on a model with an element kind written anew, against the
// same model with the registered kind it imitates: a new kind is one unit when no verdict changes.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "core/formulation.hpp"

namespace mbs::testing {

inline void expect_same_verdicts(const Model& reference, const Model& model) {
  int taken = 0;
  for (const Formulation* f : Registry::instance().all()) {
    const std::string r0 = f->unsupported_reason(reference), r1 = f->unsupported_reason(model);
    EXPECT_EQ(r1.empty(), r0.empty()) << f->name() << ": " << r0 << " / " << r1;
    taken += r1.empty() ? 1 : 0;
  }
  EXPECT_GT(taken, 0);  // some formulation runs it
}

}  // namespace mbs::testing
