// What the tests of the IDA formulations (ida-index3, ida-ggl) share: the two-rod chain, the
// iteration matrix by central differences of a DAE's residual, the constraint levels of consistent
// initial conditions, the pendulum with its rod twice, the loose-tolerance run.
#pragma once

#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "core/formulation.hpp"
#include "core/natural_coordinates.hpp"
#include "problem/problem.hpp"
#include "references/simple_pendulum.hpp"
#include "support/models.hpp"
#include "support/monitor.hpp"

namespace mbs::testing {

inline const char* const kIdaPendulum = MBS_SOURCE_DIR "/problems/planar_pendulum.yaml";

// Ground - rod - A - rod - B, off-axis so no term vanishes by symmetry; B moves off the
// constraint-compatible velocities so the projection has work to do.
inline Model two_rod_chain(int dim) {
  return chain_model(dim, {{1.5, {0.6, -0.8, 0.0}, {0.4, 0.9, 0.0}},
                           {0.5, {1.1, -0.8 + std::sqrt(0.49 - 0.25), 0.0}, {-1.2, 0.5, 0.0}}});  // |B - A| = 0.7
}

// J = dF/dy + cj dF/dy' by central differences of dae.residual: truncation O(eps^2), round-off
// O(1e-16 |F| / eps).
template <class Dae>
Eigen::MatrixXd finite_difference_iteration_matrix(Dae& dae, double cj, const Eigen::VectorXd& y,
                                                   const Eigen::VectorXd& yp, double eps = 1e-6) {
  const int n = dae.size();
  Eigen::MatrixXd J_fd(n, n);
  Eigen::VectorXd Fp(n), Fm(n), Fyp(n), Fym(n);
  for (int j = 0; j < n; ++j) {
    Eigen::VectorXd y_p = y, y_m = y, yp_p = yp, yp_m = yp;
    y_p[j] += eps;
    y_m[j] -= eps;
    yp_p[j] += eps;
    yp_m[j] -= eps;
    dae.residual(y_p, yp, Fp);
    dae.residual(y_m, yp, Fm);
    dae.residual(y, yp_p, Fyp);
    dae.residual(y, yp_m, Fym);
    J_fd.col(j) = (Fp - Fm) / (2 * eps) + cj * (Fyp - Fym) / (2 * eps);
  }
  return J_fd;
}

// Consistent initial conditions y = (q, v, ...), y' = (q', v', ...) meet every constraint level:
// Phi (q0 is the model's, on the manifold), Phi_q v, and Phi_q v' + d/dt(Phi_q) v.
inline void expect_constraint_levels_met(const NaturalCoordinates& nat, const Eigen::VectorXd& y,
                                         const Eigen::VectorXd& yp) {
  const int nq = nat.nq();
  const auto q = y.head(nq), v = y.segment(nq, nq);
  Eigen::VectorXd c(nat.nc()), c_dot(nat.nc());
  nat.Phi(q, c);
  EXPECT_LT(c.cwiseAbs().maxCoeff(), 1e-15);
  nat.Phi_q_times(q, v, c);
  EXPECT_LT(c.cwiseAbs().maxCoeff(), 1e-14);
  nat.Phi_q_times(q, yp.segment(nq, nq), c);  // acceleration level
  nat.Phi_q_dot_v(q, v, c_dot);
  EXPECT_LT((c + c_dot).cwiseAbs().maxCoeff(), 1e-13);
}

// The pendulum off horizontal (so the rod tension is not zero), and the same with its rod twice:
// Phi_q of rank 1 of 2.
struct RedundantPendulum {
  Model single, twice;
};
inline RedundantPendulum redundant_pendulum() {
  Problem problem = load_problem(kIdaPendulum);
  RedundantPendulum p{problem.model, problem.model};
  p.single.points[0].r0 << 0.6, -0.8;
  p.twice = p.single;
  p.twice.elements.push_back(p.twice.elements[0]);
  return p;
}

// On the pendulum at rtol 1e-3 and 1e-4 a formulation's "bdf" ends at t_end or fails with IDA's
// flag named.
inline void expect_loose_tolerance_ends_or_names_failure(const Formulation& f, const Problem& problem) {
  for (double rtol : {1e-3, 1e-4}) {
    auto sim = f.create(problem.model, "bdf", rtol);
    Monitor obs(problem.model);
    try {
      sim->run(problem.run.end_time, &obs);
      EXPECT_DOUBLE_EQ(obs.t_final, 10.0) << "rtol " << rtol;
    } catch (const SolverError& e) {
      EXPECT_NE(std::string(e.what()).find("IDASolve failed with flag"), std::string::npos) << e.what();
    }
  }
}

}  // namespace mbs::testing
