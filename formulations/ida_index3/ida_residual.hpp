// Formulation "ida-index3": the natural-coordinate equations of motion as an index-3 DAE in
// y = (q, v, lambda), for SUNDIALS IDA. Exposed here so the tests can check the residual, its
// Jacobian and the consistent initial conditions without going through IDA.
#pragma once

#include <Eigen/Dense>
#include <cstdint>
#include <memory>
#include <vector>

#include "common/sparse_natural.hpp"
#include "core/formulation.hpp"
#include "core/natural_coordinates.hpp"

namespace mbs::ida_index3 {

// F(t, y, y') = 0 with y = (q, v, lambda), sizes nq, nq, nc:
//   kinematics:  q' - v                      = 0
//   dynamics:    M v' + Phi_q^T lambda - Q   = 0
//   constraints: Phi(q)                      = 0
// Redundant constraints (a rank-deficient Phi_q, e.g. two spherical joints on one hinge line) would
// make the iteration matrix singular, so only an independent subset of the model's constraint rows
// enters the DAE: chosen once at setup by a column-pivoted QR of Phi_q^T at the initial
// configuration (rank threshold 1e-10 relative). nc() is that subset's size. A rank that changes
// along the motion (a singular configuration) makes the iteration matrix singular there; the
// factorization then fails or IDA's Newton does not converge, and IDA reduces its step (see
// docs/formulations.md, Status, for what happens on the N-four-bar).
//
// Sparse (large models, common/sparse_natural.hpp): the residual uses a fixed-pattern sparse Phi_q,
// and the iteration matrix is written in compressed-column form on a pattern fixed at setup
// (sparse_pattern(), jacobian_sparse()) for SUNDIALS' sparse matrix and KLU.
class Index3Dae {
 public:
  explicit Index3Dae(const Model& model, bool sparse = false);

  int nq() const { return nat_.nq(); }
  int nc() const { return static_cast<int>(rows_.size()); }        // independent rows kept
  int dropped_constraints() const { return nat_.nc() - nc(); }      // redundant rows removed
  const std::vector<int>& constraint_rows() const { return rows_; }  // kept rows of the model's Phi
  int size() const { return 2 * nat_.nq() + nc(); }
  const NaturalCoordinates& nat() const { return nat_; }

  // Residual F, size(). Allocates nothing (runs inside IDA's Newton iteration).
  void residual(const Eigen::Ref<const Eigen::VectorXd>& y, const Eigen::Ref<const Eigen::VectorXd>& yp,
                Eigen::Ref<Eigen::VectorXd> F);
  // Iteration matrix J = dF/dy + cj dF/dy', size() x size(); every entry written. Allocates nothing.
  void jacobian(double cj, const Eigen::Ref<const Eigen::VectorXd>& y, Eigen::Ref<Eigen::MatrixXd> J);

  // Sparse mode: the iteration matrix's compressed-column pattern (column pointers, size() + 1, and
  // row indices), fixed at setup, and its values on that pattern (every entry written; no allocation).
  bool sparse() const { return sparse_; }
  const std::vector<int64_t>& column_pointers() const { return col_ptr_; }
  const std::vector<int64_t>& row_indices() const { return row_ind_; }
  void jacobian_sparse(double cj, const Eigen::Ref<const Eigen::VectorXd>& y, double* values);

  // Consistent (y0, y'0) from the model's initial state: q0 as given, v0 projected
  // mass-orthogonally onto Phi_q v = 0, v'0 and lambda0 from the acceleration-level constraint,
  // q'0 = v0, lambda'0 = 0, through the shared toolkit (common/kept_constraints.hpp) on the kept rows.
  void consistent_initial_conditions(Eigen::Ref<Eigen::VectorXd> y, Eigen::Ref<Eigen::VectorXd> yp);

 private:
  void kept_Phi_q(const Eigen::Ref<const Eigen::VectorXd>& q);  // Phi_q_ <- kept rows of Phi_q(q)
  void build_sparse_pattern();

  NaturalCoordinates nat_;
  bool sparse_ = false;
  Eigen::VectorXd Q_;                // applied forces at the current state (N)
  Eigen::MatrixXd dQ_dq_, dQ_dv_;    // their Jacobians (only sized with force elements)
  std::vector<int> rows_;     // independent constraint rows of the model, ascending
  Eigen::VectorXd inv_m_;     // M^-1 (diagonal)
  Eigen::MatrixXd Phi_q_all_; // model's nc x nq workspace
  Eigen::VectorXd Phi_all_, mu_all_;  // model's nc: Phi, and lambda scattered back onto every row
  Eigen::MatrixXd Phi_q_;     // nc x nq workspace (kept rows)
  // Sparse mode: kept rows of Phi_q, the iteration matrix's pattern and where each term goes.
  std::unique_ptr<SparseJacobian> Phi_q_sp_;
  std::vector<int64_t> col_ptr_, row_ind_;
  std::vector<int> slot_q_, slot_v_, slot_m_;  // (i, i) = cj, (i, nq + i) = -1, (nq + i, nq + i) = cj M_i
  std::vector<int> slot_j_, slot_jt_;          // Phi_q entry p at (2 nq + k, i) and at (nq + i, 2 nq + k)
  struct Hess {
    int slot, row;  // += lambda_all[row] coef
    double coef;
  };
  std::vector<Hess> hess_;
};

// Which variables IDA's local error test sees (the rest are flagged algebraic and suppressed).
enum class ErrorTest {
  kPositionsOnly,            // v and lambda out of the test: what the formulation uses
  kPositionsAndVelocities,   // only lambda out: kept to show why it is not used
};

// The simulator behind the registered integrator "bdf" (ErrorTest::kPositionsOnly); the other
// choice is for experiments and tests only.
// kAuto: dense (SUNDIALS dense matrix and LU) or sparse (sparse matrix and KLU) by model size.
std::unique_ptr<Simulator> make_simulator(const Model& model, double rtol,
                                          ErrorTest error_test = ErrorTest::kPositionsOnly,
                                          LinearAlgebra la = LinearAlgebra::kAuto);

}  // namespace mbs::ida_index3
