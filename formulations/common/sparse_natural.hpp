// Sparse linear algebra for the natural-coordinate formulations on large models.
//
// Every constraint row of NaturalCoordinates touches a few coordinate blocks (a planar revolute
// between two body points: at most 2 x 3 blocks, one component each; a rigidity row: one or two
// unit vectors), and M is diagonal. So Phi_q, M + alpha Phi_q^T Phi_q (+ the geometric stiffness),
// and G M^-1 G^T are sparse with a pattern that never changes. This file builds those patterns once
// at setup (from the rows' coordinate blocks, not from values, so an entry that happens to vanish
// at q0 is kept), maps every contribution to its slot in the compressed value array, and then only
// writes values: evaluation and assembly allocate nothing. Factorizations keep their symbolic
// analysis: the symmetric systems are permuted once by AMD (Eigen's AMDOrdering) and stored as
// their upper triangle in the permuted order, so Eigen's SimplicialLDLT factors them in place
// (factorize_preordered: no copy, no allocation below Eigen's stack limit of 128 kB per work
// vector, i.e. up to 16,000 unknowns); the unsymmetric ones (penalty's tangent) go to SuiteSparse
// KLU with its analysis done once, refactored in place on a kept pivot sequence (no allocation
// until that sequence goes stale and a pivoting factorization replaces it).
//
// Dense or sparse: kAuto takes the sparse path for models with at least kSparseMinCoordinates
// natural coordinates (kSparseLuMinCoordinates where the tangent is unsymmetric; see the constants
// for the measurement behind them) and no force elements (their Jacobians are dense nq x nq through
// Element::add_force_jacobians) or contacts.
#pragma once

#include <Eigen/Dense>
#include <Eigen/OrderingMethods>
#include <Eigen/SparseCholesky>
#include <Eigen/SparseCore>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/model.hpp"
#include "core/natural_coordinates.hpp"

namespace mbs {

enum class LinearAlgebra {
  kAuto,    // by model size (kSparseMinCoordinates) and content
  kDense,   // Eigen dense factorizations (the small problems' fast paths)
  kSparse,  // the fixed-pattern sparse matrices below
};

// Natural coordinates from which kAuto goes sparse: alm-index3, projection and ida-index3
// (symmetric LDLT, KLU). Chosen with benchmarks/bench_dense_sparse.cpp (docs/formulations.md,
// Method notes): only the fixed-size dense paths (nq <= 4) beat the sparse ones; dynamic-size dense
// loses from 6 coordinates on. The threshold sits above the five small problems (at most 12
// coordinates), which keep their dense paths and their results, and gives away little below it.
inline constexpr int kSparseMinCoordinates = 16;
// The same for penalty, whose tangent is unsymmetric, chosen when it was factored by Eigen's
// SparseLU (more overhead than the simplicial LDLT; KLU, which replaced it, has less, so the
// threshold is conservative; the same Method notes).
inline constexpr int kSparseLuMinCoordinates = 28;

// Whether `la` means the sparse path for this model (kAuto: at least min_coordinates and no force
// element or contact). kSparse on a model the sparse path cannot take throws SolverError.
bool sparse_path(LinearAlgebra la, const Model& model, int min_coordinates = kSparseMinCoordinates);
std::string sparse_unsupported_reason(const Model& model);

// Phi_q of a set of constraint rows (all of them, or the kept independent ones), row-major, with
// a fixed pattern; evaluate() writes its values at q.
class SparseJacobian {
 public:
  using Matrix = Eigen::SparseMatrix<double, Eigen::RowMajor, int>;

  SparseJacobian(const NaturalCoordinates& nat, std::vector<int> rows);  // rows of nat, ascending
  explicit SparseJacobian(const NaturalCoordinates& nat);                // every row

  void evaluate(const Eigen::Ref<const Eigen::VectorXd>& q);
  const Matrix& matrix() const { return J_; }
  Matrix& matrix() { return J_; }
  int rows() const { return static_cast<int>(J_.rows()); }
  int cols() const { return static_cast<int>(J_.cols()); }
  int nonzeros() const { return static_cast<int>(J_.nonZeros()); }
  const std::vector<int>& model_rows() const { return rows_; }

 private:
  const NaturalCoordinates* nat_;
  std::vector<int> rows_;
  Matrix J_;
  std::vector<int> slot_;  // value index of every contribution, in the order evaluate() makes them
};

// A square sparse matrix with a fixed pattern and its factorization: symmetric (upper triangle of
// the AMD-permuted matrix, LDLT) or unsymmetric (the whole matrix, KLU).
class SparseSystem {
 public:
  using Matrix = Eigen::SparseMatrix<double, Eigen::ColMajor, int>;

