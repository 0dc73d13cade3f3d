// Formulation "ida-index3": the natural-coordinate equations of motion as an index-3 DAE in
// y = (q, v, lambda), for SUNDIALS IDA. Exposed here so the tests can check the residual, its
// Jacobian and the consistent initial conditions without going through IDA.
#pragma once

#include <Eigen/Dense>
#include <memory>

#include "core/formulation.hpp"
#include "core/natural_coordinates.hpp"

namespace mbs::ida_index3 {

// F(t, y, y') = 0 with y = (q, v, lambda), sizes nq, nq, nc:
//   kinematics:  q' - v                      = 0
//   dynamics:    M v' + Phi_q^T lambda - Q   = 0
//   constraints: Phi(q)                      = 0
class Index3Dae {
 public:
  explicit Index3Dae(const Model& model);

  int nq() const { return nat_.nq(); }
  int nc() const { return nat_.nc(); }
  int size() const { return 2 * nat_.nq() + nat_.nc(); }
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
  NaturalCoordinates nat_;
  Eigen::VectorXd inv_m_;     // M^-1 (diagonal)
  Eigen::MatrixXd Phi_q_;     // nc x nq workspace
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
