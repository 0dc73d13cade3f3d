// The files of a results folder: one file written atomically (temp + rename), or a whole folder
// swapped in at once; and the names and text of the per-row time histories.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "results/summary.hpp"

namespace mbs {

// Writes path (its folder created) through a temporary file renamed into place. Throws
// std::runtime_error on I/O failure.
void write_atomically(const std::string& path, const std::string& text);

// Writes `dir` whole or not at all: the folders (relative paths), then every (relative path, text),
// into a staging folder that then replaces the previous `dir` by one atomic exchange. A file's folder
// must be among `folders` (none is made on the way). `keep`: files or folders (relative paths) of the
// previous `dir` that the run does not regenerate (scripts/report's report.md, figures/, sweep.json),
// copied into the staging folder before the exchange, so they survive it and the swap stays whole or
// nothing; one the new files also write is not copied. Throws std::runtime_error on I/O failure.
using ResultFile = std::pair<std::string, std::string>;
void write_folder(const std::string& dir, const std::vector<std::string>& folders, const std::vector<ResultFile>& files,
                  const std::vector<std::string>& keep = {});

// A row's history (histories/<formulation>__<integrator>[__<run>].txt): the first line names the
// problem, row and setting; "# fields:" the columns (history_fields), "# units:" theirs; then one
// line per output time. Throws std::runtime_error when the row's history has other columns.
std::string history_text(const BenchReport& report, const CaseResult& row);
// histories/reference.txt of a problem with a reference trajectory: "# reference: exact|converged
// <kind>: <provenance>", "# fields: t <P>.x <P>.y [<P>.z] ..." of the measured points, one line per
// output time.
std::string reference_text(const Problem& problem);
// File name of a row's history: "<formulation>__<integrator>.txt".
std::string history_file_name(const CaseResult& row);

}  // namespace mbs
