// One forward-dynamics call of formulation "recursive"'s algorithms on a planar chain of N point
// masses on rods (tests/support/models.hpp: 1 kg each, a zigzag of unit-length links from a ground
// pivot, at rest), for the cost per body of each path: aba (the pin path on such a chain),
// aba_planar, aba_spatial, crba (its pin path here), crba_spatial. Names: aba/<path>/chain=<N>;
// filter with --benchmark_filter=aba/.
#include <benchmark/benchmark.h>

#include <cmath>
#include <map>

#include "recursive/spatial_tree.hpp"
#include "support/models.hpp"

namespace {

const mbs::Model& chain(int n) {
  static std::map<int, mbs::Model> models;
  auto it = models.find(n);
  if (it == models.end()) {
    std::vector<mbs::testing::ChainLink> links;
    Eigen::Vector3d r = Eigen::Vector3d::Zero();
    for (int i = 0; i < n; ++i) {
      const double angle = (i % 2 == 0 ? 0.3 : -0.2) + 0.01 * i;  // rad from the downward vertical
      r += Eigen::Vector3d(std::sin(angle), -std::cos(angle), 0.0);
      links.push_back({1.0, r});
    }
    it = models.emplace(n, mbs::testing::chain_model(2, links)).first;
  }
  return it->second;
}

using Algorithm = void (*)(const mbs::recursive::SpatialTree&, const Eigen::Ref<const Eigen::VectorXd>&,
                           const Eigen::Ref<const Eigen::VectorXd>&, mbs::recursive::TreeWorkspace&,
                           Eigen::Ref<Eigen::VectorXd>, const mbs::recursive::BodyForces*);

const bool registered = [] {
  const std::pair<const char*, Algorithm> paths[] = {{"aba", mbs::recursive::aba},
                                                     {"aba_planar", mbs::recursive::aba_planar},
                                                     {"aba_spatial", mbs::recursive::aba_spatial},
                                                     {"crba", mbs::recursive::crba},
                                                     {"crba_spatial", mbs::recursive::crba_spatial}};
  for (const auto& [path, algorithm] : paths)
    for (const int n : {2, 3, 4, 5, 6, 8, 10, 20, 30, 50, 100, 1000}) {  // 30: Featherstone's chain (results/scaling)
      if (std::string(path).rfind("crba", 0) == 0 && n > 100) continue;  // O(N^3) on a chain
      const std::string name = std::string("aba/") + path + "/chain=" + std::to_string(n);
      benchmark::RegisterBenchmark(name.c_str(), [algorithm = algorithm, n](benchmark::State& state) {
        mbs::recursive::SpatialTree tree;
        if (const std::string why = mbs::recursive::build_spatial_tree(chain(n), tree); !why.empty())
          state.SkipWithError(why.c_str());
        mbs::recursive::TreeWorkspace ws(tree, true);
        Eigen::VectorXd q = tree.q0, qd = Eigen::VectorXd::Constant(tree.nv, 0.1), qdd(tree.nv);
        for (auto _ : state) {
          algorithm(tree, q, qd, ws, qdd, nullptr);
          benchmark::DoNotOptimize(qdd.data());
          benchmark::ClobberMemory();
        }
        state.counters["ns_per_body"] =
            benchmark::Counter(static_cast<double>(n), benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
      });
    }
  return true;
}();

}  // namespace
