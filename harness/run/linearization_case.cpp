#include "run/linearization_case.hpp"

#include <benchmark/benchmark.h>

#include "elements/rod.hpp"
#include "problem/reference_kinds.hpp"
#include "core/cancellation.hpp"
#include "run/watchdog.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <limits>

namespace mbs {

std::vector<std::complex<double>> exact_pendulum_eigenvalues(const Problem& problem) {
  const Model& m = problem.model;
  const double w = std::sqrt(m.gravity.norm() / m.elements_of<Rod>().at(0)->length);
  std::vector<std::complex<double>> s;
  for (int k = 0; k < m.dim - 1; ++k) s.insert(s.end(), {{0.0, w}, {0.0, -w}});
  return s;
}

double eigenvalue_error(const std::vector<Eigenvalue>& eigenvalues, const std::vector<std::complex<double>>& exact) {
  std::vector<bool> used(exact.size(), false);
  double sum = 0.0;
  int n = 0;
  for (const Eigenvalue& e : eigenvalues) {
    if (!e.is_true) continue;
    if (!e.finite) return std::numeric_limits<double>::infinity();
    size_t best = exact.size();
    for (size_t k = 0; k < exact.size(); ++k)
      if (!used[k] && (best == exact.size() || std::abs(e.s - exact[k]) < std::abs(e.s - exact[best]))) best = k;
    if (best == exact.size()) return std::numeric_limits<double>::infinity();  // more true than exact
    used[best] = true;
    sum += std::norm(e.s - exact[best]);
    ++n;
  }
  // A real linear mechanical system's eigenvalues come in conjugate pairs: a true one without its
  // partner means the judgement split a pair.
  for (const Eigenvalue& e : eigenvalues) {
    if (!e.is_true) continue;
    bool partner = false;
    for (const Eigenvalue& f : eigenvalues)
      partner = partner || (f.is_true && &f != &e && std::abs(f.s - std::conj(e.s)) <= 1e-8 * (1.0 + std::abs(e.s)));
    if (!partner && std::abs(e.s.imag()) > 1e-8 * (1.0 + std::abs(e.s))) return std::numeric_limits<double>::infinity();
  }
  return n == 0 ? std::numeric_limits<double>::infinity() : std::sqrt(sum);
}

namespace {

// Captures Google Benchmark's per-repetition CPU times instead of printing them.
class Capture final : public benchmark::BenchmarkReporter {
 public:
  bool ReportContext(const Context&) override { return true; }
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& r : runs) {
      if (r.error_occurred) error = r.error_message;
      else if (r.run_type == Run::RT_Iteration) seconds.push_back(r.cpu_accumulated_time);  // one repetition
    }
  }
  std::vector<double> seconds;  // CPU seconds of each repetition (each `repetitions` executions)
  std::string error;
};

constexpr int kRepetitions = 5;  // Google Benchmark repetitions of the whole batch; median and min reported

}  // namespace

CaseResult run_linearization_case(const Problem& problem, const Formulation& formulation, bool timed, double timeout_s) {
  const Watchdog watchdog(timeout_s);
  const char* phase = "set-up";
  CaseResult row;
  row.formulation = formulation.name();
  row.integrator = "linearize";
  if (const std::string why = formulation.linearization_unsupported_reason(problem.model); !why.empty()) {
    row.status = CaseStatus::kUnsupported;
    row.message = why;
    return row;
  }
  try {
    std::unique_ptr<Linearizer> lin = formulation.create_linearizer(problem.model);
    if (!lin) throw SolverError("create_linearizer returned nothing");
    throw_if_cancelled(phase);
    phase = "linearization";
    row.linearization = lin->linearize();
    throw_if_cancelled(phase);
    row.score.completed = true;
    row.score.eigenvalue_error = eigenvalue_error(row.linearization->eigenvalues, problem.reference->eigenvalues(problem));
    int n_true = 0;
    for (const Eigenvalue& e : row.linearization->eigenvalues) n_true += e.is_true;
    const bool ok = passes(problem, row.score);
    row.status = ok ? CaseStatus::kPass : CaseStatus::kFail;
    row.message = ok ? fmt::format("{} true of {} eigenvalues", n_true, row.linearization->eigenvalues.size())
                     : fmt::format("eigenvalue error {:.3g} is not below {:.3g} ({} true of {} eigenvalues)",
                                   row.score.eigenvalue_error, problem.rule.below, n_true, row.linearization->eigenvalues.size());
    if (!timed) return row;

    // Time: `repetitions` executions of the whole linearization, per Google Benchmark repetition;
    // the budget is checked between executions.
    phase = "timing";
    Capture capture;
    struct Unregister {  // the benchmark captures `lin`: never leave it registered, even on a throw
      ~Unregister() { benchmark::ClearRegisteredBenchmarks(); }
    } unregister;
    benchmark::RegisterBenchmark(("linearize/" + formulation.name()).c_str(),
                                 [&lin](benchmark::State& state) {
                                   for (auto _ : state) {
                                     if (cancellation_requested()) {
                                       state.SkipWithError("cancelled");
                                       break;
                                     }
                                     benchmark::DoNotOptimize(&lin->linearize());
                                   }
                                 })
        ->Iterations(problem.analysis->repetitions)
        ->Repetitions(kRepetitions)
        ->ReportAggregatesOnly(false);
    benchmark::RunSpecifiedBenchmarks(&capture);
    throw_if_cancelled(phase);
    if (!capture.error.empty() || capture.seconds.empty())
      throw SolverError(fmt::format("timing failed: {}", capture.error.empty() ? "no measurement" : capture.error));
    std::sort(capture.seconds.begin(), capture.seconds.end());
    Timing t;
    t.samples = static_cast<int>(capture.seconds.size());
    t.calls_per_sample = problem.analysis->repetitions;
    // Per execution, like a simulation row's per-run time; the table multiplies back to the batch.
    t.median_s = capture.seconds[capture.seconds.size() / 2] / problem.analysis->repetitions;
    t.min_s = capture.seconds.front() / problem.analysis->repetitions;
    row.timing = t;
  } catch (const Cancelled&) {
    row.status = CaseStatus::kError;
    row.message = fmt::format("timed out in {} after {:.3g} s (--timeout {:g})", phase, watchdog.elapsed_s(), timeout_s);
    row.timing.reset();
  } catch (const SolverError& e) {
    row.status = CaseStatus::kError;
    row.message = e.what();
    row.timing.reset();
  }
  return row;
}

}  // namespace mbs