  // entries: (row, column) pairs of the pattern, in the caller's numbering; a symmetric system
  // takes either triangle (both are symmetrized). The diagonal is always in the pattern.
  SparseSystem(int n, const std::vector<std::pair<int, int>>& entries, bool symmetric);

  int size() const { return n_; }
  bool symmetric() const { return symmetric_; }
  // Value index of entry (i, j) (caller's numbering); -1 when a symmetric system stores it as (j, i)
  // or it is not in the pattern.
  int slot(int i, int j) const;
  double* values() { return A_.valuePtr(); }
  const double* values() const { return A_.valuePtr(); }
  int nonzeros() const { return static_cast<int>(A_.nonZeros()); }
  void set_zero();
  // y = A x (caller's numbering); no allocation.
  void multiply(const Eigen::VectorXd& x, Eigen::VectorXd& y);

  // Numerical factorization (symbolic analysis done at construction); false on failure (a zero
  // pivot). shift: factor A + shift I instead (symmetric only).
  bool factorize(double shift = 0.0);
  // x = A^-1 b with the last factorization (caller's numbering); x may not alias b.
  void solve(const Eigen::VectorXd& b, Eigen::VectorXd& x);
  double max_diagonal() const;  // largest |A_kk|
  // Symmetric, after an unshifted factorize(): min_k D_k / A_kk, the smallest share of a row's
  // diagonal left once the rows before it are eliminated (~0 for a row nearly dependent on them).
  double min_pivot_ratio() const;

 private:
  // SimplicialLDLT with the factorization on the caller's (already permuted, upper) matrix, without
  // the copy factorize() makes.
  class Ldlt : public Eigen::SimplicialLDLT<Matrix, Eigen::Upper, Eigen::NaturalOrdering<int>> {
   public:
    void factorize_in_place(const Matrix& a) { this->template factorize_preordered<true>(a); }
    const VectorType& diagonal() const { return this->m_diag; }  // D (vectorD() returns a copy)
  };

  int n_;
  bool symmetric_;
  std::vector<int> perm_;  // symmetric: position of the caller's index i in the stored matrix
  Matrix A_;
  std::vector<int> diag_;  // slot of every diagonal entry (stored numbering)
  Ldlt ldlt_;
  // Unsymmetric: SuiteSparse KLU, analysed once; refactored on the pivot sequence of its last
  // pivoting factorization (no allocation), which is redone when that sequence has gone stale.
  struct Klu;
  struct KluFree {
    void operator()(Klu* k) const;
  };
  std::unique_ptr<Klu, KluFree> klu_;
  Eigen::VectorXd bp_, xp_;  // permuted right-hand side and solution
  bool ok_ = false;
};

// T = d + alpha A^T B + s sum_k mu_k d2Phi_k/dq2 (nq x nq) on Phi_q's pattern: the Newton tangents
// of alm-index3 (symmetric, A = B = Phi_q) and penalty (unsymmetric, B = its G).
class SparseTangent {
 public:
  // J: the Jacobian of every constraint row whose pattern A and B share. geometric_stiffness: the
  // pattern includes the rows' second derivatives (mu indexes every row of nat).
  SparseTangent(const NaturalCoordinates& nat, const SparseJacobian& J, bool symmetric, bool geometric_stiffness);

  void set_zero() { sys_.set_zero(); }
  void add_diagonal(const Eigen::VectorXd& d);
  void add_gram(double alpha, const SparseJacobian& A, const SparseJacobian& B);  // += alpha A^T B
  void add_geometric_stiffness(const Eigen::VectorXd& mu, double s);             // += s sum mu_k Phi_k,qq
  bool factorize() { return sys_.factorize(); }
  void solve(const Eigen::VectorXd& b, Eigen::VectorXd& x) { sys_.solve(b, x); }
  SparseSystem& system() { return sys_; }

 private:
  struct Gram {
    int slot, a, b;  // T[slot] += alpha A.value[a] B.value[b]
  };
  struct Hess {
    int slot, row;   // T[slot] += s mu[row] coef
    double coef;
  };
  static SparseSystem build(const NaturalCoordinates& nat, const SparseJacobian& J, bool symmetric,
                            bool geometric_stiffness);
  SparseSystem sys_;
  std::vector<Gram> gram_;
  std::vector<Hess> hess_;
  std::vector<int> diag_;  // slot of (i, i)
};

// The saddle-point (KKT) matrix of the index-3 Newton methods on (q, lambda) (gen-alpha):
//   [ diag(d) + s sum_k lambda_k d2Phi_k/dq2   G^T ]
//   [ G                                        0   ]      G = Phi_q of the kept rows,
// unsymmetric storage factored by KLU (its pivoting handles the zero block), fixed pattern.
class SparseKkt {
 public:
  SparseKkt(const NaturalCoordinates& nat, const SparseJacobian& G);

