// Sweeps beyond one process: every (problem, case) is independent, so a problem's bench can be split
// into one command per case (bench --list-cases), each writing a partial summary (bench --case), and
// the partials combined into the usual results folder (bench --merge). bench --jobs N does the same
// on one machine with child processes, then times every case serially.
//
// A partial summary is one YAML file, <partials>/<problem>/<formulation>__<integrator>.yaml, holding
// everything the merge needs to rebuild the whole summary and the ranking: the case's rows (the tuned
// row and, for fixed-step cases of problems with a published step, the row at that step) in full,
// time histories included, and the calibration kernel timed in the same process. It also records
// what the merge checks before combining: the problem file's hash, the build (a hash of the bench
// executable), the options that change results, and the reference the rows were scored against.
#pragma once

#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "problem/problem.hpp"
#include "report/report.hpp"
#include "run/bench_problem.hpp"

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

// The cases a sweep runs for a problem, in the serial run's order: for an analysis problem one per
// formulation (its first selected integrator: the linearization does not depend on it).
CaseList sweep_cases(const Problem& problem, const CaseList& selected);

// What identifies a run's conditions; partials merge only when these agree (host may differ).
struct SweepFingerprint {
  std::string problem_hash;  // problem_key(problem)
  std::string build;         // BenchReport::build (compiler, build type, Eigen)
  std::string build_id;      // FNV-1a 64 of the bench executable's bytes
  std::string options;       // the options that change results, e.g. "timing 0.3 s; timeout 90 s"
  std::string reference;     // FNV-1a 64 of the stored reference text ("" without a stored reference)
  std::string host;          // hostname and CPU model (recorded, not required to agree)
};

// FNV-1a 64 of /proc/self/exe, hex (cached).
std::string executable_id();
// "hostname (CPU model)".
std::string host_description();
// A stored reference's fingerprint: FNV-1a 64 of the text the results would store ("" without one).
std::string reference_fingerprint(const Problem& problem);

// <partials_dir>/<problem>/<formulation>__<integrator>.yaml
std::string partial_path(const std::string& partials_dir, const std::string& problem, const std::string& case_name);

// Writes one case's report (one or two rows, its kernel) as a partial, atomically (temp + rename).
void write_partial(const BenchReport& report, const std::string& case_name, const SweepFingerprint& fingerprint,
                   const std::string& path);

// Stores a computed converged reference where the partial runs and the merge look it up first:
// <partials_dir>/<problem>/reference/trajectory.csv (atomically). No-op without a stored reference.
void store_reference(const Problem& problem, const std::string& partials_dir);

struct MergeOptions {
  std::string partials_dir;
  bool allow_missing = false;  // a missing case is an error unless this is set
  // What the merging process expects; the partials must agree with it (not the host).
  SweepFingerprint expected;
};

struct MergeResult {
  int partials = 0;
  std::vector<std::string> missing;  // cases without a partial (only with allow_missing)
  std::vector<std::string> hosts;    // distinct hosts the partials ran on
  bool timed = false;                // the partials carry timings
};

// Reads <partials_dir>/<problem>/*.yaml for the given cases, checks them against each other and
// against options.expected, and fills report.rows (in the serial run's order), report.kernel and
// the ranking. Throws SweepError (exit 2) on a missing, unreadable or incompatible partial.
MergeResult merge_partials(const Problem& problem, const CaseList& cases, const MergeOptions& options, BenchReport& report);

// Times every row serially at its setting, in this process, after the rows were found elsewhere
// (in parallel): re-runs each case at its tuned setting (bench --baseline-settings' path) with the
// calibration kernel timed first, then copies the timings onto the rows that ran to the end (pass or
// fail, as a serial run times them) and ranks. Returns the number of rows whose re-run took other
// steps than the tuning run's (reported on stderr; the row kept is the tuned one).
int retime_serially(const Problem& problem, const CaseList& cases, const CaseOptions& options, Progress& progress,
                    BenchReport& report);

// Runs cases as child processes (bench --case ... --no-timing), at most `jobs` at a time; each
// child's output goes to <dir>/<formulation>__<integrator>.log. Returns false when interrupted.
// argv_for(case) gives the child's full argument vector.
struct ChildCase {
  std::string case_name;
  std::vector<std::string> argv;
  std::string log;
};
// Returns the cases whose child did not exit 0 or 1 (a crash, a bad option, an interrupt).
std::vector<std::string> run_children(const std::vector<ChildCase>& children, int jobs,
                                      const std::function<bool()>& interrupted);

// A row failed or stopped (status fail or error), as bench_problem's return value says.
bool has_failed_rows(const BenchReport& report);

// A command line, quoted for a POSIX shell where needed.
std::string shell_join(const std::vector<std::string>& argv);

}  // namespace mbs
