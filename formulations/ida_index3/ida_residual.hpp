// Formulation "ida-index3": the natural-coordinate equations of motion as an index-3 DAE in
// y = (q, v, lambda), for SUNDIALS IDA. Exposed here so the tests can check the residual, its
// Jacobian and the consistent initial conditions without going through IDA.
#pragma once

#include <Eigen/Dense>
#include <memory>
#include <vector>

#include "common/ida_driver.hpp"
#include "common/ida_natural_dae.hpp"
#include "core/formulation.hpp"

namespace mbs::ida_index3 {

// F(t, y, y') = 0 with y = (q, v, lambda), sizes nq, nq, nc:
//   kinematics:  q' - v                      = 0
//   dynamics:    M v' + Phi_q^T lambda - Q   = 0
//   constraints: Phi(q)                      = 0
// on the kept independent rows (common/ida_natural_dae.hpp). A rank that changes along the motion
// (a singular configuration) makes the iteration matrix singular there; the factorization then
// fails or IDA's Newton does not converge, and IDA reduces its step (see docs/formulations.md,
// Status, for what happens on the N-four-bar).
class Index3Dae : public ida::NaturalDae {
 public:
  explicit Index3Dae(const Model& model, bool sparse = false);

  int size() const { return 2 * nat_.nq() + nc(); }

  // The DAE of the common driver (ida::NaturalDae): F, J dense or on the sparse pattern, and
  // consistent (y0, y'0): q0 as given, v0 projected mass-orthogonally onto Phi_q v = 0, v'0 and
  // lambda0 from the acceleration-level constraint, q'0 = v0, lambda'0 = 0.
  void residual(ConstVec y, ConstVec yp, Vec F);
  void jacobian(double cj, ConstVec y, Mat J);
  void jacobian_sparse(double cj, ConstVec y, double* values);
  void consistent_initial_conditions(Vec y, Vec yp);

 private:
  // Sparse mode: where each term goes (place_constraint_terms).
  std::vector<int> slot_j_, slot_jt_;          // Phi_q entry p at (2 nq + k, i) and at (nq + i, 2 nq + k)
  std::vector<int> slot_hess_;                 // hess_[e] at (nq + i, j), x lambda
};

// Which variables IDA's local error test sees: kPositionsOnly (v and lambda out) is what the
// formulation uses; kPositionsAndVelocities (only lambda out) is kept to show why it is not.
using ErrorTest = ida::ErrorTest;

// The simulator behind the registered integrator "bdf" (ErrorTest::kPositionsOnly); the other
// choice is for experiments and tests only.
// kAuto: dense (SUNDIALS dense matrix and LU) or sparse (sparse matrix and KLU) by model size.
std::unique_ptr<Simulator> make_simulator(const Model& model, double rtol,
                                          ErrorTest error_test = ErrorTest::kPositionsOnly,
                                          LinearAlgebra la = LinearAlgebra::kAuto);

}  // namespace mbs::ida_index3
