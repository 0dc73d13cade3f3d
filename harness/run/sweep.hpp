// Sweeps beyond one process: every (problem, case) is independent, so a problem's bench can be split
// into one command per case (bench --list-cases), each writing a partial summary (bench --case), and
// the partials combined into the usual results folder (bench --merge). bench --jobs N does the same
// on one machine with child processes (run/children.hpp), then times every case serially
// (retime_serially, run/bench_problem.hpp). The partials and the merge: harness/results/.
#pragma once

#include <stdexcept>
#include <string>

namespace mbs {

// A bad --case string, a missing or incompatible partial: a clear message, exit 2.
class SweepError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// "P:formulation/integrator" split at its last ':' (a problem path may hold one, a case never does).
struct CaseSpec {
  std::string problem;  // name or path, as for --problem
  std::string case_name;  // "formulation/integrator"
};
CaseSpec parse_case_spec(const std::string& text);  // throws SweepError

}  // namespace mbs
