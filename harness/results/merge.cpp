#include "results/merge.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fmt/format.h>
#include <limits>
#include <set>

namespace mbs {
namespace fs = std::filesystem;

MergeResult merge_partials(const Problem& problem, const CaseList& cases, const MergeOptions& options, BenchReport& report) {
  MergeResult result;
  std::vector<Partial> partials;
  std::set<std::string> hosts;
  for (const auto& [f, info] : sweep_cases(problem, cases)) {
    const std::string case_name = f->name() + "/" + info.name;
    const std::string path = partial_path(options.partials_dir, problem.name, case_name);
    if (!fs::exists(path)) {
      result.missing.push_back(case_name);
      continue;
    }
    Partial p = read_partial(path);
    auto fail = [&](const std::string& what) { throw SweepError(fmt::format("{}: {}", path, what)); };
    if (p.problem != problem.name) fail(fmt::format("is for problem '{}', not '{}'", p.problem, problem.name));
    if (p.case_name != case_name) fail(fmt::format("is for case '{}', not '{}'", p.case_name, case_name));
    const SweepFingerprint& want = options.expected;
    const SweepFingerprint& got = p.fingerprint;
    if (got.problem_hash != want.problem_hash)
      fail(fmt::format("was run on another version of {} (problem hash {}, now {}); run the case again", problem.file,
                       got.problem_hash, want.problem_hash));
    if (got.build_id != want.build_id)
      fail(fmt::format("was run by another build of bench ({}, executable {}; this one: {}, executable {}); run every "
                       "case with one executable",
                       got.build, got.build_id, want.build, want.build_id));
    if (got.reference != want.reference)
      fail(fmt::format("was scored against another reference trajectory (fingerprint '{}', this merge's '{}'); "
                       "run the cases against one stored reference (bench --list-cases stores it)",
                       got.reference, want.reference));
    if (!partials.empty() && got.options != partials.front().fingerprint.options)
      fail(fmt::format("was run with other options ('{}') than {} ('{}')", got.options, partials.front().file,
                       partials.front().fingerprint.options));
    for (const CaseResult& row : p.rows)  // a linearization row is the formulation's, whatever integrator named the case
      if (problem.analysis ? row.formulation != f->name() : row.case_name() != case_name)
        fail(fmt::format("holds a row of '{}' in the partial of '{}'", row.case_name(), case_name));
    if (report.reference_note.empty()) report.reference_note = p.reference_note;
    hosts.insert(got.host);
    partials.push_back(std::move(p));
  }
  if (!result.missing.empty() && !options.allow_missing)
    throw SweepError(fmt::format("{}: no partial summary for {} of {} cases in {}: {} (run them, or merge with --allow-missing)",
                                 problem.name, result.missing.size(), result.missing.size() + partials.size(),
                                 (fs::path(options.partials_dir) / problem.name).string(), fmt::join(result.missing, ", ")));
  if (partials.empty()) throw SweepError(fmt::format("{}: no partial summaries to merge", problem.name));

  // The serial run's order: every case's own rows, then the rows at the published step.
  report.rows.clear();
  for (const bool published : {false, true})
    for (const Partial& p : partials)
      for (const CaseResult& r : p.rows)
        if ((r.run_kind == RunKind::kPublished) == published) report.rows.push_back(r);

  // Each partial's rows against the kernel timed in its own process (its machine, its load).
  std::vector<double> kernels;
  double kernel_min = std::numeric_limits<double>::infinity();
  for (const Partial& p : partials)
    if (p.kernel.median_s > 0) {
      kernels.push_back(p.kernel.median_s);
      kernel_min = std::min(kernel_min, p.kernel.min_s);
    }
  result.timed = !kernels.empty();
  if (result.timed) {
    std::sort(kernels.begin(), kernels.end());
    report.kernel.median_s = kernels[kernels.size() / 2];
    report.kernel.min_s = kernel_min;
    report.kernel.samples = static_cast<int>(kernels.size());
  }
  size_t at = 0;
  for (const bool published : {false, true})
    for (const Partial& p : partials)
      for (const CaseResult& r : p.rows)
        if ((r.run_kind == RunKind::kPublished) == published) {
          CaseResult& row = report.rows[at++];
          row.normalized_time = row.timing && p.kernel.median_s > 0 ? row.timing->median_s / p.kernel.median_s
                                                                      : std::numeric_limits<double>::quiet_NaN();
        }
  double fastest = std::numeric_limits<double>::infinity();
  for (const CaseResult& r : report.rows)
    if (std::isfinite(r.normalized_time) && r.status == CaseStatus::kPass && r.run_kind != RunKind::kPublished)
      fastest = std::min(fastest, r.normalized_time);
  for (CaseResult& r : report.rows)
    if (std::isfinite(r.normalized_time) && r.status == CaseStatus::kPass) r.relative_to_fastest = r.normalized_time / fastest;
  result.partials = static_cast<int>(partials.size());
  result.hosts.assign(hosts.begin(), hosts.end());
  return result;
}

}  // namespace mbs
