// Formulation "ida-index3": natural coordinates as an index-3 DAE in y = (q, v, lambda), solved by
// SUNDIALS IDA (variable-order, variable-step BDF) with a dense analytic Jacobian.
//
// Error test: only q is in IDA's local error test; v and lambda are flagged algebraic (id = 0) and
// suppressed (IDASetSuppressAlg). BDF error estimates of the index-2 v and index-3 lambda do not
// shrink with h as IDA's estimator assumes, and v is only as accurate as the differentiated q
// anyway. With v left in (only lambda out) and plain weights the step collapses at most rtols (and
// takes far more steps where it does not); with the h-scaled weights below it runs, but the
// loosest rtol meeting the energy rule takes more steps (docs/formulations.md, Method notes).
//
// Error weights (IDAWFtolerances, not IDASStolerances): q gets 1 / (rtol |q| + atol); v and lambda,
// which only enter the Newton convergence test, get tolerances scaled by 1/h and 1/h^2 (the index
// scaling RADAU5 applies to index-2 and index-3 variables). Their Newton corrections, and the
// round-off in them, are 1/h and 1/h^2 times those of q, so with fixed weights the Newton test
// fails ever more as h shrinks and the step collapses (seen with IDASStolerances at tight rtols on
// the pendulum early in the run, where lambda ~ 0 leaves only atol; Method notes).
//
// The first step and its weights: IDA computes the weights once before the first step and again
// only after a successful one, so the h they are scaled by must be the step IDA first tries, and
// the retries at t = 0 (error-test or Newton failures, h cut up to 4x each) never rescale them.
// Before, the first weights took h = 1 (plain tolerances; on a second run, IDA still reported the
// previous run's last step, so runs differed), and IDA's own first step, 0.001 t_end shortened only
// by q' (zero from rest), ignored q''. On spatial rigid bodies at tight rtols every first step
// then failed Newton's test on lambda, whose tolerance was h^2 too tight, down to IDA_CONV_FAIL at
// t = 0 (a closed spatial loop of rigid bars; tests/test_elements.cpp; Method notes). Now the first
// step is ours, from q' and q'' (BDF1's local error h^2/2 |q''| about half the q tolerance), set
// with IDASetInitStep each run by the common driver (common/ida_driver.hpp), and the weights use it
// until the first step is taken. atol and m_min: ida::Tolerances (the same relative accuracy on the
// model's smallest length).
//
// Planar pendulum: below some rtol the energy rule holds; in a band above it drift is not monotone
// in rtol (which rtols pass shifts with small changes, e.g. the weights before the first step;
// docs/formulations.md, Method notes). The tuner confirms
// its choice on a grid and the midpoints below it, which is why its setting can sit in that band.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "common/ida_driver.hpp"
#include "core/formulation.hpp"
#include "ida_index3/ida_residual.hpp"
#include "ida_index3/linearizer.hpp"

