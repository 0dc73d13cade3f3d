// Frictionless point-plane contacts as events, for the explicit Runge-Kutta formulations whose
// state moves smoothly between impacts: minimal (joint coordinates) and projection / unprojected
// (natural coordinates, index-1 equations). The formulation's ODE supplies the mechanics (the
// interface below); this file holds the event logic they share.
//
// Between impacts the motion is smooth: the formulation's ODE, plus the closed (persistent)
// contacts as bilateral constraints at acceleration level. After every step the gap
// g_j = n_j . r_p - d_j of every open contact is checked:
//
// 1. Event location. A step that ends with some open gap < 0 contains an impact. Its time is the
//    first zero of phi(tau) = min_j g_j(y(t0 + tau)) over those contacts, found by the Illinois
//    variant of regula falsi on [0, h], where y(t0 + tau) is a fresh step of the same Runge-Kutta
//    method of size tau from the step's start (re-integration, no interpolant): every trial state
//    has the method's own local accuracy, and the bracket is closed to 1e-12 h (or to a trial state
//    within 1e-13 m outside the plane and approaching it). The impact is applied to the last trial
//    state outside the plane (gap >= 0), so impact times are as accurate as the integrator, not h,
//    and reported states never penetrate by more than round-off. (Only step ends are checked: a
//    contact that dips in and out of its plane within one step is missed; the error control keeps
//    steps far shorter than such an excursion on the problems here.)
// 2. Impact law (Newton, frictionless): with G the contact rows (the normals' rows in the ODE's
//    velocity coordinates) and W the inverse mass the velocities see (Mbar^-1 = (R^T M R)^-1 in
//    joint coordinates; M^-1 - M^-1 Phi_q^T (Phi_q M^-1 Phi_q^T)^-1 Phi_q M^-1 in natural
//    coordinates, so that the joints hold through the impact), the velocity jumps by W G^T P; for
//    one contact P = -(1 + e) (G v-) / (G W G^T), for several contacts at the plane at once the
//    impulses solve the small complementarity problem of contact_lcp.hpp (Newton's law for the
//    ones that get an impulse, no pull, no penetration).
// 3. Accumulation of impacts (Zeno) and resting contact. An impact whose pre-impact normal speed
//    is below kPersistentSpeed (1 mm/s) is plastic and closes the contact: it becomes a bilateral
//    constraint at acceleration level, with its force f computed from the dynamics, until f would
//    pull (f < 0, up to round-off): then it opens again (checked after every step; at that instant
//    f crosses zero, so the motion stays smooth to first order). A bouncing sequence with
//    restitution e therefore stops after about log(v0 / 1 mm/s) / log(1 / e) impacts instead of
//    accumulating infinitely many; the kinetic energy of the skipped bounces is below
//    m (1 mm/s)^2 / 2 per contact. A contact closed this way drifts off its plane only by the
//    integration error of the acceleration-level constraint (no projection onto it).
// 4. Continuation (fixed_step_with_events, adaptive_step_with_events). The step that contains an
//    impact reports the post-impact state. A fixed-step method then finishes the remainder of its
//    step from the impact state (as many sub-steps as impacts in it), so the grid t = i h is kept;
//    the embedded pairs end their step at the impact and re-initialize the step-size controller
//    (first step chosen afresh), since the derivative jumps there. They also re-initialize after a
//    contact opens or closes (the right-hand side changes).
//
// Energy: between impacts the integrator's own drift; an impact removes exactly the Newton-law
// share, (1 - e^2) times the kinetic energy of the normal (Delassus) component for one contact,
// evaluated at the located impact state, so energies after impacts are as accurate as the
// integration. Penetration: zero up to the location tolerance (about 1e-13 m) and, for closed
// contacts, the constraint drift.
//
// The ODE's contact interface (all storage sized at its construction; nothing allocates):
//   ContactSet& contact_set();                                         // contact_lcp.hpp: which are closed
//   void contact_state(const State& y, VectorXd& gap, VectorXd& vn);   // every contact's gap (m), normal velocity (m/s)
//   void closed_forces(const State& y, VectorXd& force);               // closed contacts' forces (N, > 0 pushing)
//   void apply_impulses(State& y, const std::vector<int>& idx, const std::vector<char>& eq,
//                       const VectorXd& e, int k, VectorXd& impulse, VectorXd& vn_after);  // item 2
#pragma once

#include <fmt/format.h>

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <vector>

#include "common/contact_lcp.hpp"
#include "common/explicit_rk.hpp"
#include "core/formulation.hpp"

