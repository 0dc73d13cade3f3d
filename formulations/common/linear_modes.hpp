// Eigen-analysis of linearized multibody equations, shared by the formulations' linearizers.
//
// LinearModes: the eigenvalues of the second-order system in n coordinates y with m multipliers mu
//     M y'' + C y' + K y + G^T mu = 0,   G y = 0        (m = 0: no multipliers, an ODE; C optional)
// (the real pencil s B z = A z of its first-order form z = [y; y'; mu], A = [0 I 0; -K -C -G^T; G 0 0],
// B = diag(I, M, 0)), and the judgement of each eigenvalue as true (an eigenvalue of the constrained
// mechanism) or spurious, by one physical rule that does not depend on the formulation (ModeRule, rule()):
//   true  <=>  finite, and its mode, mapped to point displacements dq = R y (R = dq/dy; R = I in
//              natural coordinates), moves mass (|dq| not ~0 against |R| |y|) and satisfies the
//              linearized constraints (Phi_q dq ~ 0 against |dq|, rows of Phi_q normalized).
// Spurious therefore are: infinite eigenvalues (singular M: the multipliers of an index-3 pencil,
// or a massless coordinate with stiffness), undetermined ones (see below), multiplier-only modes,
// modes that move no mass, and modes that violate the constraints (the penalty's and augmented
// Lagrangian's constraint modes, Jordan chains at infinity that QZ returned as finite).
// LinearModes also takes a general pencil s B z = A z written by the caller (another first-order
// form), with R mapping the whole z to point displacements; the same rule applies (always by QZ).
//
// Method: on the constraint manifold when the pencil allows, QZ otherwise.
// - Manifold path (path() kSymmetric or kCompanion). After deflating absent directions (below),
//   y = T u with T an orthonormal basis of the null space of G (Householder QR of G^T, rows at unit
//   norm), which leaves p = n - m coordinates and no multiplier:
//       M_t u'' + C_t u' + K_t u = 0,   M_t = T^T M T, C_t = T^T C T, K_t = T^T K T.
//   It applies when every row of G is independent (QR pivot > 1e-10) and M_t is positive definite
//   (Cholesky M_t = L L^T, pivots above ModeRule::absent): then det(A - sB) = +-det(G N)^2
//   det(s^2 M_t + s C_t + K_t) (N the complement of T), so the pencil is regular with 2 p finite
//   eigenvalues, the reduced ones, and exactly 3 m infinite, an index-3 block per multiplier:
//   reported as such, spurious, without computing them. With w = L^T u, M_t becomes I:
//   - undamped (C absent or zero) and K_t symmetric (to 1e-12), the conservative case of every
//     natural-coordinate formulation but the penalty: the symmetric eigenproblem of
//     S = L^-1 K_t L^-T (tridiagonalization and implicit QL, real orthonormal eigenvectors x);
//     s = +-i sqrt(lambda) (+-sqrt(-lambda) for lambda < 0, an unstable equilibrium), exactly on
//     the axes, and the mode y = T L^-T x is real;
//   - otherwise (damping, or an unsymmetric K_t): the companion matrix [0 I; -S_K -S_C] in scaled
//     time (below), a standard eigenproblem (Hessenberg QR, no second matrix as in QZ); modes by
//     inverse iteration as for QZ but on the p x p quadratic s^2 I + s S_C + S_K (the companion's
//     eigenvector is [w; s w]), y = T L^-T w.
//   Both are backward stable on S, whose entries carry a penalty's alpha/m as the pencil does:
//   the rounding floor ~eps alpha/m of the penalty-type formulations' true eigenvalues is QZ's.
//   Why not QZ throughout: QZ reduces two matrices of size 2 n + m where this reduces one of size
//   p (or 2 p), and allocates (below); times in docs/formulations.md, Status.
// - QZ path (path() kQZ): a dependent row of G, an M_t that is not positive definite (a massless
//   coordinate with stiffness), or a general pencil: QZ of the scaled pencil s B z = A z
//   (Eigen::GeneralizedEigenSolver) and modes by inverse iteration, as below.
// Either way each eigenvalue is judged by the same rule, on its mode.
//
// Numerics.
// - Absent directions. A direction v of y with M v = C v = K v = 0 and G v = 0 (the azimuth phi of a
//   rod hanging along gravity: it moves nothing, so it has neither mass nor stiffness) makes the
//   pencil singular, det(A - sB) = 0 for every s, and QZ on a singular pencil may return anything,
//   the regular part's eigenvalues included (it lost the double pendulum's in joint angles). Such
//   directions are found first (when M is singular: LDLT pivots <= 1e-13 of the largest; then the
//   right singular vectors of [M; K; C; G], each scaled to unit norm, with singular values <= 1e-13
//   of the largest, ModeRule::absent) and deflated: the pencil is built on their orthogonal
//   complement. Each absent
//   direction is reported as two undetermined eigenvalues (finite = false, s = NaN): that is what
//   the spec calls phi's "double infinite eigenvalue", but 0/0 is the honest value.
// - The pencil is scaled before QZ: time by w = sqrt(|K|_F / |M|_F) (s = w s^), M and K to unit
//   norm, each row of G to unit norm. Scaled, the physical eigenvalues are O(1) whatever the units.
// - Infinite: |beta| <= ModeRule::infinite |alpha| on the scaled pencil, i.e. |s| > 1e3 w. On the
//   structured pencil above, Eigen's QZ deflates B's exact zero rows and returns beta = 0 exactly.
//   On a pencil whose B is singular only to rounding or to its own accuracy delta (a general
//   pencil, see below), the index-3 Jordan blocks at infinity (size 3) come back as FINITE
//   eigenvalues with |beta/alpha| ~ delta^(1/3): ~7e-5 for delta = 1e-13, ~7e-4 for 1e-10 (the
//   classic star of three). The threshold 1e-3 catches them up to delta ~ 1e-10 and, for positive
//   definite M, stays above any true eigenvalue unless mass ratios exceed ~1e6 (|s|^2 <= |K| / m_min).
//   Those that slip through are still judged by their modes: a perturbed Jordan chain's mode is
//   almost all multiplier (|dq| ~ delta^(2/3) |z|: "moves no mass"), and what displacement it has
//   lies along M^-1 G^T, violating the constraints at O(1) (tests/test_linearization.cpp checks all
//   three lines). The manifold path applies the same bound to its |s| (its Cholesky has already
//   excluded infinite eigenvalues other than the multipliers', so the bound can only catch a stiff
//   finite mode, as it does for QZ).
// - Undetermined after deflation (a singular pencil of another kind, e.g. dependent rows in G): a
//   real eigenvalue with |alpha| <= 1e-14 |A|_F and |beta| <= 1e-14 |B|_F (a complex pair's alpha
//   and beta are products of Schur entries, tiny for the penalty's true modes, whose mass is 1e-8 of
//   the pencil's; 0/0 is real). Modes then come from null spaces (below).
// - Modes (for the rule): Eigen 3.4's upstream GeneralizedEigenSolver has no eigenvectors, and the
//   back-substitution Debian's copy adds divides by zero for repeated eigenvalues (the 3D pendulum's
//   pairs are double), so each finite eigenvalue's mode is computed by two steps of inverse
//   iteration on the complex matrix A - (s^ + delta) B, delta = 1e-10 (1 + |s^|) (1 + i) / sqrt 2, from a
//   fixed start vector. For a multiple eigenvalue that gives a vector of its eigenspace, which is
//   all the rule needs (every vector of a true eigenspace moves mass and satisfies the
//   constraints). Complex pairs: one mode, its conjugate for the partner. If the pencil is
//   singular (or inverse iteration fails), the mode is the vector of the numerical null space of
//   A - s^ B (singular values <= 1e-8 of the largest) that moves the most mass.
// - Allocation: the manifold path allocates nothing after the first call (Eigen's
//   Tridiagonalization, SelfAdjointEigenSolver::computeFromTridiagonal, EigenSolver, HouseholderQR
//   and LLT on preallocated objects, the Householder products with our own workspace:
//   SelfAdjointEigenSolver::compute would allocate one per call). QZ does: GeneralizedEigenSolver
//   constructed with its size still allocates in compute(): RealQZ::hessenbergTriangular builds a
//   HouseholderQR and product temporaries, every QZ sweep (RealQZ::step) evaluates outer-product
//   temporaries whatever the matrix type (a compile-time maximum size removes the former, not the
//   latter; tried, it was not worth its compile cost and time was the same), and alphas()/betas()
//   return copies (counts: docs/formulations.md, Status).
//
// NaturalEquilibrium: the static equilibrium in natural coordinates, for the natural-coordinate
// linearizers: Phi_q(q0), a maximal set of independent constraint rows (pivoted QR of Phi_q^T, so
// redundant constraints are fine; pencils with multipliers use only these rows), the multipliers
// lambda0 of Phi_q^T lambda0 = Q in least squares on those rows (zero on the dependent ones: any
// solution gives the same stiffness on the constraint manifold), the check that q0 is an
// equilibrium, and the geometric stiffness K_geo = sum_k lambda0_k d2Phi_k/dq2.
#pragma once