namespace mbs::ida_index3 {

// ---------------------------------------------------------------------------------------------
// The DAE

Index3Dae::Index3Dae(const Model& model, bool sparse) : NaturalDae(model, sparse) {
  // Sparse mode: Phi_q at the position level and, transposed, in the dynamics (x lambda); the
  // geometric stiffness sum_k lambda_k Phi_k,qq in the dynamics' q block.
  const int n = nq();
  if (sparse_) place_constraint_terms(size(), {{2 * n, 0, false, &slot_j_}, {n, 2 * n, true, &slot_jt_}}, {{n, false, &slot_hess_}});
}

void Index3Dae::jacobian_sparse(double cj, const Eigen::Ref<const Eigen::VectorXd>& y, double* values) {
  const int n = nq(), m = nc();
  start_sparse_values(cj, values);
  const double* J = kept_Phi_q_sparse(y.head(n)).valuePtr();
  for (size_t p = 0; p < slot_j_.size(); ++p) {
    values[slot_j_[p]] = J[p];
    values[slot_jt_[p]] = J[p];
  }
  scatter(y.tail(m), lambda_all_);
  for (size_t e = 0; e < hess_.size(); ++e) values[slot_hess_[e]] += lambda_all_[hess_[e].row] * hess_[e].coef;
}

void Index3Dae::residual(const Eigen::Ref<const Eigen::VectorXd>& y, const Eigen::Ref<const Eigen::VectorXd>& yp,
                         Eigen::Ref<Eigen::VectorXd> F) {
  const int n = nq(), m = nc();
  const auto q = y.head(n), v = y.segment(n, n), lambda = y.tail(m);
  const auto q_dot = yp.head(n), v_dot = yp.segment(n, n);

  // kinematics: q' - v = 0
  F.head(n) = q_dot - v;

  // dynamics: M v' + Phi_q^T lambda - Q = 0
  auto F_dyn = F.segment(n, n);
  if (sparse_) {
    F_dyn.noalias() = kept_Phi_q_sparse(q).transpose() * lambda;
  } else {
    kept_Phi_q(q);
    F_dyn.noalias() = Phi_q_.transpose() * lambda;
  }
  add_M_v_dot_minus_Q(q, v, v_dot, F_dyn);

  // constraints: Phi(q) = 0 (kept rows)
  kept_Phi(q, F.segment(2 * n, m));
}

void Index3Dae::jacobian(double cj, const Eigen::Ref<const Eigen::VectorXd>& y, Eigen::Ref<Eigen::MatrixXd> J) {
  const int n = nq(), m = nc();
  const auto q = y.head(n);
  J.setZero();

  // kinematics rows: [cj I, -I, 0]
  J.block(0, 0, n, n).diagonal().setConstant(cj);
  J.block(0, n, n, n).diagonal().setConstant(-1.0);

  // dynamics rows: [sum_k lambda_k d2Phi_k/dq2 - dQ/dq, cj M - dQ/dv, Phi_q^T]
  scatter(y.tail(m), lambda_all_);
  nat_.add_Phi_qq_times(lambda_all_, J.block(n, 0, n, n));
  add_dynamics_blocks(cj, q, y.segment(n, n), J.block(n, 0, n, n), J.block(n, n, n, n));
  kept_Phi_q(q);
  J.block(n, 2 * n, n, m) = Phi_q_.transpose();

  // constraints rows: [Phi_q, 0, 0]
  J.block(2 * n, 0, m, n) = Phi_q_;
}

void Index3Dae::consistent_initial_conditions(Eigen::Ref<Eigen::VectorXd> y, Eigen::Ref<Eigen::VectorXd> yp) {
  consistent_q_v_lambda("ida-index3", y, yp);
  // lambda' is not determined at this level; it only seeds IDA's first predictor.
  yp.tail(nc()).setZero();
}

// ---------------------------------------------------------------------------------------------
// The IDA simulator: the common driver (common/ida_driver.hpp) with this formulation's weights
// and first step.

namespace {

class IdaSimulator final : public ida::Driver<Index3Dae> {
 public:
  IdaSimulator(const Model& model, double rtol, ErrorTest error_test, bool sparse)
      : Driver(model, sparse, rtol, error_test, {"", "redundant constraints?"}) {}

 private:
  // From q' and q'' (see the top of the file).
  double do_first_step(double t_end) const override { return first_step_from_q(t_end); }

  // q: rtol |q| + atol (m). v and lambda (index 2 and 3) are scaled by h and h^2: tolerance
  // rtol |v| + atol / h (m/s) and rtol |lambda| + m_min atol / h^2 (N). Newton corrections to v and
  // lambda are ~ 1/h and 1/h^2 times those to q (and so is their round-off), so fixed weights make
  // the Newton convergence test fail ever more as h shrinks, and the step collapses.
  void do_error_weights(double h, const double* y, double* w) const override {
    const int nq = dae().nq(), n = dae().size();
    const ida::Tolerances& tol = tolerances();
    const double rtol = tol.rtol, atol = tol.atol, m_min = tol.m_min;
    for (int i = 0; i < nq; ++i) w[i] = tol.q_weight(y[i]);
    for (int i = nq; i < 2 * nq; ++i) w[i] = h / (rtol * h * std::abs(y[i]) + atol);
    for (int i = 2 * nq; i < n; ++i) w[i] = h * h / (rtol * h * h * std::abs(y[i]) + m_min * atol);
  }
};

class IdaIndex3 final : public ida::BdfFormulation {
 public:
  IdaIndex3()
      : BdfFormulation([](const Model& model, double rtol) { return make_simulator(model, rtol); },
                       "SUNDIALS IDA, variable-order BDF, index 3, v and lambda out of the error test") {}
  std::string name() const override { return "ida-index3"; }
  std::string description() const override {
    return "natural coordinates, index-3 DAE in (q, v, lambda), SUNDIALS IDA with analytic dense Jacobian";
  }
  std::string linearization_unsupported_reason(const Model& model) const override {
    return linearizer_unsupported_reason(model);
  }
  std::unique_ptr<Linearizer> create_linearizer(const Model& model) const override { return make_linearizer(model); }
};

}  // namespace

std::unique_ptr<Simulator> make_simulator(const Model& model, double rtol, ErrorTest error_test, LinearAlgebra la) {
  return ida::make_checked<IdaSimulator>("ida-index3", model, rtol, error_test, la);
}

MBS_REGISTER_FORMULATION(IdaIndex3);

}  // namespace mbs::ida_index3
