// The formulations that are dense by design refuse a large model up front, with the memory their
// dense objects would take (common/dense_limit.hpp), and take a model below the limit; the sparse
// ones take it, and their set-up holds no dense object.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include "core/formulation.hpp"
#include "elements/rod.hpp"
#include "support/alloc_counter.hpp"
#include "support/models.hpp"

namespace mbs {
namespace {

const Formulation& formulation(const char* name) {
  const Formulation* f = Registry::instance().find(name);
  if (!f) throw std::logic_error(std::string("no formulation ") + name);
  return *f;
}

// 20,000 links: nq = 40,000 coordinates, nc = 20,000 rows, n = nq - nc = 20,000 joint coordinates.
TEST(DenseLimits, TwentyThousandLinkChainIsRefusedWithTheMemoryItWouldTake) {
  const int N = 20000;
  const Model m = testing::zigzag_chain(N);
  const double nq = 2.0 * N, nc = N, n = nq - nc;
  // minimal: R (nq x n), R^T M R and its factor (n x n), 8 bytes a double.
  const std::string minimal = formulation("minimal").unsupported_reason(m);
  EXPECT_NE(minimal.find(fmt::format("would take {:.3g} MB", 8.0 * (nq * n + 2.0 * n * n) / 1e6)), std::string::npos) << minimal;
  // rattle: G, its update (nc x nq) and M^-1 G^T, its update (nq x nc).
  const std::string rattle = formulation("rattle").unsupported_reason(m);
  EXPECT_NE(rattle.find(fmt::format("would take {:.3g} MB", 8.0 * 4.0 * nc * nq / 1e6)), std::string::npos) << rattle;
  // recursive: ABA is O(N); CRBA's H is n x n and its create() refuses it.
  EXPECT_EQ(formulation("recursive").unsupported_reason(m), "");
  try {
    formulation("recursive").create(m, "crba-rk4", 1e-3);
    ADD_FAILURE() << "recursive/crba-rk4 took a 20,000-link chain";
  } catch (const SolverError& e) {
    EXPECT_NE(std::string(e.what()).find(fmt::format("would take {:.3g} MB", 8.0 * n * n / 1e6)), std::string::npos) << e.what();
  }
  // The natural-coordinate formulations on their sparse path take it.
  for (const char* f : {"projection", "alm-index3", "gen-alpha"}) EXPECT_EQ(formulation(f).unsupported_reason(m), "") << f;
}

// A loop closed on the same chain (a rod from its last point to ground): every recursive case builds
// H and the loops' matrices, so the ABA cases refuse it too, before allocating them.
TEST(DenseLimits, TwentyThousandLinkLoopIsRefusedUnderEveryRecursiveCase) {
  const int N = 20000;
  Model m = testing::zigzag_chain(N);
  const Eigen::Vector2d O(0.5, 0.0);
  m.elements.push_back(std::make_shared<Rod>("closing", kGround, N - 1, O, (m.points[N - 1].r0 - O).norm()));
  EXPECT_EQ(formulation("recursive").unsupported_reason(m), "");
  const double n = N, rows = 1.0;
  for (const char* integrator : {"aba-rk4", "crba-dopri5"}) {
    try {
      formulation("recursive").create(m, integrator, 1e-3);
      ADD_FAILURE() << "recursive/" << integrator << " took a 20,000-link loop";
    } catch (const SolverError& e) {
      const std::string why = e.what();
      EXPECT_NE(why.find("the loops' G"), std::string::npos) << why;
      EXPECT_NE(why.find(fmt::format("would take {:.3g} MB", 8.0 * (n * n + 2.0 * rows * n + rows * rows) / 1e6)),
                std::string::npos) << why;
    }
  }
}

// Below the limits (n^3 / 3 = 3.3e8 flops for minimal's factorization, 8 n^2 = 8 MB and n d^2 = 1e9
// flops for CRBA's H at n = d = 1,000) the dense formulations take the chain.
TEST(DenseLimits, ThousandLinkChainIsTaken) {
  const Model m = testing::zigzag_chain(1000);
  EXPECT_EQ(formulation("minimal").unsupported_reason(m), "");
  EXPECT_EQ(formulation("rattle").unsupported_reason(m), "");
  EXPECT_NO_THROW(formulation("recursive").create(m, "crba-rk4", 1e-3));
}

// Set-up of a 5,000-link chain (nq = 10,000, nc = 5,000): one dense nc x nq matrix would be 400 MB;
// the sparse set-up holds O(nq + nnz) (a few hundred bytes a link). Bounded by a tenth of that dense
// matrix, so that a dense object of any of the model's sizes cannot come back unnoticed.
TEST(DenseLimits, SparseSetUpOfAFiveThousandLinkChainHoldsNoDenseObject) {
  MBS_SKIP_WITHOUT_ALLOCATION_COUNTING();
  const int N = 5000;
  const Model m = testing::zigzag_chain(N);
  const double dense = 8.0 * N * (2.0 * N);
  const std::pair<const char*, const char*> cases[] = {{"recursive", "aba-rk4"},     {"projection", "rk4"},
                                                       {"baumgarte", "rk4"},         {"alm-index3", "trapezoidal"},
                                                       {"gen-alpha", "rho-0.9"}};
  for (const auto& c : cases) {
    // Named copies, not structured bindings: C++17 lambdas cannot capture a binding (clang).
    const char* f = c.first;
    const char* integrator = c.second;
    std::unique_ptr<Simulator> sim;
    testing::allocations_during([&] { sim = formulation(f).create(m, integrator, 1e-3); });
    const long bytes = testing::peak_counted_bytes();
    const double peak = static_cast<double>(bytes);
    RecordProperty(std::string(f) + "_peak_bytes", std::to_string(bytes));
    EXPECT_LT(peak, 0.1 * dense) << f << "/" << integrator << ": set-up held " << peak / 1e6 << " MB at its peak";
    EXPECT_GT(peak, 0.0) << f << "/" << integrator;  // the counter saw the set-up
  }
}

}  // namespace
}  // namespace mbs
