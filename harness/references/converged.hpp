// reference kind "converged": for a problem without a closed-form solution, the harness computes the
// reference itself. Two or more formulations of different families run at settings far tighter
// than any rule; the measured points of the first case, read at the output times, are the
// reference, and the largest distance between the cases' points is its uncertainty. The reference
// is defended only when that uncertainty is at least 100x below the rule's threshold.
//
// Stored as results/<problem>/reference/trajectory.csv with the problem file's hash, reused while
// the hash holds (bench --rebuild-reference recomputes it).
#pragma once

#include <memory>
#include <string>

#include "problem/problem.hpp"
#include "problem/reference_kinds.hpp"

namespace mbs {

// One run of a converged reference: a case at a setting far tighter than any rule.
struct ConvergedCase {
  std::string formulation, integrator;
  bool fixed_step = false;  // setting is a step (s); else a tolerance
  double setting = 0.0;
  SourceMark mark;          // where the case is named, for messages
  std::string name() const { return formulation + "/" + integrator; }
};

// reference kind "converged": {kind, points, cases: [{case: F/I, step: h | tol: t}, ...]}. The
// measured points (reference.points; default: the history point) in time, read from
// results/<problem>/reference/trajectory.csv while the problem file is unchanged, else computed.
class ConvergedReference final : public Reference {
 public:
  using Reference::Reference;
  std::vector<ConvergedCase> cases;  // two or more, of different formulations

  std::shared_ptr<const ReferenceTrajectory> trajectory(const Problem& problem, const ReferenceOptions& options,
                                                        ReferenceSetup& setup) const override;
  std::string stored_text(const Problem& problem, const ReferenceTrajectory& trajectory) const override;
};

// Where it is kept, relative to results/<problem>/.
inline constexpr const char* kConvergedReferenceFile = "reference/trajectory.csv";

// The reference must be this many times more accurate than a reference-error rule's threshold.
inline constexpr double kReferenceMargin = 100.0;

// Runs the problem's reference cases and compares them. Throws ProblemError (file:line:col of the
// case or of the reference section) when a case is unknown or unsupported, fails, or the cases
// disagree by more than the rule's threshold / kReferenceMargin; PreparationTimedOut when a case, its
// set-up and run together, takes more than `timeout` s (> 0; each case has the budget of its own,
// as a row's case has under --timeout). `progress` (may be null) gets one line per case.
std::shared_ptr<const ReferenceTrajectory> compute_converged_reference(const Problem& problem,
                                                                       void (*progress)(const std::string&) = nullptr,
                                                                       double timeout = 0.0);

// The stored form: '#' header lines (problem hash, provenance, uncertainty, sizes, points), then
// one CSV row per output time: t, then each point's coordinates.
std::string converged_reference_csv(const Problem& problem, const ReferenceTrajectory& reference);

// Reads a stored reference; null (with the reason in *why) when the file is missing, was made from
// another version of the problem file, or does not match its sizes.
std::shared_ptr<const ReferenceTrajectory> read_converged_reference(const Problem& problem, const std::string& path,
                                                                    std::string* why);

// The sampled part of a stored reference, shared by every kind that writes one: the '# dim',
// '# output_interval_s', '# end_time_s' and '# columns' header lines, the column heads, then one
// row per output time.
std::string reference_csv_samples(const Problem& problem, const ReferenceTrajectory& reference);

// The measured points' names as CSV column heads: "F.x", "F.y"...
std::vector<std::string> reference_columns(const Problem& problem);

// Sets p.measured_points from section `reference`'s optional key `points` (a list of NAME or
// BODY.POINT), else the history point: for every kind that computes the points in time.
void read_reference_points(const Reader& rd, const yaml::Node& ref, Problem& p);

}  // namespace mbs
