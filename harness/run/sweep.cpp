#include "run/sweep.hpp"

#include <fmt/format.h>

namespace mbs {

CaseSpec parse_case_spec(const std::string& text) {
  const std::string usage = "expected PROBLEM:FORMULATION/INTEGRATOR, e.g. planar_pendulum:minimal/rk4 (see bench --list-cases)";
  const size_t colon = text.rfind(':');
  if (colon == std::string::npos) throw SweepError(fmt::format("--case '{}': no ':'; {}", text, usage));
  CaseSpec spec{text.substr(0, colon), text.substr(colon + 1)};
  if (spec.problem.empty()) throw SweepError(fmt::format("--case '{}': no problem before ':'; {}", text, usage));
  const size_t slash = spec.case_name.find('/');
  if (slash == std::string::npos || slash == 0 || slash + 1 == spec.case_name.size() ||
      spec.case_name.find_first_of("/,", slash + 1) != std::string::npos || spec.case_name.find(',') != std::string::npos)
    throw SweepError(fmt::format("--case '{}': '{}' is not one formulation/integrator; {}", text, spec.case_name, usage));
  return spec;
}

}  // namespace mbs
