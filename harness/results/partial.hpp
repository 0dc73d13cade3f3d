// A sweep's partial summary: one case's rows, written by bench --case and read by bench --merge.
//
// One YAML file, <partials>/<problem>/<formulation>__<integrator>.yaml, holding everything the merge
// needs to rebuild the whole summary and the ranking: the case's rows (the tuned row and, for
// fixed-step cases of problems with a published step, the row at that step) in full, time histories
// included, and the calibration kernel timed in the same process. It also records what the merge
// checks before combining: the problem file's hash, the build (a hash of the bench executable), the
// options that change results, and the reference the rows were scored against.
#pragma once

#include <string>
#include <vector>

#include "results/summary.hpp"
#include "run/sweep.hpp"

namespace mbs {

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

// A partial as read back: its header, kernel and rows.
struct Partial {
  std::string file;  // where it was read from
  std::string problem, case_name, reference_note;
  SweepFingerprint fingerprint;
  Timing kernel;
  std::vector<CaseResult> rows;
};
// Throws SweepError naming the file (and the key) when it is unreadable, of another version, or
// misses or garbles a field.
Partial read_partial(const std::string& path);

// Stores a computed converged reference where the partial runs and the merge look it up first:
// <partials_dir>/<problem>/reference/trajectory.csv (atomically). No-op without a stored reference.
void store_reference(const Problem& problem, const std::string& partials_dir);

}  // namespace mbs
