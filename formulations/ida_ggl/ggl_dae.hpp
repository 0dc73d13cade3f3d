// Formulation "ida-ggl": the natural-coordinate equations of motion in the stabilized index-2 form
// of Gear, Gupta and Leimkuhler (GGL, 1985), as a DAE in y = (q, v, lambda, mu) for SUNDIALS IDA.
// Exposed here so the tests can check the residual, its Jacobian and the consistent initial
// conditions without going through IDA.
#pragma once

#include <Eigen/Dense>
#include <cstdint>
#include <memory>
#include <vector>

#include "common/sparse_natural.hpp"
#include "core/formulation.hpp"
#include "core/natural_coordinates.hpp"

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
//
// Redundant constraints: only an independent subset of the model's rows enters the DAE (chosen once
// at setup, common/independent_rows.hpp), as in ida-index3; nc() is that subset's size.
//
// Sparse (large models, common/sparse_natural.hpp): a fixed-pattern sparse Phi_q in the residual and
// the iteration matrix in compressed-column form on a pattern fixed at setup, for KLU.
class GglDae {
 public:
  explicit GglDae(const Model& model, bool sparse = false);

  int nq() const { return nat_.nq(); }
  int nc() const { return static_cast<int>(rows_.size()); }        // independent rows kept
  int dropped_constraints() const { return nat_.nc() - nc(); }      // redundant rows removed
  const std::vector<int>& constraint_rows() const { return rows_; }  // kept rows of the model's Phi
  int size() const { return 2 * nat_.nq() + 2 * nc(); }
  const NaturalCoordinates& nat() const { return nat_; }

  // Residual F, size(). Allocates nothing (runs inside IDA's Newton iteration).
  void residual(const Eigen::Ref<const Eigen::VectorXd>& y, const Eigen::Ref<const Eigen::VectorXd>& yp,
                Eigen::Ref<Eigen::VectorXd> F);
  // Iteration matrix J = dF/dy + cj dF/dy', size() x size(); every entry written. Allocates nothing.
  void jacobian(double cj, const Eigen::Ref<const Eigen::VectorXd>& y, Eigen::Ref<Eigen::MatrixXd> J);

  // Sparse mode: the iteration matrix's compressed-column pattern, fixed at setup, and its values on
  // that pattern (every entry written; no allocation).
  bool sparse() const { return sparse_; }
  const std::vector<int64_t>& column_pointers() const { return col_ptr_; }
  const std::vector<int64_t>& row_indices() const { return row_ind_; }
  void jacobian_sparse(double cj, const Eigen::Ref<const Eigen::VectorXd>& y, double* values);

  // Consistent (y0, y'0) from the model's initial state: q0 as given, v0 projected
  // mass-orthogonally onto Phi_q v = 0 (a no-op for admissible v0), lambda0 from the index-1
  // saddle-point solve (acceleration level), mu0 = 0, q'0 = v0, v'0 = M^-1 (Q - Phi_q^T lambda0),
  // lambda'0 = mu'0 = 0.
  void consistent_initial_conditions(Eigen::Ref<Eigen::VectorXd> y, Eigen::Ref<Eigen::VectorXd> yp);

 private:
  void kept_Phi_q(const Eigen::Ref<const Eigen::VectorXd>& q);  // Phi_q_ <- kept rows of Phi_q(q)
  void build_hessian_entries();
  void build_sparse_pattern();

  NaturalCoordinates nat_;
  bool sparse_ = false;
  Eigen::VectorXd Q_;                // applied forces at the current state (N)
  Eigen::MatrixXd dQ_dq_, dQ_dv_;    // their Jacobians (only sized with force elements)
  std::vector<int> rows_;            // independent constraint rows of the model, ascending
  std::vector<int> kept_index_;      // model row -> index among the kept rows (-1: dropped)
  Eigen::VectorXd inv_m_;            // M^-1 (diagonal)
  Eigen::MatrixXd Phi_q_all_;        // model's nc x nq workspace
  Eigen::VectorXd Phi_all_;          // model's nc workspace
  Eigen::VectorXd lambda_all_, mu_all_;  // the multipliers scattered onto the model's rows (dropped: 0)
  Eigen::MatrixXd Phi_q_;            // nc x nq (kept rows)
  Eigen::VectorXd tmp_n_;            // nq workspace
  // Second derivatives of the kept rows (constant: every row is a bilinear form):
  // d2 Phi_row / dq_i dq_j += coef, one entry per contribution (symmetric pairs listed both ways).
  struct HessEntry {
    int i, j, row;  // row: the model's
    double coef;
  };
  std::vector<HessEntry> hess_;
  // Sparse mode: kept rows of Phi_q, the pattern, and where each term goes.
  std::unique_ptr<SparseJacobian> Phi_q_sp_;
  std::vector<int64_t> col_ptr_, row_ind_;
  std::vector<int> slot_qq_, slot_qv_, slot_vv_;  // (i, i) = cj, (i, nq + i) = -1, (nq + i, nq + i) = cj M_i
  // Phi_q entry p (row k, column i) at: (i, 2nq + nc + k) as M_i^-1 Phi_q(k, i) [kinematics, mu],
  // (nq + i, 2nq + k) [dynamics, lambda], (2nq + k, i) [position level], (2nq + nc + k, nq + i) [velocity level].
  std::vector<int> slot_kin_mu_, slot_dyn_lambda_, slot_pos_q_, slot_vel_v_;
  // Hessian entry e at: (i, j) kinematics (x mu / M_i), (nq + i, j) dynamics (x lambda), and
  // (2nq + nc + k, j) velocity level (x v_i).
  std::vector<int> hslot_kin_, hslot_dyn_, hslot_vel_;
};

// Which variables IDA's local error test sees (the rest are flagged algebraic and suppressed).
enum class ErrorTest {
  kPositionsAndVelocities,  // lambda and mu out of the test: what the formulation uses
  kPositionsOnly,           // v out too (ida-index3's choice), kept to compare
};

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
