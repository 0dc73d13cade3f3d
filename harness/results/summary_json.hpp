// summary.json and summary.csv: written from a report, and summary.json read back (by --compare
// and --baseline-settings) into the rows it records. scripts/report reads the same files.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "results/summary.hpp"

namespace mbs {

std::string to_json(const BenchReport& report);
std::string to_csv(const BenchReport& report);

// A row as summary.json records it: what a later run is compared with.
struct SummaryRow {
  std::string formulation, integrator;
  RunKind run_kind = RunKind::kTuned;
  CaseStatus status = CaseStatus::kError;
  std::optional<double> setting;
  long steps = 0;
  std::optional<double> normalized_time;  // none when not timed
  bool control = false;                   // a control case (expected to fail): status control, or a flagged pass
  std::string case_name() const { return formulation + "/" + integrator; }
  std::string row_name() const { return run_kind == RunKind::kTuned ? case_name() : case_name() + " @" + to_string(run_kind); }
};
struct Summary {
  std::string problem;
  std::string created;  // when the summary was made (UTC), as it says
  std::vector<SummaryRow> rows;
};

// Throws std::runtime_error naming the file (and where in it) when it cannot be read, is not a
// summary (no rows list), or a row misses a field or has an unknown status or run.
Summary read_summary(const std::string& summary_json);

}  // namespace mbs
