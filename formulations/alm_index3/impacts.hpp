// Contacts of formulation "alm-index3": the TrapezoidalSimulator's impact stepping
// (trapezoidal.hpp holds the class and its plain ALI3-P step).
//
// Contacts (Model::contacts: frictionless point-plane, Newton restitution e). A model without
// contacts takes exactly the plain step of trapezoidal.hpp (same operations, same results). With contacts, a
// step is time-stepping with impulses at a located instant, on the fixed grid:
// 1. The plain step, with the closed (persistent) contacts as extra rows gap_j(q) = n_j . r - d_j = 0
//    of the same augmented Lagrangian (multiplier pi_j, < 0 when the plane pushes).
// 2. If it ends with an open contact inside its plane (gap < -1e-10 L), the instant of impact
//    t_n + s h is estimated from the quadratic through the gap at t_n (value and rate) and at the
//    end of the plain step, and the step is redone as a sub-step of s h with the contacts that hit
//    as bilateral rows: the positions land on the plane (the position projection; rows whose
//    multiplier would pull are dropped, contacts pushed into their plane are added, until
//    consistent). Sub-steps under 0.01 h are not taken (the impact then happens at the nearer end).
// 3. Impact law at that state: the trapezoidal velocity is projected mass-orthogonally onto
//    Phi_q v = 0 exactly (augmented-Lagrangian iterations on M + kappa Phi_q^T Phi_q, redundant
//    constraints fine), then v+ = v0 + sum_a P_a Y_a with Y_a the constrained response to a unit
//    impulse along contact a's normal and P the frictionless complementarity problem of
//    contact_lcp.hpp (enumeration for the few contacts at the plane): Newton's law
//    n.v+ = -e n.v- for contacts that get an impulse, none pulls, none approaches afterwards.
//    The rods hold exactly through the impact. Accelerations and multipliers are then solved afresh
//    for the post-impact state (accelerations(), increment form).
// 4. The rest of the step, (1 - s) h, from the post-impact state, again checked for impacts, so the
//    step ends at t_n + h and the grid is kept; alpha follows the sub-step size (set_step()).
// 5. Accumulation (Zeno) and resting contact: an impact slower than v_thr = max(1 mm/s, 2 |g| h)
//    (below which a rebound lasts less than about a step) is plastic (e = 0) and its contact closes:
//    it becomes a bilateral row until its multiplier would pull by more than 1e-4 of the largest
//    weight, when it opens again (the accelerations are then re-solved without it).
// Behaviour. Impact times: the impact itself happens at the estimated instant (error of the
// quadratic estimate, O(h^3) in time), but a reported state is only at grid times, so an impact is
// seen at the end of the step that contains it (t* in (t - h, t]). Energy: between impacts the
// trapezoidal drift; at an impact exactly the Newton-law dissipation at the located state, so the
// energy after an impact is second-order accurate (docs/formulations.md, Method notes); kinetic
// energy never grows through the impulse (mass-orthogonal, e <= 1). Penetration: none at reported
// states, up to the Newton tolerance (1e-10 L) on the contact rows: the plane is a constraint of
// the sub-step that reaches it.
#pragma once

#include <algorithm>
#include <cmath>
#include <fmt/format.h>

#include "alm_index3/trapezoidal.hpp"

