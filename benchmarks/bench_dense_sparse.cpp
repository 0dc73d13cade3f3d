// Dense against sparse linear algebra (common/sparse_natural.hpp) on the N-four-bar of N windows
// (nq = 6 (2N + 1) natural coordinates, nc = nq - 1 rows; tests/support/n_four_bar.hpp): the time of
// one step of each natural-coordinate formulation that has both paths, for choosing
// kSparseMinCoordinates. A run is a short span from the initial state (no singular position), at
// h = 1e-3 s (fixed-step cases) or rtol = 1e-8 (ida-index3). Counter ns_per_step; names:
// dense_sparse/<case>/N=<N>/<dense|sparse>. Filter with --benchmark_filter=dense_sparse.
#include <benchmark/benchmark.h>

#include <map>

#include "alm_index3/alm_index3.hpp"
#include "ida_index3/ida_residual.hpp"
#include "penalty/penalty.hpp"
#include "problem/problem.hpp"
#include "projection/projection.hpp"
#include "support/n_four_bar.hpp"

namespace {

const mbs::Problem& n_four_bar(int n) {
  static std::map<int, mbs::Problem> problems;
  auto it = problems.find(n);
  if (it == problems.end())
    it = problems.emplace(n, mbs::load_problem_text(mbs::testing::n_four_bar_yaml(n, 1.0), "n_four_bar.yaml")).first;
  return it->second;
}

std::unique_ptr<mbs::Simulator> make(const std::string& c, const mbs::Model& m, mbs::LinearAlgebra la) {
  if (c == "alm-index3") return mbs::alm_index3::make_simulator(m, 1e-3, la);
  if (c == "penalty") return mbs::penalty::make_simulator(m, 1e-3, la);
  if (c == "projection-rk4") return mbs::projection::make_simulator(m, "rk4", 1e-3, true, la);
  return mbs::ida_index3::make_simulator(m, 1e-8, mbs::ida_index3::ErrorTest::kPositionsOnly, la);
}

const bool registered = [] {
  for (const std::string c : {"alm-index3", "penalty", "projection-rk4", "ida-index3"})
    for (const int n : {1, 2, 3, 4, 5, 10, 40})
      for (const bool sparse : {false, true}) {
        const std::string name = "dense_sparse/" + c + "/N=" + std::to_string(n) + "/" + (sparse ? "sparse" : "dense");
        benchmark::RegisterBenchmark(name.c_str(), [c, n, sparse](benchmark::State& state) {
          const mbs::Problem& p = n_four_bar(n);
          auto sim = make(c, p.model, sparse ? mbs::LinearAlgebra::kSparse : mbs::LinearAlgebra::kDense);
          const double span = n >= 10 ? 0.02 : 0.1;  // s
          long steps = 0;
          for (auto _ : state) steps += sim->run(span, nullptr).steps;
          state.counters["nq"] = p.model.nq();
          state.counters["ns_per_step"] =
              benchmark::Counter(static_cast<double>(steps), benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
        })->Unit(benchmark::kMicrosecond);
      }
  return true;
}();

}  // namespace