#include <Eigen/Dense>
#include <memory>
#include <string>
#include <vector>

#include "core/linearization.hpp"
#include "core/model.hpp"
#include "core/natural_coordinates.hpp"

namespace mbs {

// Thresholds of the discrimination rule, all dimensionless (see the file comment).
struct ModeRule {
  // A direction v with |M v|, |C v|, |K v|, |G v| (each matrix at unit norm) <= absent is deflated.
  // Truly absent directions are zero to rounding (~1e-16); a penalty's M + alpha G^T G puts genuine
  // small masses at (m_min / alpha) ~ 1e-11 of its norm (a thin bar's axial inertia at alpha/m = 1e8),
  // which must stay. 1e-13 sits between, with margin of ~1e3 and ~1e2.
  double absent = 1e-13;
  double infinite = 1e-3;     // |beta| <= infinite |alpha| (scaled pencil): infinite, |s| > 1e3 w
  // A real eigenvalue with |alpha| <= singular |A| and |beta| <= singular |B| (scaled pencil) is 0/0:
  // rounding level, below a penalty's small genuine masses (a zero-frequency mode of a mass at
  // ~1e-11 of the pencil has alpha = 0 and beta ~ 1e-11).
  double singular = 1e-14;
  double massless = 1e-8;     // |R y| <= massless |R|_F |y|, or |y|(1 + |s^|) <= massless |z|: no mass moves
  // |Phi_q dq| (rows normalized) <= constraint |dq|: the mode keeps the rods. True modes of exact
  // formulations sit at rounding (~1e-15); of penalty-type ones at O((g/l) / (alpha/m)) <= 1e-8 for
  // alpha/m >= 1e8 (the mode stretches the rods by its multiplier over the penalty); constraint
  // modes and Jordan chains at infinity at O(1). 1e-6 leaves two decades either side.
  double constraint = 1e-6;
  // Take the manifold path where it applies (see the file comment); false: QZ always, the reference
  // the tests compare it with.
  bool manifold = true;
  // Small systems on Eigen types of a fixed maximum size (see LinearModes::kSmall); false: the
  // generic dynamic-size path always, the reference the tests compare it with.
  bool small = true;
};

class LinearModes {
 public:
  // Second-order system: n coordinates y, m multipliers (0: none), nq natural coordinates and nc
  // constraint rows for the check (R: nq x n, Phi_q: nc x nq; nc = 0 skips it). damped: whether C
  // is used.
  LinearModes(int n, int m, int nq, int nc, bool damped, ModeRule rule = {});
  // General pencil s B z = A z of size N, written by the caller into A and B (for first-order
  // forms other than the one above); R (nq x N) then maps the whole z to point displacements. No
  // deflation of absent directions (a singular pencil is met by the null-space path) and no
  // multiplier-only test (a mode without displacement fails "moves mass").
  struct GeneralPencil {};
  LinearModes(GeneralPencil, int N, int nq, int nc, ModeRule rule = {});
  ~LinearModes();
  LinearModes(const LinearModes&) = delete;
  LinearModes& operator=(const LinearModes&) = delete;

