// The outputs of one problem's benchmark: terminal table, summary.{json,md,csv}, time histories.
#pragma once

#include <string>
#include <vector>

#include "problem/problem.hpp"
#include "run/bench_case.hpp"
#include "run/timing.hpp"

namespace mbs {

struct BenchReport {
  const Problem* problem = nullptr;
  std::vector<CaseResult> rows;
  Timing kernel;           // the calibration kernel, timed in the same process
  std::string created;     // UTC time stamp, ISO 8601
  std::string build;       // compiler and build type
  std::string problem_file;  // as shown in the summary (relative to the source tree when inside it)
  std::string reference_note;  // where the reference trajectory came from (empty without one)
  std::string sweep;           // rows not from one serial run (bench --merge, --jobs): how they were found and timed
};

std::string format_table(const BenchReport& report);  // includes format_checks()
// The source's table of published figures, one column per check (empty when the problem has none).
std::string format_checks(const BenchReport& report);
// Impacts found in each row's run, for problems with contacts (empty otherwise).
std::string format_impacts(const BenchReport& report);
// run.final_angles: each completed row's largest difference from the published angles; and one
// row's solution file (solution/<case>.txt): every angle at t_end beside the published value.
std::string format_final_angles(const BenchReport& report);
std::string final_angles_text(const BenchReport& report, const CaseResult& row);
// Linearization problems: the table with every eigenvalue and its judgement, and the solution file
// of one row (all eigenvalues, true and spurious, and the linearization terms).
std::string format_linearization_table(const BenchReport& report);
std::string solution_text(const BenchReport& report, const CaseResult& row);
std::string to_json(const BenchReport& report);
std::string to_csv(const BenchReport& report);
std::string to_markdown(const BenchReport& report);
// For several problems: one row per case, one column per problem: status, setting and normalized
// time of the tuned row.
std::string format_overview(const std::vector<BenchReport>& reports);

// The spec's six columns: t, x, y, E - E0, |Phi|, |Phi_q v|.
std::string history_text(const BenchReport& report, const CaseResult& row);
// File name of a row's history: "<formulation>__<integrator>.txt".
std::string history_file_name(const CaseResult& row);

// Writes results_root/<problem>/ whole or not at all: everything is written into a staging folder
// that then replaces the previous one by rename. A converged reference is written with them, in
// reference/trajectory.csv. Throws std::runtime_error on I/O failure.
void write_results(const BenchReport& report, const std::string& results_root);

}  // namespace mbs
