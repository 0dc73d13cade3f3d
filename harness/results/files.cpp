#include "results/files.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <stdexcept>
#include <unistd.h>

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

std::string history_text(const BenchReport& report, const CaseResult& row) {
  const Problem& p = *report.problem;
  std::string out = fmt::format(
      "# {} {} {}\n# columns: t (s), x (m), y (m) of {}, E(t)-E(0) (J), |Phi| (m), |Phi_q v| (m/s)\n"
      "# x, y: in-plane coordinates along plane.e1, plane.e2 (planar problems), world x, y (spatial ones)\n"
      "# rows: the first step at or after each multiple of {:g} s, and the last step (no interpolation)\n",
      p.name, row.row_name(), row.setting ? fmt::format("{} {:.6g}", setting_kind_name(row.setting_kind), *row.setting) : "",
      p.history_name, p.run.output_interval);
  const int n_extra = p.history_extra_columns();
  if (n_extra > 0) {
    out += "# further columns:";
    if (p.history_total_energy()) out += fmt::format(" E(t) (J, total, potential energy from the datum {:g} J)", p.energy_datum);
    for (const auto& point : p.extra_history_points) out += fmt::format(" x (m), y (m) of {}", point.first);
    out += "\n";
  }
  const bool whole = row.history_extra.size() == row.history.size() * static_cast<size_t>(n_extra);
  for (size_t i = 0; i < row.history.size(); ++i) {
    const HistoryRow& h = row.history[i];
    out += fmt::format("{:.9f} {: .12e} {: .12e} {: .6e} {:.6e} {:.6e}", h[0], h[1], h[2], h[3], h[4], h[5]);
    for (int k = 0; whole && k < n_extra; ++k) out += fmt::format(" {: .12e}", row.history_extra[i * n_extra + k]);
    out += "\n";
  }
  return out;
}

}  // namespace mbs