  // Inputs, sized here (zero); the caller writes them before compute(). M, C, K symmetric, M != 0.
  Eigen::MatrixXd M, C, K;  // n x n (C only when damped)
  Eigen::MatrixXd G;        // m x n, independent rows (a dependent row makes the pencil singular)
  Eigen::MatrixXd A, B;     // N x N, general pencil only
  Eigen::MatrixXd R;        // nq x n (nq x N for a general pencil): point displacements of z's entries
  Eigen::MatrixXd Phi_q;    // nc x nq: the constraint Jacobian at the equilibrium

  int n() const { return n_; }
  int m() const { return m_; }
  int size() const { return size_; }  // number of eigenvalues: 2 n + m, or N
  bool damped() const { return damped_; }
  const ModeRule& thresholds() const { return rule_; }

  // Sizes `out` to size() eigenvalues and reserves their `why` strings (setup, allocates).
  void prepare(std::vector<Eigenvalue>& out) const;
  // Deflation of absent directions, QZ of the scaled pencil, modes and judgement; writes every
  // eigenvalue into `out` (prepared), sorted: finite by |s| (then by imaginary part), then infinite,
  // then undetermined. Infinite eigenvalues get s = inf, undetermined ones s = NaN. Throws
  // SolverError if QZ does not converge. Allocates inside Eigen's QZ (see the file comment), on the
  // first call if absent directions change the pencil's size, and on a singular pencil's null-space
  // path.
  void compute(std::vector<Eigenvalue>& out);
  // The rule in one sentence, with the thresholds.
  std::string rule() const;