namespace mbs {

// Pre-impact normal speed (m/s) below which an impact is plastic and the contact closes.
inline constexpr double kPersistentSpeed = 1e-3;
// Open contacts within this gap (m) of the plane at an impact take part in its complementarity
// problem (simultaneous impacts).
inline constexpr double kTouchingGap = 1e-9;
// Impacts located within one step before the simulator gives up (a guard against loops).
inline constexpr int kMaxEventsPerStep = 1000;

template <class Ode>
class ContactEvents {
 public:
  using State = typename Ode::State;

  ContactEvents(Ode& ode, const Model& model)
      : ode_(ode), cs_(ode.contact_set()), nct_(cs_.size()), y0_(ode.size()), yl_(ode.size()), yr_(ode.size()), ytry_(ode.size()),
        g_(nct_), vn_(nct_), g0_(nct_), vn0_(nct_), impulse_(nct_), vn_after_(nct_), e_(nct_), force_(nct_),
        cand_(nct_, 0), idx_(nct_, 0), eq_(nct_, 0), closing_(nct_, 0) {
    double m = 0.0;
    for (const PointMass& p : model.points) m = std::max(m, p.mass);
    force_tol_ = 1e-9 * m * std::max(1.0, model.gravity.norm());
  }

  bool active() const { return nct_ > 0; }
  // At the start of a run: every contact open.
  void reset() { cs_.open_all(); }
  // Whether the last end_step() changed the state or the closed set (the embedded pairs restart).
  bool changed() const { return changed_; }

  // Before each (sub)step: its starting state.
  void begin_step(const State& y) { y0_ = y; }

  // After the step of size h from (t0, y0) to y. Returns the part of the step kept: h when there
  // was no impact in it; otherwise tau in [0, h) with y replaced by the post-impact state at
  // t0 + tau (tau = 0 only when a contact was already at the plane at t0: the caller repeats the
  // step from the new state). step_from(t0, tau, y0, out) integrates one step of size tau.
  template <class StepFrom>
  double end_step(double t0, double h, State& y, StepFrom&& step_from) {
    changed_ = false;
    ode_.contact_state(y, g_, vn_);
    bool any = false;
    for (int j = 0; j < nct_; ++j) {
      cand_[j] = !cs_.closed(j) && g_[j] < 0.0;
      any = any || cand_[j];
    }
    if (!any) {
      release(y);
      return h;
    }
    ode_.contact_state(y0_, g0_, vn0_);
    bool at_start = false;
    for (int j = 0; j < nct_; ++j) at_start = at_start || (cand_[j] && g0_[j] <= 0.0);
    if (at_start) {  // already at (or, by round-off, inside) the plane at t0
      y = y0_;
      impact(y, true);
      return 0.0;
    }
    // Illinois on phi(tau) = min over the candidates of the gap after a step of size tau.
    double tl = 0.0, tr = h, fl = min_candidate_gap(g0_), fr = min_candidate_gap(g_);
    bool have_left = false;
    yr_ = y;
    const double tol_t = 1e-12 * h;
    int side = 0;
    for (int it = 0; it < 200 && tr - tl > tol_t; ++it) {
      double tm = (fl * tr - fr * tl) / (fl - fr);
      if (!(tm > tl && tm < tr) || it % 8 == 7) tm = 0.5 * (tl + tr);  // safeguard: bisect
      step_from(t0, tm, y0_, ytry_);
      ode_.contact_state(ytry_, g_, vn_);
      const double fm = min_candidate_gap(g_);
      if (fm < 0.0) {
        tr = tm, fr = fm, yr_ = ytry_;
        if (side == -1) fl *= 0.5;
        side = -1;
      } else {
        tl = tm, fl = fm, yl_ = ytry_, have_left = true;
        if (side == 1) fr *= 0.5;
        side = 1;
        if (fm <= 1e-13 && vn_[jmin_] < 0.0) break;  // at the plane from outside, approaching it
      }
    }
    const double tau = have_left ? tl : tr;
    y = have_left ? yl_ : yr_;
    impact(y, false);
    return tau;
  }

 private:
  // The smallest gap among the candidates (its contact in jmin_).
  double min_candidate_gap(const Eigen::VectorXd& g) {
    jmin_ = -1;
    for (int j = 0; j < nct_; ++j)
      if (cand_[j] && (jmin_ < 0 || g[j] < g[jmin_])) jmin_ = j;
    return g[jmin_];
  }