namespace mbs::alm_index3 {
namespace {  // alm_index3.cpp alone includes this: internal linkage, as in one file

// Pre-impact normal speed (m/s) below which an impact is plastic and the contact closes; the
// threshold is raised to 2 |g| h when that is larger (the step cannot resolve slower bounces).
constexpr double kPersistentSpeed = 1e-3;
// Penalty (kg per kg of the largest mass) of the impact's velocity projection onto the bilateral
// constraints, iterated (augmented Lagrangian) until |Phi_q v| <= kProjectionTol |v|.
constexpr double kImpactPenaltyPerMass = 1e4;
constexpr double kProjectionTol = 1e-14;
constexpr int kMaxProjectionIterations = 30;
// A closed contact opens when its force would pull by more than this fraction of the largest weight
// (the converged ALM multipliers carry about 4 m dq / h^2 ~ 1e-4 m g of Newton error).
constexpr double kReleaseForcePerWeight = 1e-4;
// Sub-steps shorter than this fraction of h are not taken (the impact is applied at the nearer end):
// the trapezoidal velocity 2 (q - q_n) / h - q'_n would carry the Newton tolerance divided by h.
constexpr double kMinSubstep = 1e-2;
constexpr int kMaxImpactsPerStep = 1000;  // a guard against loops only

template <int NQ, int NC, typename Solver>
void TrapezoidalSimulator<NQ, NC, Solver>::init_contacts(const Model& model) {
  contacts_ = contact_rows(model);
  g_norm_ = model.gravity.size() > 0 ? model.gravity.norm() : 0.0;
  pi_tol_ = kReleaseForcePerWeight * m_ref_ * std::max(1.0, g_norm_);
  kappa_ = kImpactPenaltyPerMass * m_ref_;
}

// Impacts slower than this are plastic and close their contact (kPersistentSpeed).
template <int NQ, int NC, typename Solver>
void TrapezoidalSimulator<NQ, NC, Solver>::set_contact_threshold(double h) {
  v_thr_ = std::max(kPersistentSpeed, 2.0 * g_norm_ * h);
}

template <int NQ, int NC, typename Solver>
double TrapezoidalSimulator<NQ, NC, Solver>::gap(int j, const Vec& q) const {
  const Contact& c = contacts_[j];
  double g = -c.d0;
  for (int d = 0; d < dim_; ++d) g += c.n[d] * q[c.off + d];
  return g;
}

template <int NQ, int NC, typename Solver>
double TrapezoidalSimulator<NQ, NC, Solver>::normal(int j, const Vec& v) const {
  const Contact& c = contacts_[j];
  double s = 0.0;
  for (int d = 0; d < dim_; ++d) s += c.n[d] * v[c.off + d];
  return s;
}

// x += s n_j (the generalized force of the contact row with multiplier s).
template <int NQ, int NC, typename Solver>
void TrapezoidalSimulator<NQ, NC, Solver>::add_normal(int j, double s, Vec& x) const {
  const Contact& c = contacts_[j];
  for (int d = 0; d < dim_; ++d) x[c.off + d] += s * c.n[d];
}

// T += alpha n n^T for every active contact row (the rows are linear: no geometric stiffness).
template <int NQ, int NC, typename Solver>
void TrapezoidalSimulator<NQ, NC, Solver>::add_contact_stiffness(double alpha, Mat& T) {
  for (int a = 0; a < n_active_; ++a) {
    const Contact& c = contacts_[active_[a]];
    for (int r = 0; r < dim_; ++r)
      for (int s = 0; s < dim_; ++s) T(c.off + r, c.off + s) += alpha * c.n[r] * c.n[s];
  }
}

template <int NQ, int NC, typename Solver>
void TrapezoidalSimulator<NQ, NC, Solver>::set_active(const std::vector<char>& flags) {
  n_active_ = 0;
  for (int j = 0; j < nct_; ++j)
    if (flags[j]) active_[n_active_++] = j;
}

// One step with contacts (see "Contacts" in the header comment): the plain step, with the closed
// contacts as bilateral rows; if it ends with an open contact inside its plane, the step is redone
// as a sub-step to the estimated instant of impact (the contacts that hit as bilateral rows: the
// position projection), the impact law is applied there, and the rest of the step follows from
// the post-impact state (again checked for impacts), so the step still ends at t_n + h.
template <int NQ, int NC, typename Solver>
void TrapezoidalSimulator<NQ, NC, Solver>::contact_step() {
  double rest = h_nom_;  // time left in the step
  for (int events = 0;; ++events) {
    if (events == kMaxImpactsPerStep)
      throw SolverError(fmt::format("alm-index3: more than {} impacts within the step at t = {:.9g} s", events, time()));
    if (rest != h_) set_step(rest);
    q_s_ = q_;
    v_s_ = v_;
    a_s_ = a_;
    lambda_s_ = lambda_;
    pi_s_ = pi_;
    set_active(closed_);
    newton<true>();
    project_velocities_and_accelerations<true>();
    bool hit = false;
    double s = 1.0;  // fraction of the (sub)step to the first impact
    for (int j = 0; j < nct_; ++j) {
      in_set_[j] = closed_[j];
      if (closed_[j] || !(gap(j, q_) < -tol_q_)) continue;
      in_set_[j] = 1;
      hit = true;
      s = std::min(s, impact_fraction(gap(j, q_s_), h_ * normal(j, v_s_), gap(j, q_)));
    }
    if (!hit) {
      bool released = false;
      for (int j = 0; j < nct_; ++j)
        if (closed_[j] && pi_[j] > pi_tol_) closed_[j] = 0, released = true;  // the plane would pull
      if (released) contact_accelerations();
      if (h_ != h_nom_) set_step(h_nom_);
      return;
    }
    // Sub-step to the impact (none when it is within kMinSubstep h of the start; the whole
    // rest when it is that close to the end): positions on the plane for the contacts that hit.
    double h1 = s * rest;
    if (h1 < kMinSubstep * h_nom_) h1 = 0.0;
    if (rest - h1 < kMinSubstep * h_nom_) h1 = rest;
    q_ = q_s_;
    v_ = v_s_;
    a_ = a_s_;
    lambda_ = lambda_s_;
    if (h1 > 0.0) {
      set_step(h1);
      for (int pass = 0; pass <= 2 * nct_ + 1; ++pass) {
        q_ = q_s_;
        v_ = v_s_;
        a_ = a_s_;
        lambda_ = lambda_s_;
        for (int j = 0; j < nct_; ++j) pi_[j] = closed_[j] ? pi_s_[j] : 0.0;
        set_active(in_set_);
        newton<true>();
        // Drop the rows whose multiplier pulls, add any contact pushed into its plane.
        bool changed = false;
        for (int j = 0; j < nct_; ++j) {
          if (in_set_[j] && pi_[j] > pi_tol_) in_set_[j] = 0, changed = true;
          else if (!in_set_[j] && gap(j, q_) < -tol_q_) in_set_[j] = 1, changed = true;
        }
        if (!changed) break;
      }
      // The trapezoidal velocity at the impact instant; impact_velocities() projects it onto
      // the bilateral constraints (not onto the contacts' rows, as the plain projection would).
      v_ = (2.0 / h1) * (q_ - q_s_) - v_s_;
    }
    for (int j = 0; j < nct_; ++j)
      if (!in_set_[j]) closed_[j] = 0;
    impact_velocities();
    contact_accelerations();
    rest -= h1;
    if (rest < kMinSubstep * h_nom_) {
      if (h_ != h_nom_) set_step(h_nom_);
      return;
    }
  }
}

// The augmented-Lagrangian solution of M q'' + Phi_q^T lambda + sum n pi = Q, Phi_q q'' +
// d/dt(Phi_q) q' = 0, n . q'' = 0 (active contacts), as initial_accelerations() but in increment
// form: a moving state has alpha d/dt(Phi_q) q' in the right-hand side, whose cancellation would
// leave a round-off floor of alpha |d/dt(Phi_q) q'| eps; solving for the correction of q'' from
// the current residual does not.
template <int NQ, int NC, typename Solver>
void TrapezoidalSimulator<NQ, NC, Solver>::accelerations() {
  cf_.Phi_q(q_, Phi_q_);
  cf_.Phi_q_dot_v(q_, v_, gamma_);
  Mat& T = solver_.matrix();
  T.noalias() = alpha_acc_ * Phi_q_.transpose() * Phi_q_;
  add_contact_stiffness(alpha_acc_, T);
  T.diagonal() += M_;
  factor();
  ++stats_.jacobian_evals;
  const double a_ref = std::max(inf_norm(Q_.cwiseQuotient(M_)), inf_norm(gamma_));
  a_.setZero();
  lambda_.setZero();
  for (int a = 0; a < n_active_; ++a) pi_[active_[a]] = 0.0;
  r_ = gamma_;  // constraint residual at q'' = 0
  for (int it = 1;; ++it) {
    mu_ = lambda_ + alpha_acc_ * r_;
    w_.noalias() = Phi_q_.transpose() * mu_;
    for (int a = 0; a < n_active_; ++a) {
      const int j = active_[a];
      add_normal(j, pi_[j] + alpha_acc_ * normal(j, a_), w_);
    }
    w_ = Q_ - M_.cwiseProduct(a_) - w_;  // dynamic residual
    solve(w_, dq_);
    a_ += dq_;
    ++stats_.rhs_evals;
    r_.noalias() = Phi_q_ * a_;
    r_ += gamma_;
    lambda_ += alpha_acc_ * r_;
    double violation = inf_norm(r_);
    for (int a = 0; a < n_active_; ++a) {
      const double rc = normal(active_[a], a_);
      pi_[active_[a]] += alpha_acc_ * rc;
      violation = std::max(violation, std::abs(rc));
    }
    if (!a_.allFinite()) throw SolverError(fmt::format("alm-index3: non-finite accelerations at t = {:.9g} s", time() + h_));
    if (violation <= kAccelerationTol * a_ref) return;
    if (it == kMaxAccelerationIterations) {
      ++stats_.failures;
      throw SolverError(fmt::format(
          "alm-index3: accelerations at a contact change did not converge at t = {:.9g} s ({} iterations, violation {:.3g} m/s^2)",
          time() + h_, it, violation));
    }
  }
}

// First root in [0, 1] of the quadratic with g(0) = g0, g'(0) = dg0 (per unit of tau), g(1) = g1 < 0.
template <int NQ, int NC, typename Solver>
double TrapezoidalSimulator<NQ, NC, Solver>::impact_fraction(double g0, double dg0, double g1) {
  if (g0 <= 0.0) return 0.0;
  const double linear = g0 / (g0 - g1);
  const double c = g1 - g0 - dg0;
  if (std::abs(c) <= 1e-12 * (std::abs(g0) + std::abs(dg0) + std::abs(g1))) {
    return dg0 < 0.0 ? std::min(1.0, -g0 / dg0) : linear;
  }
  const double disc = dg0 * dg0 - 4.0 * c * g0;
  if (disc < 0.0) return linear;
  const double sq = std::sqrt(disc);
  double best = 2.0;
  for (const double r : {(-dg0 - sq) / (2.0 * c), (-dg0 + sq) / (2.0 * c)})
    if (r >= 0.0 && r <= 1.0) best = std::min(best, r);
  return best <= 1.0 ? best : linear;
}

// x = argmin 1/2 x^T M x - f^T x subject to Phi_q x = 0 (Phi_q_ at the current q), by
// augmented-Lagrangian iterations on T = M + kappa Phi_q^T Phi_q (factored by the caller):
// the constrained (mass-orthogonal) response to the generalized impulse f; redundant
// constraints are fine.
template <int NQ, int NC, typename Solver>
void TrapezoidalSimulator<NQ, NC, Solver>::constrained_solve(const Vec& f, Vec& x) {
  sigma_.setZero();
  for (int it = 0; it < kMaxProjectionIterations; ++it) {
    w_ = f;
    w_.noalias() -= Phi_q_.transpose() * sigma_;
    solve(w_, x);
    r_.noalias() = Phi_q_ * x;
    sigma_ += kappa_ * r_;
    if (inf_norm(r_) <= kProjectionTol * inf_norm(x)) return;
  }
}

// Newton's impact law at the projected positions: v+ = v0 + sum_a P_a Y_a, where v0 is the
// pre-impact velocity projected mass-orthogonally onto Phi_q v = 0 and Y_a the constrained
// response to a unit impulse along contact a's normal; the impulses P solve the complementarity
// problem w = n.v+ + e min(n.v0, 0) = D P + b >= 0, P >= 0, P w = 0, D_ab = n_a . Y_b.
template <int NQ, int NC, typename Solver>
void TrapezoidalSimulator<NQ, NC, Solver>::impact_velocities() {
  int k = 0;
  for (int j = 0; j < nct_; ++j)
    if (in_set_[j]) set_[k++] = j;
  cf_.Phi_q(q_, Phi_q_);
  augmented_mass(kappa_, solver_.matrix());
  factor();
  ++stats_.jacobian_evals;
  f_ = M_.cwiseProduct(v_);  // pre-impact velocity, projected onto Phi_q(q) v = 0 exactly
  constrained_solve(f_, v_);
  for (int a = 0; a < k; ++a) {
    f_.setZero();
    add_normal(set_[a], 1.0, f_);
    constrained_solve(f_, dq_);
    Y_.col(a) = dq_;
  }
  for (int a = 0; a < k; ++a) {
    const Contact& c = contacts_[set_[a]];
    for (int b = 0; b < k; ++b) {
      double d = 0.0;
      for (int i = 0; i < dim_; ++i) d += c.n[i] * Y_(c.off + i, b);
      lcp_D_(a, b) = d;
    }
  }
  for (int a = 0; a < k; ++a) {
    const Contact& c = contacts_[set_[a]];
    const double vn = normal(set_[a], v_);
    vn_[a] = vn;
    const double e = !closed_[set_[a]] && vn < -v_thr_ ? c.e : 0.0;
    lcp_b_[a] = vn + e * std::min(vn, 0.0);
    lcp_eq_[a] = 0;
  }
  lcp_.solve(lcp_D_, lcp_b_, lcp_eq_, k, lcp_x_);
  for (int a = 0; a < k; ++a) v_ += lcp_x_[a] * Y_.col(a);
  // Slow (plastic) impacts and closed contacts stay closed if they end at rest on the plane.
  for (int a = 0; a < k; ++a) {
    const int j = set_[a];
    const bool closing = closed_[j] || vn_[a] >= -v_thr_;
    closed_[j] = closing && (lcp_x_[a] > 0.0 || normal(j, v_) <= 1e-10);
  }
  if (!v_.allFinite()) throw SolverError(fmt::format("alm-index3: non-finite impact at t = {:.9g} s", time() + h_));
}

// Accelerations and multipliers consistent with the state and the closed contacts (rows
// n . q'' = 0), opening the most pulling contact until none pulls.
template <int NQ, int NC, typename Solver>
void TrapezoidalSimulator<NQ, NC, Solver>::contact_accelerations() {
  for (int pass = 0; pass <= nct_; ++pass) {
    set_active(closed_);
    accelerations();
    int worst = -1;
    for (int a = 0; a < n_active_; ++a) {
      const int j = active_[a];
      if (pi_[j] > pi_tol_ && (worst < 0 || pi_[j] > pi_[worst])) worst = j;
    }
    if (worst < 0) return;
    closed_[worst] = 0;
  }
  set_active(closed_);
}

}  // namespace
}  // namespace mbs::alm_index3
