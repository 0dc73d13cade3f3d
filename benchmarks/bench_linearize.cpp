// One linearization about a static equilibrium, per formulation that has a linearizer, on the 3D
// pendulum and the planar and spatial double pendulums built in code (tests/support/models.hpp).
// Names: linearize/<formulation>/<model>; filter with --benchmark_filter=linearize/. The harness's
// own row for pendulum_3d_linearization times the same call on the problem file.
#include <benchmark/benchmark.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/formulation.hpp"
#include "support/models.hpp"

namespace {

mbs::Model double_pendulum(int dim) {
  mbs::Model m = mbs::testing::chain_model(dim, {{1.0, Eigen::Vector3d(0, -1, 0)}, {1.0, Eigen::Vector3d(0, -2, 0)}});
  m.name = dim == 3 ? "double_pendulum_3d" : "double_pendulum_2d";
  return m;
}

const std::vector<std::pair<std::string, mbs::Model>>& models() {
  static const std::vector<std::pair<std::string, mbs::Model>> all = {
      {"pendulum_3d", mbs::testing::pendulum_3d()}, {"double_pendulum_2d", double_pendulum(2)},
      {"double_pendulum_3d", double_pendulum(3)}};
  return all;
}

const bool registered = [] {
  for (const mbs::Formulation* f : mbs::Registry::instance().all())
    for (const auto& [name, model] : models()) {
      if (!f->linearization_unsupported_reason(model).empty()) continue;
      const std::string id = "linearize/" + f->name() + "/" + name;
      benchmark::RegisterBenchmark(id.c_str(), [f, &model = model](benchmark::State& state) {
        std::unique_ptr<mbs::Linearizer> lin = f->create_linearizer(model);
        for (auto _ : state) benchmark::DoNotOptimize(&lin->linearize());
      });
    }
  return true;
}();

}  // namespace
