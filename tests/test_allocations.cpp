// The integration loop allocates nothing: a replaced global operator new counts heap allocations
// while a simulator's run() is under way (after setup and one warm-up run). Eigen allocates its
// dynamic matrices with std::malloc, not operator new, so malloc is interposed too (glibc lets the
// executable define malloc; it forwards to __libc_malloc).
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <new>

#include "core/formulation.hpp"
#include "problem/problem.hpp"
#include "run/tuner.hpp"

namespace {
std::atomic<bool> g_counting{false};
std::atomic<long> g_allocations{0};
}  // namespace

extern "C" void* __libc_malloc(std::size_t);
extern "C" void* malloc(std::size_t n) {
  if (g_counting.load(std::memory_order_relaxed)) g_allocations.fetch_add(1, std::memory_order_relaxed);
  return __libc_malloc(n);
}

void* operator new(std::size_t n) {
  if (g_counting.load(std::memory_order_relaxed)) g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = __libc_malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t n) { return operator new(n); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }

namespace mbs {
namespace {

// The counter must see both kinds: a std::vector (operator new) and a dynamic Eigen vector (malloc).
TEST(Allocations, CounterSeesEigenAndStdAllocations) {
  g_allocations = 0;
  g_counting = true;
  auto* v = new std::vector<double>(10);
  g_counting = false;
  delete v;
  EXPECT_GE(g_allocations.load(), 1);
  g_allocations = 0;
  g_counting = true;
  Eigen::VectorXd x(Eigen::VectorXd::LinSpaced(50, 0.0, 1.0));
  g_counting = false;
  EXPECT_EQ(g_allocations.load(), 1);
  EXPECT_DOUBLE_EQ(x[49], 1.0);
}

class LoopAllocations : public ::testing::TestWithParam<std::pair<const Formulation*, IntegratorInfo>> {};

TEST_P(LoopAllocations, RunAllocatesNothingAfterSetup) {
  const auto& [formulation, info] = GetParam();
  const Problem p = load_problem(MBS_SOURCE_DIR "/problems/planar_pendulum.yaml");
  // A representative setting: the middle of the tuner's range (the loop's code path does not
  // depend on it), a few thousand steps at most.
  const double setting = info.kind == SettingKind::kFixedStep ? 1e-2 : 1e-6;
  auto sim = formulation->create(p.model, info.name, setting);
  sim->run(p.run.end_time, nullptr);  // warm-up
  g_allocations = 0;
  g_counting = true;
  sim->run(p.run.end_time, nullptr);
  g_counting = false;
  const long n = g_allocations.load();
  RecordProperty("allocations", std::to_string(n));
  // Fixed-step methods are required to be allocation-free; the adaptive ones of our own too.
  // SUNDIALS IDA is a library whose internals we do not control: it is reported, not asserted.
  if (formulation->name() != "ida-index3")
    EXPECT_EQ(n, 0) << formulation->name() << "/" << info.name << " allocated " << n << " times in run()";
  else
    std::printf("[ info     ] %s/%s: %ld heap allocations in run()\n", formulation->name().c_str(), info.name.c_str(), n);
}

std::vector<std::pair<const Formulation*, IntegratorInfo>> cases() {
  std::vector<std::pair<const Formulation*, IntegratorInfo>> out;
  for (const Formulation* f : Registry::instance().all())
    for (const IntegratorInfo& i : f->integrators()) out.emplace_back(f, i);
  return out;
}

INSTANTIATE_TEST_SUITE_P(AllCases, LoopAllocations, ::testing::ValuesIn(cases()),
                         [](const auto& info) {
                           std::string n = info.param.first->name() + "_" + info.param.second.name;
                           for (char& c : n)
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           return n;
                         });

}  // namespace
}  // namespace mbs
