// Tables and the solution file of linearization problems.
#include <cmath>
#include <numeric>
#include <fmt/format.h>

#include "report/report.hpp"
#include "problem/reference_kinds.hpp"
#include "run/linearization_case.hpp"

namespace mbs {

namespace {
std::string eigen_text(const Eigenvalue& e) {
  if (!e.finite) return std::isnan(e.s.real()) ? "undetermined (0/0)" : "inf";
  return fmt::format("{: .10e} {:+.10e}i", e.s.real(), e.s.imag());
}
}  // namespace

std::string format_linearization_table(const BenchReport& report) {
  const Problem& p = *report.problem;
  std::string out = fmt::format("{} — {}\n", p.name, p.title);
  std::string exact;
  for (const auto& s : p.reference->eigenvalues(p)) exact += fmt::format(" {:+.6f}i", s.imag());
  out += fmt::format("rule: {} < {:g} (norm-2 of true - exact eigenvalues; exact:{}); time: {} executions of the "
                     "whole linearization, Google Benchmark, median of {} repetitions\n",
                     p.rule.metric, p.rule.below, exact, p.analysis->repetitions, 5);
  out += fmt::format("calibration kernel (RK4, 276 steps): {:.2f} us median; norm = time of one linearization / kernel\n\n",
                     report.kernel.median_s * 1e6);
  std::vector<std::vector<std::string>> rows{
      {"case", "eigenvalues", "true", "eigenvalue error", fmt::format("time x{}", p.analysis->repetitions), "norm", "status"}};
  for (const CaseResult& r : report.rows) {
    const Linearization* l = r.linearization ? &*r.linearization : nullptr;
    int n_true = 0;
    if (l)
      for (const Eigenvalue& e : l->eigenvalues) n_true += e.is_true;
    rows.push_back({r.formulation, l ? std::to_string(l->eigenvalues.size()) : "-",
                    l ? std::to_string(n_true) : "-", l ? fmt::format("{:.3e}", r.score.eigenvalue_error) : "-",
                    r.timing ? fmt::format("{:.3f} ms", r.timing->median_s * p.analysis->repetitions * 1e3) : "-",
                    std::isfinite(r.normalized_time) ? fmt::format("{:.3f}", r.normalized_time) : "-",
                    status_text(r)});
  }
  std::vector<size_t> width(rows[0].size(), 0);
  for (const auto& row : rows)
    for (size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
  for (size_t i = 0; i < rows.size(); ++i) {
    for (size_t c = 0; c < rows[i].size(); ++c)
      out += fmt::format("{:<{}}", rows[i][c], width[c]) + (c + 1 < rows[i].size() ? "  " : "\n");
    if (i == 0) out += std::string(std::accumulate(width.begin(), width.end(), size_t{0}) + 2 * (width.size() - 1), '-') + "\n";
  }
  for (const CaseResult& r : report.rows) {
    out += fmt::format("\n{}: {}\n", r.formulation, row_note(r));
    if (!r.linearization) continue;
    out += fmt::format("  coordinates: {}\n  rule: {}\n", r.linearization->coordinates, r.linearization->rule);
    for (const Eigenvalue& e : r.linearization->eigenvalues)
      out += fmt::format("  s = {:<40} {:<8} {}\n", eigen_text(e), e.is_true ? "true" : "spurious", e.why);
  }
  return out;
}

std::string solution_text(const BenchReport& report, const CaseResult& row) {
  const Problem& p = *report.problem;
  const Linearization& l = *row.linearization;
  std::string out = fmt::format("# {}: linearization by {} about the equilibrium\n# coordinates: {}\n# rule: {}\n",
                                p.name, row.formulation, l.coordinates, l.rule);
  out += fmt::format("# eigenvalue error (norm-2, true vs exact): {:.6e} 1/s\n", row.score.eigenvalue_error);
  out += "# eigenvalues: real imag (1/s; 'inf' = infinite, 'nan' = undetermined 0/0) judgement reason\n";
  for (const Eigenvalue& e : l.eigenvalues)
    out += fmt::format("{} {} {}\n", e.finite ? fmt::format("{: .16e} {: .16e}", e.s.real(), e.s.imag())
                                               : std::isnan(e.s.real()) ? "nan nan" : "inf inf",
                       e.is_true ? "true" : "spurious", e.why);
  for (const auto& [name, m] : l.terms) {
    out += fmt::format("# term {} ({} x {})\n", name, m.rows(), m.cols());
    for (Eigen::Index i = 0; i < m.rows(); ++i) {
      for (Eigen::Index j = 0; j < m.cols(); ++j) out += fmt::format("{}{: .16e}", j ? " " : "", m(i, j));
      out += "\n";
    }
  }
  return out;
}

}  // namespace mbs
