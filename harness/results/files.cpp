#include "results/files.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <stdexcept>
#include <unistd.h>

#include "problem/reference_kinds.hpp"

namespace mbs {
namespace fs = std::filesystem;

namespace {
void write_file(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  out.flush();
  if (!out) throw std::runtime_error(fmt::format("cannot write {}", path.string()));
}
}  // namespace

void write_atomically(const std::string& file, const std::string& text) {
  const fs::path path(file);
  std::error_code ec;
  fs::create_directories(path.parent_path(), ec);
  const fs::path tmp = path.string() + fmt::format(".tmp.{}", ::getpid());
  {
    std::ofstream out(tmp, std::ios::binary);
    out << text;
    out.flush();
    if (!out) {
      fs::remove(tmp, ec);
      throw std::runtime_error(fmt::format("cannot write {}", tmp.string()));
    }
  }
  fs::rename(tmp, path, ec);
  if (ec) {
    fs::remove(tmp, ec);
    throw std::runtime_error(fmt::format("cannot rename into {}", path.string()));
  }
}

void write_folder(const std::string& dir, const std::vector<std::string>& folders, const std::vector<ResultFile>& files,
                  const std::vector<std::string>& keep) {
  const fs::path final_dir(dir);
  const fs::path root = final_dir.parent_path();
  const fs::path staging = root / fmt::format(".{}.staging.{}", final_dir.filename().string(), ::getpid());
  std::error_code ec;
  fs::create_directories(root, ec);
  fs::remove_all(staging, ec);
  try {
    fs::create_directories(staging);
    for (const std::string& f : folders) fs::create_directories(staging / f);
    for (const auto& [name, text] : files) write_file(staging / name, text);
    for (const std::string& k : keep) {
      const fs::path from = final_dir / k, to = staging / k;
      if (!fs::exists(from) || fs::exists(to)) continue;
      fs::create_directories(to.parent_path());
      fs::copy(from, to, fs::copy_options::recursive | fs::copy_options::copy_symlinks);
    }
    // Swap in: the previous results stay whole until the new ones are complete, and the swap itself
    // is one atomic exchange of the two folders (Linux renameat2), so the folder never goes missing.
    if (fs::exists(final_dir)) {
      if (::renameat2(AT_FDCWD, staging.c_str(), AT_FDCWD, final_dir.c_str(), RENAME_EXCHANGE) != 0)
        throw std::runtime_error(fmt::format("cannot swap {} into place: {}", final_dir.string(), std::strerror(errno)));
      fs::remove_all(staging, ec);  // now holds the previous results
    } else {
      fs::rename(staging, final_dir);
    }
  } catch (const std::exception&) {
    fs::remove_all(staging, ec);
    throw;
  }
}

std::string history_file_name(const CaseResult& row) {
  return row.formulation + "__" + row.integrator + (row.run_kind == RunKind::kTuned ? "" : "__" + to_string(row.run_kind)) + ".txt";
}

namespace {
// "# fields: ..." and "# units: ...", the lines a reader parses.
std::string field_lines(const std::vector<std::string>& fields, const std::vector<std::string>& units) {
  return fmt::format("# fields: {}\n# units: {}\n", fmt::join(fields, " "), fmt::join(units, " "));
}

std::string frame_line(const Problem& p) {
  return p.model.dim == 2 ? "# coordinates: in-plane, along plane.e1 (.x) and plane.e2 (.y)\n"
                          : "# coordinates: world x, y, z\n";
}
}  // namespace

std::string history_text(const BenchReport& report, const CaseResult& row) {
  const Problem& p = *report.problem;
  const std::vector<std::string> fields = history_fields(p);
  if (!row.history.empty() && row.history.columns != static_cast<int>(fields.size()))
    throw std::runtime_error(fmt::format("{}: its history has {} columns, the problem's histories {}", row.row_name(),
                                         row.history.columns, fields.size()));
  std::string out = fmt::format("# {} {} {}\n", p.name, row.row_name(),
                                row.setting ? fmt::format("{} {:.6g}", setting_kind_name(row.setting_kind), *row.setting) : "");
  out += field_lines(fields, history_units(p));
  out += frame_line(p);
  out += fmt::format(
      "# rows: t_k = k * {:g} s and t_end = {:g} s, as far as the run got, read between the two reported states\n"
      "#   around t_k: the points by cubic Hermite interpolation (as the reference error reads them), the rest linearly\n"
      "# dE = E(t)-E(0), Phi = |Phi|, Phi_qv = |Phi_q v|{}\n",
      p.run.output_interval, p.run.end_time,
      p.history_total_energy() ? fmt::format(", E = total energy (potential from the datum {:g} J)", p.energy_datum) : "");
  // Coordinates and total energy with 13 digits (a drift of 1e-6 J shows on an energy of 1e4 J);
  // dE, Phi, Phi_qv are themselves deviations: 7.
  const size_t point_columns = fields.size() - (p.history_total_energy() ? 5 : 4);  // after t, before dE
  for (size_t i = 0; i < row.history.rows(); ++i) {
    const double* h = row.history.row(i);
    out += fmt::format("{:.12g}", h[0]);
    for (size_t c = 1; c < fields.size(); ++c) {
      const bool full = c <= point_columns || (p.history_total_energy() && c + 1 == fields.size());
      out += full ? fmt::format(" {: .12e}", h[c]) : fmt::format(" {: .6e}", h[c]);
    }
    out += "\n";
  }
  return out;
}

std::string reference_text(const Problem& p) {
  const ReferenceTrajectory& ref = *p.reference_trajectory;
  const bool exact = p.reference && p.reference->exact();
  std::vector<std::string> fields{"t"}, units{"s"};
  for (const auto& [name, combo] : p.measured_points)
    for (int i = 0; i < ref.dim; ++i) fields.push_back(name + "." + "xyz"[i]), units.push_back("m");
  std::string out = fmt::format("# {} reference\n# reference: {}  {}: {}\n", p.name, exact ? "exact" : "converged", ref.kind,
                                ref.provenance);
  out += field_lines(fields, units);
  out += frame_line(p);
  out += fmt::format("# rows: t_k = k * {:g} s and t_end = {:g} s; uncertainty {:.3g} m{}\n", ref.dt, ref.t_end,
                     ref.uncertainty, exact ? " (round-off)" : " (largest disagreement between its cases)");
  for (Eigen::Index k = 0; k < ref.x.rows(); ++k) {
    out += fmt::format("{:.12g}", std::min(static_cast<double>(k) * ref.dt, ref.t_end));
    for (Eigen::Index c = 0; c < ref.x.cols(); ++c) out += fmt::format(" {: .16e}", ref.x(k, c));
    out += "\n";
  }
  return out;
}

}  // namespace mbs
