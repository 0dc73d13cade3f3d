// The N-four-bar (IFToMM A02, problems/n_four_bar.yaml): the sparse linear algebra against the dense
// one (same matrices exactly, same steps to round-off), and small-N mechanisms passing their
// singular positions (every crank horizontal, Phi_q short of N ranks) in each formulation that
// claims to handle them: constraints and energy kept, B0 against the reduced 1-DOF model.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fmt/format.h>

#include "alm_index3/alm_index3.hpp"
#include "common/sparse_natural.hpp"
#include "core/natural_coordinates.hpp"
#include "gen_alpha/gen_alpha.hpp"
#include "ida_ggl/ggl_dae.hpp"
#include "ida_index3/ida_residual.hpp"
#include "penalty/penalty.hpp"
#include "problem/problem.hpp"
#include "projection/projection.hpp"
#include "run/reference_setup.hpp"
#include "support/alloc_counter.hpp"
#include "support/monitor.hpp"
#include "support/n_four_bar.hpp"

namespace mbs {
namespace {

Problem n_four_bar(int n, double end_time) {
  return load_problem_text(testing::n_four_bar_yaml(n, end_time), "n_four_bar.yaml");
}

// A state off the initial configuration (and off the constraints), to exercise every term.
Eigen::VectorXd perturbed(const Eigen::VectorXd& x, double scale, int seed) {
  Eigen::VectorXd d(x.size());
  for (int i = 0; i < x.size(); ++i) d[i] = std::sin(1.3 * i + seed);
  return x + scale * d;
}

Eigen::MatrixXd to_dense(const SparseSystem& s, int n) {
  Eigen::MatrixXd A = Eigen::MatrixXd::Zero(n, n);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      int slot = const_cast<SparseSystem&>(s).slot(i, j);
      if (slot < 0) slot = const_cast<SparseSystem&>(s).slot(j, i);
      if (slot >= 0) A(i, j) = s.values()[slot];
    }
  return A;
}

// ---------------------------------------------------------------------------------------------
// Sparse matrices against NaturalCoordinates' dense ones

TEST(NFourBarSparse, JacobianTangentAndSchurMatchDense) {
  const Problem p = n_four_bar(3, 1.0);
  const NaturalCoordinates nat(p.model);
  const int nq = nat.nq(), nc = nat.nc();
  ASSERT_EQ(nq, 42);
  ASSERT_EQ(nc, 41);
  const Eigen::VectorXd q = perturbed(p.model.initial_q(), 0.05, 1);
  const Eigen::VectorXd q2 = perturbed(p.model.initial_q(), 0.07, 2);
  Eigen::VectorXd mu(nc);
  for (int k = 0; k < nc; ++k) mu[k] = std::cos(0.7 * k) * 30.0;
  const Eigen::VectorXd m = nat.M_diag();

  Eigen::MatrixXd J(nc, nq), J2(nc, nq);
  nat.Phi_q(q, J);
  nat.Phi_q(q2, J2);
  SparseJacobian Js(nat), J2s(nat);
  Js.evaluate(q);
  J2s.evaluate(q2);
  EXPECT_EQ((Eigen::MatrixXd(Js.matrix()) - J).cwiseAbs().maxCoeff(), 0.0);
  EXPECT_LT(Js.nonzeros(), nc * 8) << "structural zeros of the coincidence rows are not in the pattern";

  // Symmetric tangent M + a J^T J + s K(mu) (alm-index3) and unsymmetric M + a J^T J2 + s K(mu) (penalty).
  const double a = 1e3, s = 0.25;
  for (const bool symmetric : {true, false}) {
    SCOPED_TRACE(symmetric ? "symmetric" : "unsymmetric");
    SparseTangent T(nat, Js, symmetric, true);
    T.set_zero();
    T.add_gram(a, Js, symmetric ? Js : J2s);
    T.add_geometric_stiffness(mu, s);
    T.add_diagonal(m);
    Eigen::MatrixXd K = Eigen::MatrixXd::Zero(nq, nq);
    nat.add_Phi_qq_times(mu, K);
    Eigen::MatrixXd D = a * J.transpose() * (symmetric ? J : J2) + s * K;
    D.diagonal() += m;
    const Eigen::MatrixXd Ts = to_dense(T.system(), nq);
    if (symmetric) {
      EXPECT_LT((Ts - D).cwiseAbs().maxCoeff(), 1e-12 * D.cwiseAbs().maxCoeff());
    } else {
      Eigen::MatrixXd Tfull = Eigen::MatrixXd::Zero(nq, nq);
      for (int i = 0; i < nq; ++i)
        for (int j = 0; j < nq; ++j)
          if (const int slot = T.system().slot(i, j); slot >= 0) Tfull(i, j) = T.system().values()[slot];
      EXPECT_LT((Tfull - D).cwiseAbs().maxCoeff(), 1e-12 * D.cwiseAbs().maxCoeff());
    }
    ASSERT_TRUE(T.factorize());
    Eigen::VectorXd b = Eigen::VectorXd::LinSpaced(nq, -1.0, 2.0), x(nq);
    T.solve(b, x);
    EXPECT_LT((D * x - b).cwiseAbs().maxCoeff(), 1e-10 * b.cwiseAbs().maxCoeff());
  }

  // G M^-1 G^T of a subset of the rows.
  std::vector<int> rows;
  for (int k = 0; k < nc; k += 2) rows.push_back(k);
  SparseJacobian G(nat, rows);
  G.evaluate(q);
  Eigen::MatrixXd Gd(rows.size(), nq);
  for (size_t k = 0; k < rows.size(); ++k) Gd.row(k) = J.row(rows[k]);
  EXPECT_EQ((Eigen::MatrixXd(G.matrix()) - Gd).cwiseAbs().maxCoeff(), 0.0);
  SparseSchur S(G);
  const Eigen::VectorXd m_inv = m.cwiseInverse();
  ASSERT_TRUE(S.assemble_and_factorize(G, m_inv, 0.0, 0.0));
  EXPECT_FALSE(S.shifted());
  const Eigen::MatrixXd Sd = Gd * m_inv.asDiagonal() * Gd.transpose();
  EXPECT_LT((to_dense(S.system(), static_cast<int>(rows.size())) - Sd).cwiseAbs().maxCoeff(), 1e-13 * Sd.norm());
  Eigen::VectorXd b = Eigen::VectorXd::LinSpaced(static_cast<int>(rows.size()), 1.0, -1.0), x(rows.size());
  S.solve(b, x);
  EXPECT_LT((Sd * x - b).cwiseAbs().maxCoeff(), 1e-10);
  // Shifted by 1e-8 of the largest diagonal entry and refined once (a near-singular threshold no
  // pivot meets forces it): exact to (delta / s_min)^2 here.
  ASSERT_TRUE(S.assemble_and_factorize(G, m_inv, 1e-8, 2.0));
  EXPECT_TRUE(S.shifted());
  Eigen::VectorXd x2(rows.size());
  S.solve(b, x2);
  EXPECT_LT((x2 - x).cwiseAbs().maxCoeff(), 1e-10 * x.cwiseAbs().maxCoeff());
}

TEST(NFourBarSparse, IdaIterationMatrixMatchesDense) {
  const Problem p = n_four_bar(3, 1.0);
  ida_index3::Index3Dae dense(p.model, false), sparse(p.model, true);
  ASSERT_EQ(dense.size(), sparse.size());
  const int n = dense.size(), nq = dense.nq();
  Eigen::VectorXd y = Eigen::VectorXd::Zero(n);
  y.head(nq) = perturbed(p.model.initial_q(), 0.05, 3);
  y.segment(nq, nq) = perturbed(p.model.initial_v(), 0.3, 4);
  for (int k = 0; k < dense.nc(); ++k) y[2 * nq + k] = 10.0 * std::cos(k);
  Eigen::VectorXd yp = perturbed(Eigen::VectorXd::Zero(n), 1.0, 5);
  const double cj = 123.0;
  Eigen::MatrixXd Jd(n, n);
  dense.jacobian(cj, y, Jd);
  std::vector<double> values(sparse.row_indices().size());
  sparse.jacobian_sparse(cj, y, values.data());
  Eigen::MatrixXd Js = Eigen::MatrixXd::Zero(n, n);
  for (int c = 0; c < n; ++c)
    for (int64_t p2 = sparse.column_pointers()[c]; p2 < sparse.column_pointers()[c + 1]; ++p2)
      Js(sparse.row_indices()[p2], c) += values[p2];
  EXPECT_LT((Js - Jd).cwiseAbs().maxCoeff(), 1e-13 * Jd.cwiseAbs().maxCoeff());
  Eigen::VectorXd Fd(n), Fs(n);
  dense.residual(y, yp, Fd);
  sparse.residual(y, yp, Fs);
  EXPECT_LT((Fd - Fs).cwiseAbs().maxCoeff(), 1e-13 * Fd.cwiseAbs().maxCoeff());
}

// The same steps, dense and sparse, to round-off: a short run of each fixed-step case.
TEST(NFourBarSparse, SameStepsDenseAndSparse) {
  const Problem p = n_four_bar(3, 1.0);
  struct Case {
    const char* name;
    std::function<std::unique_ptr<Simulator>(LinearAlgebra)> make;
  };
  const std::vector<Case> cases = {
      {"alm-index3", [&](LinearAlgebra la) { return alm_index3::make_simulator(p.model, 1e-3, la); }},
      {"penalty", [&](LinearAlgebra la) { return penalty::make_simulator(p.model, 1e-3, la); }},
      {"gen-alpha/rho-0.9", [&](LinearAlgebra la) { return gen_alpha::make_simulator(p.model, 0.9, 1e-3, la); }},
      {"projection/rk4", [&](LinearAlgebra la) { return projection::make_simulator(p.model, "rk4", 1e-3, true, la); }},
      {"projection/dopri5", [&](LinearAlgebra la) { return projection::make_simulator(p.model, "dopri5", 1e-8, true, la); }},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    testing::Monitor dense(p.model), sparse(p.model);
    c.make(LinearAlgebra::kDense)->run(0.05, &dense);
    c.make(LinearAlgebra::kSparse)->run(0.05, &sparse);
    ASSERT_EQ(dense.reports, sparse.reports);
    EXPECT_LT((dense.q_final - sparse.q_final).cwiseAbs().maxCoeff(), 1e-12);
  }
  // IDA: adaptive, so round-off may move a step; the states agree to far below the tolerance.
  testing::Monitor dense(p.model), sparse(p.model);
  ida_index3::make_simulator(p.model, 1e-8, ida_index3::ErrorTest::kPositionsOnly, LinearAlgebra::kDense)->run(0.05, &dense);
  ida_index3::make_simulator(p.model, 1e-8, ida_index3::ErrorTest::kPositionsOnly, LinearAlgebra::kSparse)->run(0.05, &sparse);
  EXPECT_LT((dense.q_final - sparse.q_final).cwiseAbs().maxCoeff(), 1e-10);
}


// The sparse integration loops of alm-index3, gen-alpha, projection, penalty and ida-ggl allocate nothing
// after setup and a warm-up run (values written into fixed patterns, LDLT factorized in place, penalty's
// KLU refactored on its kept pivot sequence, ida-ggl's on its first run's first pivots). ida-index3's does, in code that is not ours (SUNDIALS'
// KLU solver refactors from scratch, allocating, whenever KLU's condition estimate of the index-3
// iteration matrix falls below eps^(2/3), as it does at small steps); it is counted here.
TEST(NFourBarSparse, LoopsAllocateNothing) {
  MBS_SKIP_WITHOUT_ALLOCATION_COUNTING();
  const Problem p = n_four_bar(3, 1.0);
  const double t = 0.05;
  auto check = [&](const char* name, std::unique_ptr<Simulator> sim, bool expect_none) {
    sim->run(t, nullptr);  // warm-up
    const long n = testing::allocations_during([&] { sim->run(t, nullptr); });
    RecordProperty(name, std::to_string(n));
    if (expect_none) EXPECT_EQ(n, 0) << name;
    else EXPECT_GT(n, 0) << name << " was expected to allocate (update this test and the docs)";
  };
  check("alm-index3", alm_index3::make_simulator(p.model, 1e-3, LinearAlgebra::kSparse), true);
  check("gen-alpha/rho-0.9", gen_alpha::make_simulator(p.model, 0.9, 1e-3, LinearAlgebra::kSparse), true);
  check("projection/rk4", projection::make_simulator(p.model, "rk4", 1e-3, true, LinearAlgebra::kSparse), true);
  check("projection/dopri5", projection::make_simulator(p.model, "dopri5", 1e-8, true, LinearAlgebra::kSparse), true);
  check("ida-index3", ida_index3::make_simulator(p.model, 1e-8, ida_index3::ErrorTest::kPositionsOnly, LinearAlgebra::kSparse),
        false);
  check("penalty", penalty::make_simulator(p.model, 1e-3, LinearAlgebra::kSparse), true);
  check("ida-ggl", ida_ggl::make_simulator(p.model, 1e-8, ida_ggl::ErrorTest::kPositionsAndVelocities, LinearAlgebra::kSparse),
        true);
}

// ---------------------------------------------------------------------------------------------
// Passing singular positions: the 2-window mechanism over 1.5 s crosses two of them (every crank
// horizontal at t = 0.714 s and 1.228 s; the reduced model gives them), where Phi_q loses 2 ranks.

// B0 and the spread of the crank angles (0 on the parallelogram branch) of a natural state.
struct Branch {
  Eigen::Vector2d b0;
  double spread = 0.0;
};
Branch branch_state(const Model& m, const Eigen::VectorXd& q) {
  Branch b;
  double lo = 1e9, hi = -1e9;
  for (size_t k = 0; k < m.bodies.size(); ++k) {
    if (m.bodies[k].name.rfind("crank", 0) != 0) continue;
    const int o = m.body_offset(static_cast<int>(k));
    const Eigen::Vector2d axis = q.segment<2>(o + 4);  // the crank's body y axis, A -> B
    const double angle = std::atan2(axis[0], axis[1]);
    lo = std::min(lo, angle);
    hi = std::max(hi, angle);
    if (m.bodies[k].name == "crank0") b.b0 = q.segment<2>(o) + 0.5 * axis;
  }
  b.spread = hi - lo;
  return b;
}

// B0's error against the reduced model before the first crossing (t_before) and at the end, the
// largest energy drift and |Phi|, and the crank spread at the end.
struct CrossingRun {
  double drift, max_phi, spread, error_before, error_end;
};

class CrossingObserver final : public StepObserver {
 public:
  CrossingObserver(const Model& m, double t_before) : model_(m), monitor(m), t_before_(t_before) {}
  void on_step(double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v) override {
    monitor.on_step(t, q, v);
    if (!seen_ && t >= t_before_ - 1e-12) {
      seen_ = true;
      t_seen = t;
      b0_before = branch_state(model_, q).b0;
    }
  }
  const Model& model_;
  testing::Monitor monitor;
  double t_before_, t_seen = 0.0;
  bool seen_ = false;
  Eigen::Vector2d b0_before = Eigen::Vector2d::Zero();
};

Eigen::Vector2d reduced_b0(int n, double t) {
  const Eigen::Vector2d theta = testing::n_four_bar_reduced(n, t);
  return {std::sin(theta[0]), std::cos(theta[0])};
}

CrossingRun run_crossing(const Problem& p, Simulator& sim, double t_end) {
  CrossingObserver obs(p.model, 0.6);
  sim.run(t_end, &obs);
  EXPECT_NEAR(obs.monitor.t_final, t_end, 1e-12);
  const Branch b = branch_state(p.model, obs.monitor.q_final);
  return {obs.monitor.max_drift, obs.monitor.max_Phi, b.spread, (obs.b0_before - reduced_b0(2, obs.t_seen)).norm(),
          (b.b0 - reduced_b0(2, t_end)).norm()};
}

// The problem file's reference (kind equivalent_pendulum) is the reduced model of
// tests/support/n_four_bar.hpp, B0 = (sin theta, cos theta), at every output time of the 20 s run.
TEST(NFourBarReference, TheProblemFileReferenceIsTheReducedModel) {
  Problem p = load_problem(MBS_SOURCE_DIR "/problems/n_four_bar.yaml");
  attach_reference(p, ReferenceOptions{});
  ASSERT_TRUE(p.reference_trajectory);
  const ReferenceTrajectory& ref = *p.reference_trajectory;
  ASSERT_EQ(ref.x.rows(), 401);
  double worst = 0.0;
  for (int k = 0; k < ref.x.rows(); k += 20) {
    const Eigen::Vector2d y = testing::n_four_bar_reduced(40, k * ref.dt);
    worst = std::max(worst, (ref.x.row(k).transpose() - Eigen::Vector2d(std::sin(y[0]), std::cos(y[0]))).norm());
  }
  EXPECT_LT(worst, 1e-9);  // RK4 at 1e-4 s over 20 s
}

// A wrong inertia shows in the kinetic energy at t = 0 (N = 2: KE0 = 1.5 J, J = (N + 1)/3 + N = 3 kg m^2).
TEST(NFourBarReference, AWrongInertiaIsRejected) {
  auto with_inertia = [](const char* inertia) {
    std::string text = testing::n_four_bar_yaml(2, 1.0);
    text.replace(text.find("score:"), std::string::npos,
                 fmt::format("score:\n  rule: {{metric: max_reference_error, below: 1.0e-3}}\n"
                             "reference: {{kind: equivalent_pendulum, point: crank0.B, pivot: [0, 0, 0], inertia: {}, moment: 3.5}}\n",
                             inertia));
    return text;
  };
  EXPECT_NO_THROW(load_problem_text(with_inertia("3.0"), "n_four_bar_2.yaml"));
  const std::string bad = with_inertia("2.0");
  const size_t line = 1 + std::count(bad.begin(), bad.begin() + bad.find("reference:"), '\n');
  try {
    load_problem_text(bad, "bad.yaml");
    FAIL() << "accepted";
  } catch (const ProblemError& e) {
    EXPECT_NE(std::string(e.what()).find("kinetic energy at t = 0 is 1.5 J, but (1/2) J phi'^2 = 1 J"), std::string::npos) << e.what();
    EXPECT_EQ(std::string(e.what()).rfind(fmt::format("bad.yaml:{}:", line), 0), 0u) << e.what();  // the line of `inertia`
  }
}

TEST(NFourBarSingular, ReducedModelCrossesTwice) {
  EXPECT_EQ(testing::n_four_bar_singular_crossings(2, 1.5), 2);
  EXPECT_EQ(testing::n_four_bar_singular_crossings(2, 0.6), 0);
}

// Fixed-step cases at h and h/2: before the first crossing B0's error falls by the method's order
// (2^2 trapezoidal, 2^4 RK4) within a factor of 1.5; after two crossings the cranks are still
// parallel (the mechanism kept its branch), the constraints hold, and B0's error and the largest
// energy drift still fall by at least the order / 1.5. Sparse and dense give the same trajectory.
TEST(NFourBarSingular, FixedStepCasesKeepBranchAndOrder) {
  const double t_end = 1.5;
  const Problem p = n_four_bar(2, t_end);
  struct Case {
    const char* name;
    double h, order, min_gain_after, max_phi, max_error;
    std::function<std::unique_ptr<Simulator>(double, LinearAlgebra)> make;
  };
  const std::vector<Case> cases = {
      {"alm-index3", 1e-3, 2.0, 2.67, 1e-10, 3e-5,
       [&](double h, LinearAlgebra la) { return alm_index3::make_simulator(p.model, h, la); }},
      {"penalty", 2e-3, 2.0, 2.67, 1e-5, 3e-4,
       [&](double h, LinearAlgebra la) { return penalty::make_simulator(p.model, h, la); }},
      {"projection/rk4", 1e-2, 4.0, 10.0, 1e-11, 1e-4,
       [&](double h, LinearAlgebra la) { return projection::make_simulator(p.model, "rk4", h, true, la); }},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const CrossingRun coarse = run_crossing(p, *c.make(c.h, LinearAlgebra::kDense), t_end);
    const CrossingRun fine = run_crossing(p, *c.make(c.h / 2, LinearAlgebra::kDense), t_end);
    for (const CrossingRun& r : {coarse, fine}) {
      EXPECT_LT(r.max_phi, c.max_phi);
      EXPECT_LT(r.spread, 1e-6) << "the cranks left the parallelogram branch";
      EXPECT_LT(r.error_end, c.max_error);
    }
    const double gain = std::pow(2.0, c.order);
    EXPECT_GT(coarse.error_before / fine.error_before, gain / 1.5) << coarse.error_before << " -> " << fine.error_before;
    EXPECT_LT(coarse.error_before / fine.error_before, gain * 1.5) << coarse.error_before << " -> " << fine.error_before;
    EXPECT_GT(coarse.error_end / fine.error_end, c.min_gain_after) << coarse.error_end << " -> " << fine.error_end;
    EXPECT_GT(coarse.drift / fine.drift, c.min_gain_after) << coarse.drift << " -> " << fine.drift;
    const CrossingRun sparse = run_crossing(p, *c.make(c.h, LinearAlgebra::kSparse), t_end);
    EXPECT_NEAR(sparse.error_end, coarse.error_end, 1e-9 + 1e-6 * coarse.error_end);
    EXPECT_NEAR(sparse.drift, coarse.drift, 1e-9 + 1e-6 * coarse.drift);
  }
}

}  // namespace
}  // namespace mbs
