// The index-3 augmented Lagrangian's penalty and its Newton rules (ALI3-P: Bayo & Ledesma 1996;
// Cuadrado, Cugat & Dopico 2000), shared by its natural-coordinate form (alm_index3/trapezoidal.hpp)
// and its joint-coordinate form (joint_alm_index3/): the same alpha for a step size, the same
// stopping test and the same raise of alpha at singular positions. The argument for each constant
// was measured on the natural form (docs/formulations.md, Method notes).
#pragma once

#include <algorithm>

#include "common/modified_newton.hpp"

namespace mbs::augmented_lagrangian {

// Penalty factor per unit of the largest point mass (1/s^2), or of the softest constraint mode's
// mass when that is much larger (common/sparse_natural.hpp, penalty_mass_scale). With h = 1e-3 it gives
// h^2 alpha / (4 m) = 250, so each iteration cuts the multiplier error by about 250 and Newton
// converges in 2-3 iterations. Much larger values only raise the round-off floor alpha * eps.
inline constexpr double kAlphaPerMass = 1e9;
// Small steps would weaken the penalty relative to the inertia (h^2 alpha / 4m -> 0) and slow the
// multiplier iteration; below h ~ 6e-4 s alpha is raised so that h^2 alpha / (4 m) stays at least this.
inline constexpr double kMinPenaltyRatio = 100.0;
// Newton converges when |dq|_inf <= kNewtonTol * L (L the longest rod). The residual is a poor
// test: it carries alpha Phi, whose round-off floor is of order alpha eps L (~1e-7 N at alpha = 1e9,
// and prototypes never met residual tolerances below ~1e-6 m g). The correction dq, solved with a
// tangent that carries the same alpha, has a floor of about eps L whatever alpha is. At 1e-10 m the
// converged q is ~1e-12 m off the constraints (the next correction would be ~1/(h^2 alpha / 4m) of
// the last), and Newton needs few iterations a step; a tighter tolerance only adds iterations
// (docs/formulations.md, Method notes).
// |Phi|_inf <= kNewtonTol * L is required as well: it always holds with the first test, except near
// a singular position (below).
inline constexpr double kNewtonTol = 1e-10;
// Singular positions (the N-four-bar with every crank horizontal): Phi_q loses rank, and near there
// the multiplier update lambda += alpha Phi corrects the constraints in the directions Phi_q is about
// to lose only at the rate 1 / (1 + h^2 alpha s / 4) per iteration, s -> 0 the vanishing eigenvalues
// of Phi_q M^-1 Phi_q^T. The corrections dq then shrink linearly, by a ratio close to 1 (hundreds
// of iterations to reach kNewtonTol), or are tiny while Phi is not (they move q along directions in
// which Phi changes only to second order). Stopping there on |dq| alone left violations in those
// directions that grew over the next steps and came back as energy jumps at the crossings, and B0's
// error stopped converging with h. So, from the second iteration on, when |dq| fell in the last
// iteration but by less than kStallRatio, or is below the tolerance while Phi is not, alpha is
// raised by kPenaltyBoost (up to kMaxPenaltyBoost times the step's alpha: the usual
// augmented-Lagrangian rule of raising the penalty when the constraints converge slowly), which
// speeds the multiplier iteration up in the vanishing directions. At the largest alpha a stalled
// iteration is accepted once |Phi|_inf <= kNewtonTol L (|dq| then sits on the round-off floor of
// the large alpha). The step's own alpha is restored for the projections (newton()) and the next
// step. Away from singular positions (every step of the five small problems) Newton converges
// quadratically and neither rule ever acts. With these, B0's error on the N-four-bar falls like
// h^2. The cap matters: much higher, the multipliers of the vanishing directions, carried from step
// to step, grow with alpha and cost energy at the crossings; even at this cap small steps can still
// end in a Newton failure or an energy loss at a crossing (docs/formulations.md, Method notes).
inline constexpr double kStallRatio = 0.5;
inline constexpr double kPenaltyBoost = 10.0;
inline constexpr double kMaxPenaltyBoost = 1e4;
// alpha for a step: m_alpha (kg, the mass scale) per kAlphaPerMass, raised for small steps so that
// h^2 alpha / (4 m) stays at least kMinPenaltyRatio. h24 = h^2 / 4.
inline double step_penalty(double m_alpha, double h24) { return m_alpha * std::max(kAlphaPerMass, kMinPenaltyRatio / h24); }

// The stopping test of Newton iterate x: true once |dq| <= dq_tol and |Phi|_inf <= phi_tol; near a
// singular position (kStallRatio) alpha is raised from the step's alpha_step by kPenaltyBoost, up
// to kMaxPenaltyBoost times, and at the largest alpha a stalled iteration is accepted once Phi holds.
inline bool converged_or_raise(const NewtonIterate& x, double dq_tol, double phi_norm, double phi_tol, double alpha_step,
                               double& alpha) {
  if (x.dq <= dq_tol && phi_norm <= phi_tol) return true;
  const bool linear = x.dq >= kStallRatio * x.dq_prev && x.dq < x.dq_prev;  // not diverging either
  if (x.it >= 2 && (linear || x.dq <= dq_tol)) {
    if (alpha < kMaxPenaltyBoost * alpha_step) alpha *= kPenaltyBoost;
    else if (phi_norm <= phi_tol) return true;
  }
  return false;
}

}  // namespace mbs::augmented_lagrangian
