// The outputs of one problem's benchmark for people: the terminal table, summary.md, the overview of
// several problems; and the results folder written whole (the file formats: harness/results/).
#pragma once

#include <string>
#include <vector>

#include "problem/problem.hpp"
#include "results/summary.hpp"

namespace mbs {

std::string format_table(const BenchReport& report);  // includes format_checks()
// A row's status as tables show it: its name, "pass (control)" for a control case that passed.
std::string status_text(const CaseResult& row);
// What is said of a row below a table (empty: nothing): its message; for a control case, what it
// gave and why it is expected to fail.
std::string row_note(const CaseResult& row);
// One warning per control case that passed (empty: none): an expected failure that did not happen.
std::vector<std::string> control_warnings(const BenchReport& report);
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
std::string to_markdown(const BenchReport& report);
// For several problems: one row per case, one column per problem: status, setting and normalized
// time of the tuned row.
std::string format_overview(const std::vector<BenchReport>& reports);

// Writes results_root/<problem>/ whole or not at all (results/files.hpp's write_folder): summary.json,
// .csv and .md, the histories and solution files. A converged reference is written with them, in
// reference/trajectory.csv. The files scripts/report made from earlier results (report.md, figures/,
// sweep.json) are carried over into the new folder, in the same exchange. Throws std::runtime_error
// on I/O failure.
void write_results(const BenchReport& report, const std::string& results_root);

}  // namespace mbs
