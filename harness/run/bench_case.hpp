// One row of the comparison table: tune, verify and time one (formulation, integrator) on a problem.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/formulation.hpp"
#include "problem/problem.hpp"
#include "run/scoring.hpp"
#include "run/status.hpp"
#include "run/timing.hpp"
#include "run/tuner.hpp"

namespace mbs {

struct CaseOptions {
  std::optional<double> step;       // use this fixed step instead of tuning (fixed-step rows)
  std::optional<double> tolerance;  // use this tolerance instead of tuning (adaptive rows)
  double min_time_s = 0.3;          // CPU time spent timing each row
  double timeout_s = 0.0;           // wall-clock budget of the whole case (tune, verify, time); 0: none
  TunerOptions tuner;
  bool timed = true;                // false: tune and score only, no timing (tests of statuses)
  // What the case is doing ("trial 3, h = 0.01 s", "verifying", "timing"): progress display; may be empty.
  std::function<void(const std::string&)> on_progress;
  int min_samples = 7;  // timed samples at least, whatever min_time_s (--min-samples); last, as positional
                        // initializers in tests name the fields above
};

struct CaseResult {
  std::string formulation;
  std::string integrator;
  std::optional<SettingKind> setting_kind;  // what `setting` is (none for a linearization)
  CaseStatus status = CaseStatus::kError;
  std::optional<double> setting;
  bool tuned = false;        // setting found by the tuner (else given on the command line)
  RunKind run_kind = RunKind::kTuned;
  Score score;
  std::optional<Timing> timing;
  double normalized_time = std::numeric_limits<double>::quiet_NaN();    // cpu median / kernel median
  double relative_to_fastest = std::numeric_limits<double>::quiet_NaN();  // among passing rows
  std::string message;
  History history;           // of the verification run, on the output grid
  int trials = 0;            // settings the tuner ran
  std::optional<Linearization> linearization;  // analysis problems: the formulation's linearization
  // A control case's row (mark_control): why it is expected to fail, empty for other cases; and,
  // when its status is control, what the run itself gave (fail or error).
  std::string expected_failure;
  CaseStatus control_outcome = CaseStatus::kFail;
  bool control() const { return !expected_failure.empty(); }
  // What the run gave, control or not: pass, fail, error or unsupported.
  CaseStatus outcome() const { return status == CaseStatus::kControl ? control_outcome : status; }
  std::string case_name() const { return formulation + "/" + integrator; }
  // The case name, marked when the row is not the tuned one: "minimal/rk4 @published".
  std::string row_name() const { return run_kind == RunKind::kTuned ? case_name() : case_name() + " @" + to_string(run_kind); }
};

// "step" (s), "tol" or "" (no setting): the name in tables, JSON and CSV.
inline std::string setting_kind_name(std::optional<SettingKind> k) {
  return !k ? "" : *k == SettingKind::kFixedStep ? "step" : "tol";
}

CaseResult run_case(const Problem& problem, const Formulation& formulation, const IntegratorInfo& info,
                    const CaseOptions& options);

// A row at the source's own setting is judged by the source's own criterion: every published check
// with ratio 1.000 as printed (|ratio - 1| < 5e-4), not by the tuning rule.
void judge_by_published_checks(const Problem& problem, CaseResult& row);

// Fills normalized_time (against the kernel's median) and relative_to_fastest for passing rows.
void rank_cases(std::vector<CaseResult>& rows, double kernel_median_s);

}  // namespace mbs