  // The impact at state y: every contact at the plane (closed, or open within kTouchingGap) takes
  // part. Approaching faster than kPersistentSpeed: Newton's law with its e; slower: plastic, and
  // the contact closes if it ends at rest on the plane. A contact found at the plane at a step's
  // start (at_start) that is not approaching fast is closed by an equality row (its small normal
  // velocity is zeroed), so that the repeated step cannot find it inside again.
  void impact(State& y, bool at_start) {
    changed_ = true;
    ode_.contact_state(y, g_, vn_);
    int k = 0;
    for (int j = 0; j < nct_; ++j) {
      if (!(cs_.closed(j) || g_[j] <= kTouchingGap)) continue;
      idx_[k] = j;
      eq_[k] = 0;
      e_[k] = 0.0;
      closing_[k] = cs_.closed(j);
      if (!cs_.closed(j) && vn_[j] < -kPersistentSpeed) {
        e_[k] = cs_.restitution(j);
      } else if (!cs_.closed(j) && vn_[j] <= kPersistentSpeed) {
        closing_[k] = 1;
        if (at_start && cand_[j]) eq_[k] = 1;
      } else if (at_start && cand_[j] && !cs_.closed(j)) {  // separating, yet inside at the end
        closing_[k] = 1;
        eq_[k] = 1;
      }
      ++k;
    }
    ode_.apply_impulses(y, idx_, eq_, e_, k, impulse_, vn_after_);
    for (int a = 0; a < k; ++a)
      cs_.set_closed(idx_[a], closing_[a] && (eq_[a] || impulse_[a] > 0.0 || vn_after_[a] <= 1e-10));
    release(y);
  }

  // Opens closed contacts whose force would pull (one at a time, the most pulling first).
  void release(const State& y) {
    for (int pass = 0; pass < nct_ && cs_.num_closed() > 0; ++pass) {
      ode_.closed_forces(y, force_);
      int worst = -1;
      for (int j = 0; j < nct_; ++j)
        if (cs_.closed(j) && force_[j] < -force_tol_ && (worst < 0 || force_[j] < force_[worst])) worst = j;
      if (worst < 0) return;
      cs_.set_closed(worst, false);
      changed_ = true;
    }
  }

  Ode& ode_;
  ContactSet& cs_;
  int nct_;
  State y0_, yl_, yr_, ytry_;
  Eigen::VectorXd g_, vn_, g0_, vn0_, impulse_, vn_after_, e_, force_;
  std::vector<char> cand_;
  std::vector<int> idx_;
  std::vector<char> eq_, closing_;
  double force_tol_ = 0.0;
  int jmin_ = 0;
  bool changed_ = false;
};

// A fixed step of size h from (t, y) with contacts (item 4): after each impact the step is finished
// from the impact state. step(t0, dt, y) advances y by one step of the method (with whatever the
// formulation does after a step, e.g. a projection). who: the formulation, for the error.
template <class Ode, class Step>
void fixed_step_with_events(ContactEvents<Ode>& events, const char* who, double t, double h, typename Ode::State& y,
                            Step&& step) {
  using State = typename Ode::State;
  double rest = h;
  for (int n = 0;; ++n) {
    if (n == kMaxEventsPerStep)
      throw SolverError(fmt::format("{}: more than {} impacts within the step at t = {:.9g} s", who, n, t));
    events.begin_step(y);
    step(t, rest, y);
    const double tau = events.end_step(t, rest, y, [&step](double t0, double dt, const State& y0, State& out) {
      out = y0;
      step(t0, dt, out);
    });
    if (tau >= rest) return;
    t += tau;
    rest -= tau;
  }
}

// An adaptive step with contacts (item 4): a step that contains an impact ends there, and the
// controller restarts. step() advances (t, y) by one accepted step of the embedded pair (and
// whatever the formulation does after a step); step_from(t0, dt, y0, out) takes one step of its
// propagating method from y0 (likewise); restart() re-initializes its controller at (t, y).
template <class Ode, class Step, class StepFrom, class Restart>
void adaptive_step_with_events(ContactEvents<Ode>& events, const char* who, double& t, typename Ode::State& y,
                               Step&& step, StepFrom&& step_from, Restart&& restart) {
  for (int n = 0;; ++n) {
    if (n == kMaxEventsPerStep) throw SolverError(fmt::format("{}: more than {} impacts at t = {:.9g} s", who, n, t));
    const double t0 = t;
    events.begin_step(y);
    step();
    const double h = t - t0;
    const double tau = events.end_step(t0, h, y, step_from);
    if (tau < h) t = t0 + tau;
    if (events.changed()) restart();
    if (t > t0) return;
  }
}

}  // namespace mbs
