// Dense against sparse linear algebra (common/sparse_natural.hpp): the time of one step of each
// natural-coordinate formulation that has both paths, for choosing kSparseMinCoordinates, on
//   - the N-four-bar of N windows (planar rigid bodies and revolutes; nq = 6 (2N + 1) natural
//     coordinates, nc = nq - 1 rows; tests/support/n_four_bar.hpp), N = 1..40, and
//   - a planar chain of k point masses on rods hung from a pivot (nq = 2k, nc = k;
//     tests/support/models.hpp), k = 1..12, the kind of the small problems (dense: fixed sizes at
//     k = 1, 2, as the formulations choose them).
// A run is a short span from the initial state (no singular position), at h = 1e-3 s (fixed-step
// cases) or rtol = 1e-8 (ida-index3). Counter ns_per_step; names:
// dense_sparse/<case>/<N=|chain=><n>/<dense|sparse>. Filter with --benchmark_filter=dense_sparse.
#include <benchmark/benchmark.h>

#include <map>

#include "alm_index3/alm_index3.hpp"
#include "ida_index3/ida_residual.hpp"
#include "penalty/penalty.hpp"
#include "problem/problem.hpp"
#include "projection/projection.hpp"
#include "support/models.hpp"
#include "support/n_four_bar.hpp"

namespace {

const mbs::Problem& n_four_bar(int n) {
  static std::map<int, mbs::Problem> problems;
  auto it = problems.find(n);
  if (it == problems.end())
    it = problems.emplace(n, mbs::load_problem_text(mbs::testing::n_four_bar_yaml(n, 1.0), "n_four_bar.yaml")).first;
  return it->second;
}

const mbs::Model& chain(int k) {
  static std::map<int, mbs::Model> models;
  auto it = models.find(k);
  if (it == models.end()) {
    std::vector<mbs::testing::ChainLink> links;
    for (int i = 0; i < k; ++i) links.push_back({1.0, Eigen::Vector3d(0.6 * (i + 1), -0.8 * (i + 1), 0.0)});
    it = models.emplace(k, mbs::testing::chain_model(2, links)).first;
  }
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
  for (const std::string c : {"alm-index3", "penalty", "projection-rk4", "ida-index3"})
    for (const int k : {1, 2, 3, 4, 6, 8, 12})
      for (const bool sparse : {false, true}) {
        const std::string name = "dense_sparse/" + c + "/chain=" + std::to_string(k) + "/" + (sparse ? "sparse" : "dense");
        benchmark::RegisterBenchmark(name.c_str(), [c, k, sparse](benchmark::State& state) {
          const mbs::Model& m = chain(k);
          auto sim = make(c, m, sparse ? mbs::LinearAlgebra::kSparse : mbs::LinearAlgebra::kDense);
          long steps = 0;
          for (auto _ : state) steps += sim->run(0.1, nullptr).steps;
          state.counters["nq"] = m.nq();
          state.counters["ns_per_step"] =
              benchmark::Counter(static_cast<double>(steps), benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
        })->Unit(benchmark::kMicrosecond);
      }
  return true;
}();

}  // namespace
