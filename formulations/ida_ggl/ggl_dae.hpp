// Formulation "ida-ggl": the natural-coordinate equations of motion in the stabilized index-2 form
// of Gear, Gupta and Leimkuhler (GGL, 1985), as a DAE in y = (q, v, lambda, mu) for SUNDIALS IDA.
// Exposed here so the tests can check the residual, its Jacobian and the consistent initial
// conditions without going through IDA.
#pragma once

#include <Eigen/Dense>
#include <memory>
#include <vector>

#include "common/ida_driver.hpp"
#include "common/ida_natural_dae.hpp"
#include "core/formulation.hpp"

namespace mbs::ida_ggl {

// F(t, y, y') = 0 with y = (q, v, lambda, mu), sizes nq, nq, nc, nc:
//   kinematics:          q' - v + M^-1 Phi_q^T mu    = 0
//   dynamics:            M v' + Phi_q^T lambda - Q   = 0
//   position level:      Phi(q)                      = 0
//   velocity level:      Phi_q(q) v                  = 0
// mu is the multiplier of the stabilization: it keeps q on Phi = 0 while v satisfies Phi_q v = 0;
// in the exact solution mu = 0 (differentiate Phi = 0: Phi_q q' = Phi_q v - S mu = -S mu = 0 with
// S = Phi_q M^-1 Phi_q^T regular), so the correction only absorbs the discretization's O(h^(k+1)).
// M^-1 in the kinematics: the correction of q' is mass-orthogonal to the constraint manifold (the
// kinetic-energy metric, in which the initial velocities are projected too, and which does not
// depend on how the coordinates are scaled: a point's position and a rigid body's unit vectors
// carry different masses); mu is then an impulse (N s, Phi_q being dimensionless).
// The constraint rows are the kept independent ones, as in ida-index3 (common/ida_natural_dae.hpp).
class GglDae : public ida::NaturalDae {
 public:
  explicit GglDae(const Model& model, bool sparse = false);

  int size() const { return 2 * nat_.nq() + 2 * nc(); }

  // The DAE of the common driver (ida::NaturalDae). Consistent (y0, y'0): q0 as given, v0
  // projected mass-orthogonally onto Phi_q v = 0 (a no-op for admissible v0), lambda0 from the
  // index-1 saddle-point solve (acceleration level), mu0 = 0, q'0 = v0,
  // v'0 = M^-1 (Q - Phi_q^T lambda0), lambda'0 = mu'0 = 0.
  void residual(ConstVec y, ConstVec yp, Vec F);
  void jacobian(double cj, ConstVec y, Mat J);
  void jacobian_sparse(double cj, ConstVec y, double* values);
  void consistent_initial_conditions(Vec y, Vec yp);

 private:

  Eigen::VectorXd mu_all_;       // mu scattered onto the model's rows (dropped: 0)
  Eigen::VectorXd tmp_n_;        // nq workspace
  // Sparse mode: where each term goes.
  // Phi_q entry p (row k, column i) at: (i, 2nq + nc + k) as M_i^-1 Phi_q(k, i) [kinematics, mu],
  // (nq + i, 2nq + k) [dynamics, lambda], (2nq + k, i) [position level], (2nq + nc + k, nq + i) [velocity level].
  std::vector<int> slot_kin_mu_, slot_dyn_lambda_, slot_pos_q_, slot_vel_v_;
  // Hessian entry e at: (i, j) kinematics (x mu / M_i), (nq + i, j) dynamics (x lambda), and
  // (2nq + nc + k, j) velocity level (x v_i).
  std::vector<int> hslot_kin_, hslot_dyn_, hslot_vel_;
};

// Which variables IDA's local error test sees: kPositionsAndVelocities (lambda and mu out) is what
// the formulation uses; kPositionsOnly (v out too, ida-index3's choice) is kept to compare.
using ErrorTest = ida::ErrorTest;

// The simulator behind the registered integrator "bdf" (ErrorTest::kPositionsAndVelocities).
// kAuto: dense (SUNDIALS dense matrix and LU) or sparse (sparse matrix and KLU) by model size.
std::unique_ptr<Simulator> make_simulator(const Model& model, double rtol,
                                          ErrorTest error_test = ErrorTest::kPositionsAndVelocities,
                                          LinearAlgebra la = LinearAlgebra::kAuto);

// The current DAE state y = (q, v, lambda, mu) of a simulator made by make_simulator (tests and
// diagnostics: it allocates). Throws SolverError for another simulator.
Eigen::VectorXd dae_state(const Simulator& simulator);
// The DAE of a simulator made by make_simulator (sizes, the kept rows).
const GglDae& dae_of(const Simulator& simulator);

}  // namespace mbs::ida_ggl