  // Diagnostics of the last compute(): the time scale w (rad/s) and the number of absent directions.
  double reference_frequency() const { return w_; }
  int absent_directions() const { return absent_; }
  // Which method the last compute() used.
  enum class Path { kSymmetric, kCompanion, kQZ };
  Path path() const { return static_cast<Path>(path_); }

  struct Engine;  // QZ and mode workspace for one pencil size
  // Systems with n, m <= kSmall and nq, nc <= 3 kSmall take the small-size workspace (see the file
  // comment).
  static constexpr int kSmall = 6;
  template <int N>
  struct Work;  // deflation and manifold-path workspace: N = Eigen::Dynamic, or kSmall

 private:
  struct Raw {  // per eigenvalue, before sorting
    std::complex<double> s;
    int kind;  // 0 finite, 1 infinite, 2 undetermined
    bool is_true;
    double metric_a, metric_b;  // figures for `why`
    int reason;
  };
  template <int N>
  void size_work(Work<N>& w, int nr);
  template <int N>
  int find_absent_directions(Work<N>& w, const typename Work<N>::Mat& M, const typename Work<N>::Mat& K,
                             const typename Work<N>::Mat* C, const typename Work<N>::Mat& G);
  template <int N>
  bool reduce(Work<N>& w, const typename Work<N>::Mat& M, const typename Work<N>::Mat& K,
              const typename Work<N>::Mat* C, const typename Work<N>::Mat& G, const typename Work<N>::MatQN& R,
              const typename Work<N>::MatQQ& Phi);
  bool zero_pair(int i, double tol_a, double tol_b) const;
  void classify(int i, bool singular, const Eigen::MatrixXd& Ru, double r_norm, double tol_a, double tol_b);
  // The manifold path (see the file comment): false, leaving raw_ untouched, when it does not apply.
  template <int N>
  bool manifold_modes(Work<N>& w, const typename Work<N>::MatQQ& Phi);
  template <int N>
  bool quadratic_mode(Work<N>& w, std::complex<double> s, bool damped);
  // Mass and constraint tests of a mode y = w.yr + i w.yi (coordinates of Ru) for raw_[i].
  template <int N>
  void judge(Work<N>& w, Raw& r, const typename Work<N>::MatQN& Ru, double r_norm, const typename Work<N>::MatQQ& Phi);

