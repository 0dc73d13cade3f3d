// Formulation "ida-index3": the natural-coordinate equations of motion as an index-3 DAE in
// y = (q, v, lambda), for SUNDIALS IDA. Exposed here so the tests can check the residual, its
// Jacobian and the consistent initial conditions without going through IDA.
#pragma once

#include <Eigen/Dense>
#include <memory>
#include <vector>

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
// along the motion (a singular configuration) is not handled.
class Index3Dae {
 public:
  explicit Index3Dae(const Model& model);

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

  // Consistent (y0, y'0) from the model's initial state: q0 as given, v0 projected
  // mass-orthogonally onto Phi_q v = 0, v'0 and lambda0 from the acceleration-level constraint,
  // q'0 = v0, lambda'0 = 0. Redundant constraints are tolerated (minimum-norm lambda).
  void consistent_initial_conditions(Eigen::Ref<Eigen::VectorXd> y, Eigen::Ref<Eigen::VectorXd> yp);

 private:
  void kept_Phi_q(const Eigen::Ref<const Eigen::VectorXd>& q);  // Phi_q_ <- kept rows of Phi_q(q)

  NaturalCoordinates nat_;
  Eigen::VectorXd Q_;                // applied forces at the current state (N)
  Eigen::MatrixXd dQ_dq_, dQ_dv_;    // their Jacobians (only sized with force elements)
  std::vector<int> rows_;     // independent constraint rows of the model, ascending
  Eigen::VectorXd inv_m_;     // M^-1 (diagonal)
  Eigen::MatrixXd Phi_q_all_; // model's nc x nq workspace
  Eigen::VectorXd Phi_all_, mu_all_;  // model's nc: Phi, and lambda scattered back onto every row
  Eigen::MatrixXd Phi_q_;     // nc x nq workspace (kept rows)
  // Initial-condition workspace: Schur complement S = Phi_q M^-1 Phi_q^T and its rank-revealing
  // factorization (S is singular when a constraint is redundant).
  Eigen::MatrixXd S_;
  Eigen::CompleteOrthogonalDecomposition<Eigen::MatrixXd> S_cod_;
  Eigen::VectorXd rhs_c_, mu_;
};

// Which variables IDA's local error test sees (the rest are flagged algebraic and suppressed).
enum class ErrorTest {
  kPositionsOnly,            // v and lambda out of the test: what the formulation uses
  kPositionsAndVelocities,   // only lambda out: kept to show why it is not used
};

// The simulator behind the registered integrator "bdf" (ErrorTest::kPositionsOnly); the other
// choice is for experiments and tests only.
std::unique_ptr<Simulator> make_simulator(const Model& model, double rtol,
                                          ErrorTest error_test = ErrorTest::kPositionsOnly);

}  // namespace mbs::ida_index3
