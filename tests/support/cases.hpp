// Every registered (formulation, integrator) case, for suites typed over all of them.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "core/formulation.hpp"

namespace mbs::testing {

struct Case {
  const Formulation* formulation;
  IntegratorInfo info;
  std::string name() const { return formulation->name() + "/" + info.name; }
  bool control() const { return !info.expected_failure.empty(); }  // expected to fail (IntegratorInfo)
  bool engine() const { return formulation->origin() == FormulationOrigin::kEngine; }
};
inline void PrintTo(const Case& c, std::ostream* os) { *os << c.name(); }

inline std::vector<Case> all_cases() {
  std::vector<Case> cases;
  for (const Formulation* f : Registry::instance().all())
    for (const IntegratorInfo& i : f->integrators()) cases.push_back({f, i});
  return cases;
}

// The cases of mbsbench's own formulations, for the suites that judge a method on one problem; an
// engine's cases take part in the interface suites on closed-form systems (all_cases) and are judged
// on the problems by the committed results and regression.<problem> (docs/engines.md).
inline std::vector<Case> own_cases() {
  std::vector<Case> cases;
  for (const Case& c : all_cases())
    if (!c.engine()) cases.push_back(c);
  return cases;
}

// GoogleTest parameter names: "minimal/rk4" -> "minimal_rk4".
template <typename ParamInfo>
std::string case_test_name(const ParamInfo& info) {
  std::string n = info.param.name();
  for (char& ch : n)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return n;
}

}  // namespace mbs::testing