  int n_, m_, nq_, nc_, size_;
  bool damped_, general_;
  ModeRule rule_;
  double w_ = 1.0;
  int absent_ = 0;
  // The generic workspace (also a small system's when its manifold path declines: made then) and
  // the small-size one.
  std::unique_ptr<Work<Eigen::Dynamic>> dyn_;
  std::unique_ptr<Work<kSmall>> small_;
  int path_ = 0;
  std::vector<Raw> raw_;
  std::vector<int> order_;
  std::vector<double> magnitude_;
  // Per output slot: the reason and figure its `why` text was last made from (reason -1: none yet).
  struct WhyCache {
    WhyCache() { text.reserve(160); }
    int reason = -1;
    double figure = 0.0;
    std::string text;
  };
  std::vector<WhyCache> why_cache_;
  Eigen::VectorXd phi_row_norm_;
};

// Static equilibrium of a model in natural coordinates at its initial configuration q0.
// Why a natural-coordinate linearizer cannot take this model (empty when it can): shared by the
// formulations that linearize in natural coordinates.
inline std::string natural_linearization_unsupported_reason(const Model& model) {
  if (model.nq() == 0) return "the model has no bodies";
  if (model.has_role(ElementRole::kContact)) return "unilateral contacts are not linearized";
  return "";
}

class NaturalEquilibrium {
 public:
  // Relative residual |Q - Phi_q^T lambda0| / |Q| above which q0 is not an equilibrium. A
  // configuration off the equilibrium by an angle delta leaves a residual ~ delta |Q|; 1e-8 admits
  // configurations given to ~8 digits, whose eigenvalues then differ from the equilibrium's by
  // O(1e-8) relative at most (O(delta^2) for a pendulum), below what a penalty formulation resolves.
  static constexpr double kEquilibriumTol = 1e-8;
  // Rank decision of Phi_q^T (pivots below 1e-10 of the largest are zero), as ida-index3's
  // consistent initial conditions do: a duplicated rod is exactly dependent.
  static constexpr double kRankTol = 1e-10;

  explicit NaturalEquilibrium(const Model& model);

  // Evaluates Phi_q, its independent rows, lambda0, the residual and K_geo at q0; throws
  // SolverError "<who>: ... not a static equilibrium ..." when the residual exceeds the tolerance
  // (or if the rank differs from the setup's, which a fixed configuration cannot do).
  // Allocates nothing.
  void evaluate(const char* who);

  const NaturalCoordinates& nat() const { return nat_; }
  int nq() const { return nat_.nq(); }
  int nc() const { return nat_.nc(); }
  const Eigen::VectorXd& q0() const { return q0_; }
  const Eigen::MatrixXd& Phi_q() const { return Phi_q_; }
  const Eigen::VectorXd& lambda0() const { return lambda0_; }
  const Eigen::MatrixXd& K_geo() const { return K_geo_; }
  double residual() const { return residual_; }  // relative, of the last evaluate()
  // Rank of Phi_q at q0 and the indices of that many independent rows (increasing); the
  // constructor evaluates them once, so they are known at setup.
  int rank() const { return rank_; }
  const std::vector<int>& independent_rows() const { return rows_; }

 private:
  void factor();
  NaturalCoordinates nat_;
  Eigen::VectorXd q0_, lambda0_, r_;
  Eigen::MatrixXd Phi_q_, Phi_qT_, K_geo_;
  Eigen::ColPivHouseholderQR<Eigen::MatrixXd> qr_;  // of Phi_q^T: rank and independent rows
  Eigen::MatrixXd Gr_, S_;                           // independent rows, G_r G_r^T
  Eigen::LLT<Eigen::MatrixXd> llt_;
  Eigen::VectorXd rhs_, lambda_r_;
  double residual_ = 0.0;
  int rank_ = 0, setup_rank_ = 0;
  std::vector<int> rows_;
};

}  // namespace mbs