  int size() const { return sys_.size(); }
  // Writes every value: d (nq), s, lambda over G's rows, G's current values.
  void assemble(const Eigen::VectorXd& d, double s, const Eigen::VectorXd& lambda, const SparseJacobian& G);
  bool factorize() { return sys_.factorize(); }
  void solve(const Eigen::VectorXd& b, Eigen::VectorXd& x) { sys_.solve(b, x); }

 private:
  struct Hess {
    int slot, row;  // K[slot] += s lambda[row] coef (row: index into G's rows)
    double coef;
  };
  static SparseSystem build(const NaturalCoordinates& nat, const SparseJacobian& G);
  SparseSystem sys_;
  std::vector<Hess> hess_;
  std::vector<int> diag_;                  // slot of (i, i), i < nq
  std::vector<std::pair<int, int>> g_;     // slots of G's value a: (nq + k, j) and (j, nq + k)
};

// S = G M^-1 G^T (kept rows x kept rows) for the index-1 formulations, symmetric, with its LDLT.
// A shift > 0 factors S + shift x (largest diagonal entry of S) I instead, and every solve is then
// refined once against S itself (iterated Tikhonov; projection/projection_ode.hpp says why).
class SparseSchur {
 public:
  explicit SparseSchur(const SparseJacobian& G);
  // S = G diag(m_inv) G^T, factored: as it is while every pivot keeps at least near_singular of
  // its row's diagonal (min_pivot_ratio()), else shifted by shift x its largest diagonal entry with
  // every solve refined once against S. false when the factorization failed.
  bool assemble_and_factorize(const SparseJacobian& G, const Eigen::VectorXd& m_inv, double shift,
                              double near_singular);
  // The same in two parts, without the shift (common/linear_solver.hpp's SparseSolver):
  // S = G diag(m_inv) G^T, then its LDLT (false on a zero pivot).
  void assemble(const SparseJacobian& G, const Eigen::VectorXd& m_inv);
  bool factorize() {
    shifted_ = false;
    return sys_.factorize();
  }
  bool shifted() const { return shifted_; }
  double pivot_ratio() const { return pivot_ratio_; }  // of the last unshifted factorization (0: failed)
  void solve(const Eigen::VectorXd& b, Eigen::VectorXd& x);
  SparseSystem& system() { return sys_; }

 private:
  struct Term {
    int slot, a, b, col;  // S[slot] += G.value[a] G.value[b] m_inv[col]
  };
  SparseSystem sys_;
  std::vector<Term> terms_;
  bool shifted_ = false;
  double pivot_ratio_ = 0.0;
  Eigen::VectorXd r_, dx_;
};

// The penalty formulations' mass scale. alm-index3 and penalty scale their penalty factor alpha by
// a mass, so that h^2 alpha s / 4 (the contraction of the augmented-Lagrangian multiplier iteration,
// 1 / (1 + h^2 alpha s / 4) per iteration) and alpha s (the penalty's stiffness against violations)
// are large in every constraint mode s, an eigenvalue of S = Phi_q M^-1 Phi_q^T (1/kg) over the
// independent rows. For a point mass m on a rod S = 1/m, which is why the largest point mass m_ref
// served. A long closed chain has much softer modes (the 40-window N-four-bar: s_min = 7.6e-4 /kg
// at its initial configuration with m_ref = 1 kg, and s_min -> 0 at its singular positions): there
// the multiplier iteration of alm-index3 converged far more slowly than its usual ~1e-2 per
// iteration (docs/formulations.md, Method notes). So the scale is 1 / s_min at the initial
// configuration when that is more than kSoftModeRatio times m_ref, and m_ref otherwise (every model
// of the five small problems: their results are unchanged).
inline constexpr double kSoftModeRatio = 10.0;
// Smallest eigenvalue of S over the independent rows at q0 (1/kg): dense eigenvalues below
// kSparseMinCoordinates, else inverse iteration on S's sparse LDLT. Infinity without constraints.
double softest_constraint_mode(const NaturalCoordinates& nat, const Model& model);
// m_ref, or 1 / softest_constraint_mode() when that is more than kSoftModeRatio m_ref (kg).
double penalty_mass_scale(const NaturalCoordinates& nat, const Model& model, double m_ref);

}  // namespace mbs
