#include <cstdio>
#include "core/formulation.hpp"
#include "problem/problem.hpp"
int main(int, char** argv) {
  auto p = mbs::load_problem(argv[1]);
  for (auto* f : mbs::Registry::instance().all()) {
    for (auto& in : f->integrators()) {
      auto sim = f->create(p.model, in.name, in.name == "rk4" ? 10.0 / 276 : 1e-9);
      auto st = sim->run(10.0, nullptr);
      std::printf("%s/%s steps %ld\n", f->name().c_str(), in.name.c_str(), st.steps);
    }
  }
}
