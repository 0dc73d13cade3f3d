#include "common/linear_modes.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstring>
#include <limits>

#include "core/formulation.hpp"  // SolverError

namespace mbs {

using cd = std::complex<double>;

// ---------------------------------------------------------------------------------------------
// The QZ and inverse-iteration workspace.

struct LinearModes::Engine {
  // A pencil of size N; R (in mode()) maps z's leading R.cols() entries to point displacements.
  explicit Engine(int N)
      : A_(N, N), B_(N, N), ges_(N), es_(N), alphas_(N), betas_(N), P_(N, N), lu_(N), b_(N), x_(N), z_(N),
        svd_(N, N, Eigen::ComputeFullV), c_(N) {
    // A fixed, irregular start vector for inverse iteration (no component is likely to vanish in
    // the direction of any eigenvector).
    for (int k = 0; k < N; ++k) b_[k] = cd(1.0 + 0.37 * std::cos(1.3 * k + 0.2), 0.5 * std::sin(0.7 * k + 1.1));
    b_.normalize();
  }

  int size() const { return static_cast<int>(A_.rows()); }

  // The scaled first-order pencil of M y'' + C y' + K y + G^T mu = 0, G y = 0 (see the header).
  void build(const Eigen::MatrixXd& M, const Eigen::MatrixXd* C, const Eigen::MatrixXd& K, const Eigen::MatrixXd& G,
             double w, double m_norm) {
    const int n = static_cast<int>(M.rows()), m = static_cast<int>(G.rows());
    A_.setZero();
    B_.setZero();
    for (int i = 0; i < n; ++i) {
      A_(i, n + i) = 1.0;  // s y = y'
      B_(i, i) = 1.0;
    }
    const double inv_m = 1.0 / m_norm;
    B_.block(n, n, n, n) = inv_m * M;
    A_.block(n, 0, n, n) = (-inv_m / (w * w)) * K;
    if (C != nullptr) A_.block(n, n, n, n) = (-inv_m / w) * *C;
    for (int k = 0; k < m; ++k) {
      const double g = G.row(k).norm();
      const double inv_g = g > 0.0 ? 1.0 / g : 0.0;  // a zero row stays zero: an honestly singular pencil
      for (int j = 0; j < n; ++j) {
        A_(n + j, 2 * n + k) = -inv_g * G(k, j);
        A_(2 * n + k, j) = inv_g * G(k, j);
      }
    }
  }
  // A general pencil, scaled to unit norms (s = (|A| / |B|) s^).
  void build(const Eigen::MatrixXd& A, const Eigen::MatrixXd& B, double a_norm, double b_norm) {
    A_ = (1.0 / a_norm) * A;
    B_ = (1.0 / b_norm) * B;
  }

  // A standard problem s z = A z (B = I): A is written by the caller into a(), already scaled.
  Eigen::MatrixXd& a() { return A_; }
  // Hessenberg-QR of A (eigenvalues only), B set to I for mode(). False if it did not converge.
  bool standard() {
    B_.setIdentity();
    norm_A_ = A_.norm();
    norm_B_ = B_.norm();
    es_.compute(A_, false);
    if (es_.info() != Eigen::Success) return false;
    alphas_ = es_.eigenvalues();  // a reference to the solver's own vector: no allocation
    betas_.setOnes();
    return true;
  }

  // QZ (eigenvalues only). False if it did not converge.
  bool qz() {
    norm_A_ = A_.norm();
    norm_B_ = B_.norm();
    ges_.compute(A_, B_, false);
    if (ges_.info() != Eigen::Success) return false;
    alphas_ = ges_.alphas();  // alphas() and betas() return copies: once per call, not per use
    betas_ = ges_.betas();
    return true;
  }

  cd alpha(int i) const { return alphas_[i]; }
  double beta(int i) const { return betas_[i]; }
  double norm_A() const { return norm_A_; }
  double norm_B() const { return norm_B_; }

  // The mode z (|z| = 1) of the finite scaled eigenvalue s_hat, or null if none is finite.
  // Regular pencil: inverse iteration. Singular pencil (or inverse iteration failing): the numerical
  // null space of A - s^ B, and in it the vector that moves the most mass (largest |R z| / |z|).
  const Eigen::VectorXcd* mode(cd s_hat, bool singular, const Eigen::MatrixXd& R) {
    if (!singular) {
      // Shift off the computed eigenvalue so that A - sigma B is safely invertible; the wanted mode
      // is amplified by ~1 / |delta| against the others in each step.
      const cd delta = 1e-10 * (1.0 + std::abs(s_hat)) * cd(M_SQRT1_2, M_SQRT1_2);
      P_ = A_.cast<cd>();
      P_.noalias() -= (s_hat + delta) * B_.cast<cd>();
      lu_.compute(P_);
      x_ = lu_.solve(b_);
      x_.normalize();
      z_ = lu_.solve(x_);
      if (normalized()) return &z_;
    }
    P_ = A_.cast<cd>();
    P_.noalias() -= s_hat * B_.cast<cd>();
    svd_.compute(P_);
    const auto& sv = svd_.singularValues();
    const int N = size();
    int k = 1;
    while (k < N && sv[N - 1 - k] <= kNullSpaceTol * sv[0]) ++k;
    const auto V = svd_.matrixV().rightCols(k);
    if (k == 1) {
      z_ = V.col(0);
    } else {  // the top right singular vector of R V (k is small)
      Eigen::MatrixXcd D(R.rows(), k);
      for (int j = 0; j < k; ++j)
        for (int i = 0; i < R.rows(); ++i) {
          cd sum = 0.0;
          for (int c = 0; c < R.cols(); ++c) sum += R(i, c) * V(c, j);
          D(i, j) = sum;
        }
      Eigen::JacobiSVD<Eigen::MatrixXcd> small(D, Eigen::ComputeFullV);
      c_.head(k) = small.matrixV().col(0);
      z_.noalias() = V * c_.head(k);
    }
    return normalized() ? &z_ : nullptr;
  }

 private:
  // Relative size of the singular values of A - s^ B counted as zero when a singular pencil's null
  // space is needed: rounding of s^ leaves ~1e-15 on the true null vectors, the others are O(1).
  static constexpr double kNullSpaceTol = 1e-8;

  bool normalized() {
    const double norm = z_.norm();
    if (!(norm > 0.0) || !std::isfinite(norm)) return false;
    z_ /= norm;
    return true;
  }

  Eigen::MatrixXd A_, B_;
  double norm_A_ = 0.0, norm_B_ = 0.0;
  Eigen::GeneralizedEigenSolver<Eigen::MatrixXd> ges_;
  Eigen::EigenSolver<Eigen::MatrixXd> es_;
  Eigen::VectorXcd alphas_;
  Eigen::VectorXd betas_;
  Eigen::MatrixXcd P_;
  Eigen::PartialPivLU<Eigen::MatrixXcd> lu_;
  Eigen::VectorXcd b_, x_, z_;
  Eigen::JacobiSVD<Eigen::MatrixXcd> svd_;
  Eigen::VectorXcd c_;
};

namespace {

enum Reason {
  kTrue, kInfinite, kMultiplierBlock, kUndetermined, kAbsent, kNoMode, kMultiplierOnly, kMassless, kViolates
};

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// why = head + x (as {:.1e}) + tail, within the string's reserved capacity (no allocation).
void set_why(std::string& why, const char* head, double x, const char* tail) {
  char figure[32];
  const auto res = fmt::format_to_n(figure, sizeof figure, "{:.1e}", x);
  why.assign(head);
  why.append(figure, std::min<size_t>(res.size, sizeof figure));
  why.append(tail);
}
// The reason of a judgement, with its figure where it has one (metric_a or metric_b of Raw).
void write_why(std::string& why, int reason, double figure) {
  switch (reason) {
    case kTrue:
      set_why(why, "true: moves mass, satisfies Phi_q dq = 0 (", figure, " |dq|)");
      break;
    case kInfinite:
      set_why(why, "spurious: infinite (|beta/alpha| = ", figure, " on the scaled pencil)");
      break;
    case kMultiplierBlock:
      why.assign(
          "spurious: infinite, a multiplier's index-3 block (G of full row rank, T^T M T positive definite: three "
          "per independent constraint row)");
      break;
    case kUndetermined:
      why.assign("spurious: undetermined, alpha ~ beta ~ 0: singular pencil");
      break;
    case kAbsent:
      why.assign(
          "spurious: undetermined (0/0), a coordinate direction with no mass, stiffness or constraint (an "
          "'infinite' pair of a singular mass matrix)");
      break;
    case kNoMode:
      why.assign("spurious: no mode found (no finite null vector of A - sB)");
      break;
    case kMultiplierOnly:
      set_why(why, "spurious: multiplier-only mode (|y| (1 + |s|/w) = ", figure, " |z|)");
      break;
    case kMassless:
      set_why(why, "spurious: moves no mass (|R y| = ", figure, " |R| |y|)");
      break;
    case kViolates:
      set_why(why, "spurious: violates the constraints (|Phi_q dq| = ", figure, " |dq|)");
      break;
  }
}
// Manifold path: a row of G (at unit norm) whose distance from the span of the rows before it is
// below this is dependent (the pencil is then singular: QZ's path). NaturalEquilibrium's threshold.
constexpr double kRankTol = 1e-10;
// |K - K^T| <= kSymmetryTol |K| (Frobenius): symmetric to rounding, the symmetric eigenproblem applies.
constexpr double kSymmetryTol = 1e-12;

template <typename Mat>
double asymmetry(const Mat& X) {
  double sum = 0.0;
  for (int j = 0; j < X.cols(); ++j)
    for (int i = j + 1; i < X.rows(); ++i) sum += (X(i, j) - X(j, i)) * (X(i, j) - X(j, i));
  return std::sqrt(2.0 * sum);
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// The deflation and manifold-path workspace, for the generic path (N = Eigen::Dynamic: MatrixXd and
// VectorXd) and for small systems (N = kSmall: the same algorithms on Eigen types with that maximum
// size, which live inside the object and let Eigen take its small-size code paths).

namespace {
constexpr int times(int k, int N) { return N == Eigen::Dynamic ? Eigen::Dynamic : k * N; }
}  // namespace

template <int N>
struct LinearModes::Work {
  static constexpr int Q = times(3, N);  // bound on nq and nc
  using Mat = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, 0, N, N>;
  using MatQN = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, 0, Q, N>;
  using MatQQ = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, 0, Q, Q>;
  using MatW = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, 0, times(4, N), N>;
  using MatC = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, 0, times(2, N), times(2, N)>;
  using Vec = Eigen::Matrix<double, Eigen::Dynamic, 1, 0, N, 1>;
  using VecQ = Eigen::Matrix<double, Eigen::Dynamic, 1, 0, Q, 1>;
  using CMat = Eigen::Matrix<cd, Eigen::Dynamic, Eigen::Dynamic, 0, N, N>;
  using CVec = Eigen::Matrix<cd, Eigen::Dynamic, 1, 0, N, 1>;
  using Sym = Eigen::SelfAdjointEigenSolver<Mat>;

  Work(int n, int m, int nq, int nc, bool damped)
      : ldlt(n), W((damped ? 3 : 2) * n + m, n), svd(W.rows(), n, Eigen::ComputeFullV), kept(n), dqr(nq), dqi(nq),
        cr(nc), ci(nc) {}

  // The inputs as these types (small systems only; the generic path reads LinearModes' own).
  Mat Mi, Ki, Ci, Gi;
  MatQN Ri;
  MatQQ Pi;
  // The pencil after deflation (pointers into the inputs or the reduced matrices below).
  const Mat *Mu = nullptr, *Ku = nullptr, *Cu = nullptr, *Gu = nullptr;
  const MatQN* Ru = nullptr;
  // Absent directions: LDLT of M (is it singular?), W = [M; K; C; G] scaled, its SVD, and the
  // pencil's matrices on the complement Y of the absent directions.
  Eigen::LDLT<Mat> ldlt;
  MatW W;
  Eigen::JacobiSVD<MatW> svd;
  // Or, when every absent direction is a coordinate of y (exact zero rows and columns), the
  // coordinates kept: Y is then their selection, no SVD.
  Eigen::Matrix<int, Eigen::Dynamic, 1, 0, N, 1> kept;
  bool by_coordinates = false;
  int nr = -1;
  Mat Y, Mr, Cr, Kr, Gr, tmp;
  MatQN Rr;
  std::unique_ptr<Engine> engine;  // QZ (generic path only)
  // Manifold path, p = nr - m coordinates u on the constraint manifold y = T u: the rows of G at unit
  // norm (transposed) and their QR, Q = [range(G^T) T]; the reduced matrices; the Cholesky factor L of
  // T^T M T; S = L^-1 K_t L^-T and its tridiagonalization (symmetric), eigenvectors X (p x p),
  // modes U = T L^-T X; the companion matrix's eigenvalues (damped or unsymmetric).
  Mat GnT, Qg, T, Mt, Kt, Ct, Sk, Sc, Qs, X, U, TU;
  MatQN Rw;
  Eigen::HouseholderQR<Mat> gqr;
  Eigen::LLT<Mat> mllt;
  Eigen::Tridiagonalization<Mat> tri;
  std::unique_ptr<Sym> sym;
  Vec hwork, pwork, ur, ui, yr, yi;
  typename Sym::RealVectorType diag;
  typename Sym::SubDiagonalType subdiag;
  std::unique_ptr<Engine> companion;  // generic path
  MatC Ac;                            // small systems: the companion matrix and its eigensolver
  Eigen::EigenSolver<MatC> es;
  // The companion path's modes: s^2 I + s S_C + S_K and its LU, pivots, start, iterates.
  CMat Qc;
  std::vector<int> qperm;
  CVec qinv, qb, qx, qw;
  VecQ dqr, dqi, cr, ci;  // the judgement's R y and Phi_q dq
};

namespace {

// dst = A x: Eigen's coefficient-based product at small sizes, its general one otherwise.
template <typename Dst, typename A, typename X>
void product(Dst& dst, const A& a, const X& x) {
  if constexpr (A::MaxRowsAtCompileTime == Eigen::Dynamic)
    dst.noalias() = a * x;
  else
    dst.noalias() = a.lazyProduct(x);
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// LinearModes

LinearModes::LinearModes(int n, int m, int nq, int nc, bool damped, ModeRule rule)
    : M(Eigen::MatrixXd::Zero(n, n)),
      C(Eigen::MatrixXd::Zero(damped ? n : 0, damped ? n : 0)),
      K(Eigen::MatrixXd::Zero(n, n)),
      G(Eigen::MatrixXd::Zero(m, n)),
      R(Eigen::MatrixXd::Zero(nq, n)),
      Phi_q(Eigen::MatrixXd::Zero(nc, nq)),
      n_(n), m_(m), nq_(nq), nc_(nc), size_(2 * n + m), damped_(damped), general_(false), rule_(rule),
      raw_(size_), order_(size_), magnitude_(size_), why_cache_(size_),
      phi_row_norm_(nc) {
  if (rule.small && n <= kSmall && m <= kSmall && nq <= 3 * kSmall && nc <= 3 * kSmall) {
    small_ = std::make_unique<Work<kSmall>>(n, m, nq, nc, damped);
    size_work(*small_, n);  // no absent direction expected: the pencil of the full size
  } else {
    dyn_ = std::make_unique<Work<Eigen::Dynamic>>(n, m, nq, nc, damped);
    size_work(*dyn_, n);
  }
}

LinearModes::LinearModes(GeneralPencil, int N, int nq, int nc, ModeRule rule)
    : A(Eigen::MatrixXd::Zero(N, N)),
      B(Eigen::MatrixXd::Zero(N, N)),
      R(Eigen::MatrixXd::Zero(nq, N)),
      Phi_q(Eigen::MatrixXd::Zero(nc, nq)),
      n_(0), m_(0), nq_(nq), nc_(nc), size_(N), damped_(false), general_(true), rule_(rule),
      raw_(N), order_(N), magnitude_(N), why_cache_(N),
      phi_row_norm_(nc) {
  dyn_ = std::make_unique<Work<Eigen::Dynamic>>(0, 0, nq, nc, false);
  dyn_->nr = 0;
  dyn_->yr.resize(N);
  dyn_->yi.resize(N);
  dyn_->engine = std::make_unique<Engine>(N);
}

LinearModes::~LinearModes() = default;

template <int N>
void LinearModes::size_work(Work<N>& w, int nr) {
  if (nr == w.nr) return;
  w.nr = nr;
  if constexpr (N != Eigen::Dynamic) {
    w.Mi.resize(n_, n_);
    w.Ki.resize(n_, n_);
    w.Ci.resize(damped_ ? n_ : 0, damped_ ? n_ : 0);
    w.Gi.resize(m_, n_);
    w.Ri.resize(nq_, n_);
    w.Pi.resize(nc_, nq_);
  }
  w.Y.resize(n_, nr);
  w.Mr.resize(nr, nr);
  w.Kr.resize(nr, nr);
  w.Cr.resize(damped_ ? nr : 0, damped_ ? nr : 0);
  w.Gr.resize(m_, nr);
  w.Rr.resize(nq_, nr);
  w.tmp.resize(n_, nr);
  w.yr.resize(nr);
  w.yi.resize(nr);
  if constexpr (N == Eigen::Dynamic) w.engine = std::make_unique<Engine>(2 * nr + m_);
  // The manifold path's workspace (p = nr - m coordinates; none if G has more rows than nr).
  const int p = std::max(nr - m_, 0), pc = damped_ ? p : 0;
  w.GnT.resize(nr, m_);
  w.Qg.resize(nr, nr);
  w.T.resize(nr, p);
  w.Mt.resize(p, p);
  w.Kt.resize(p, p);
  w.Ct.resize(pc, pc);
  w.Sk.resize(p, p);
  w.Sc.resize(p, p);
  w.Qs.resize(p, p);
  w.X.resize(p, p);
  w.U.resize(p, p);
  w.TU.resize(nr, p);
  w.Rw.resize(nq_, p);
  w.gqr = Eigen::HouseholderQR<typename Work<N>::Mat>(nr, m_);
  w.mllt.compute(Work<N>::Mat::Identity(p, p));  // sizes it (LLT(size) leaves info uninitialized)
  w.tri = Eigen::Tridiagonalization<typename Work<N>::Mat>(std::max(p, 1));
  // Made in place: Eigen's sizing constructor leaves its status uninitialized, so moving a
  // temporary into a member reads an indeterminate enum (UBSan flags it).
  w.sym = std::make_unique<typename Work<N>::Sym>(std::max(p, 1));
  w.hwork.resize(nr);
  w.pwork.resize(p);
  w.diag.resize(p);
  w.subdiag.resize(std::max(p - 1, 0));
  w.ur.resize(p);
  w.ui.resize(p);
  w.Qc.resize(p, p);
  w.qperm.resize(p);
  w.qinv.resize(p);
  w.qb.resize(p);
  w.qx.resize(p);
  w.qw.resize(p);
  // A fixed, irregular start vector for inverse iteration, as Engine's.
  for (int k = 0; k < p; ++k) w.qb[k] = cd(1.0 + 0.37 * std::cos(1.3 * k + 0.2), 0.5 * std::sin(0.7 * k + 1.1));
  if (p > 0) w.qb.normalize();
  if constexpr (N == Eigen::Dynamic) {
    w.companion.reset();
    if (damped_ && p > 0) w.companion = std::make_unique<Engine>(2 * p);
  } else {
    w.Ac.resize(2 * p, 2 * p);  // the eigensolver's storage is inline: nothing to size
  }
}

void LinearModes::prepare(std::vector<Eigenvalue>& out) const {
  out.assign(size_, Eigenvalue{});
  for (Eigenvalue& e : out) e.why.reserve(160);
}

std::string LinearModes::rule() const {
  return fmt::format(
      "true when finite (|beta| > {:g} |alpha| on the pencil scaled to unit norms) and its mode, mapped to point "
      "displacements dq = R y, moves mass (|dq| > {:g} |R| |y|) and satisfies the linearized constraints "
      "(|Phi_q dq| <= {:g} |dq|, rows of Phi_q normalized); spurious otherwise (infinite, undetermined 0/0 of a "
      "direction without mass, stiffness or constraint, multiplier-only, massless or constraint-violating modes)",
      rule_.infinite, rule_.massless, rule_.constraint);
}

// Directions of y absent from the equations (M v = C v = K v = 0, G v = 0): their number; the
// orthonormal complement is then the leading right singular vectors of W = [M; K; C; G] (each
// block at unit norm), or, when the absent directions are coordinates of y with exactly zero rows
// and columns and M is positive definite on the rest, the selection of the other coordinates
// (w.by_coordinates, w.kept): the same subspace without the SVD, which was a fifth of a small
// linearization's time (docs/formulations.md, Method notes).
template <int N>
int LinearModes::find_absent_directions(Work<N>& w, const typename Work<N>::Mat& M, const typename Work<N>::Mat& K,
                                        const typename Work<N>::Mat* C, const typename Work<N>::Mat& G) {
  w.by_coordinates = false;
  auto positive_definite = [&] {
    const auto& d = w.ldlt.vectorD();
    return w.ldlt.info() == Eigen::Success && d.minCoeff() > rule_.absent * d.cwiseAbs().maxCoeff();
  };
  // Exactly absent coordinates first (joint angles' azimuth phi of a rod along gravity: its rows and
  // columns are zeros): if M is positive definite on the others, they are all the absent directions.
  int nk = 0;
  for (int j = 0; j < n_; ++j) {
    const bool zero = M.col(j).isZero(0.0) && M.row(j).isZero(0.0) && K.col(j).isZero(0.0) && K.row(j).isZero(0.0) &&
                      (C == nullptr || (C->col(j).isZero(0.0) && C->row(j).isZero(0.0))) && G.col(j).isZero(0.0);
    if (!zero) w.kept[nk++] = j;
  }
  if (nk == n_) {
    w.ldlt.compute(M);
    if (positive_definite()) return 0;
  } else if (nk > 0) {
    const auto sel = w.kept.head(nk);
    w.ldlt.compute(M(sel, sel));
    if (positive_definite()) {
      w.by_coordinates = true;
      return n_ - nk;
    }
  }
  auto unit = [](const typename Work<N>::Mat& X) {
    const double x = X.norm();
    return x > 0.0 ? 1.0 / x : 0.0;
  };
  int row = 0;
  w.W.middleRows(row, n_) = unit(M) * M;
  row += n_;
  w.W.middleRows(row, n_) = unit(K) * K;
  row += n_;
  if (C != nullptr) {
    w.W.middleRows(row, n_) = unit(*C) * *C;
    row += n_;
  }
  for (int k = 0; k < m_; ++k) {
    const double g = G.row(k).norm();
    w.W.row(row + k) = (g > 0.0 ? 1.0 / g : 0.0) * G.row(k);
  }
  w.svd.compute(w.W);
  const auto& sv = w.svd.singularValues();
  int absent = 0;
  while (absent < n_ && sv[n_ - 1 - absent] <= rule_.absent * sv[0]) ++absent;
  return absent;
}

// Steps 1 and 2 of compute() for a second-order system: deflation of absent directions (w.Mu, ...
// then describe the pencil on their complement; sets absent_ and w_), then the manifold path where
// it applies. True if it did (raw_[0, 2 nr + m) written).
template <int N>
bool LinearModes::reduce(Work<N>& w, const typename Work<N>::Mat& M, const typename Work<N>::Mat& K,
                         const typename Work<N>::Mat* C, const typename Work<N>::Mat& G,
                         const typename Work<N>::MatQN& R, const typename Work<N>::MatQQ& Phi) {
  // 1. Deflate absent directions: y = Y y_r on their orthogonal complement.
  absent_ = find_absent_directions(w, M, K, C, G);
  const int nr = n_ - absent_;
  size_work(w, nr);
  w.Mu = &M, w.Ku = &K, w.Cu = C, w.Gu = &G, w.Ru = &R;
  if (absent_ > 0 && w.by_coordinates) {  // Y selects the coordinates kept
    const auto sel = w.kept.head(nr);
    w.Mr = M(sel, sel);
    w.Kr = K(sel, sel);
    if (C != nullptr) {
      w.Cr = (*C)(sel, sel);
      w.Cu = &w.Cr;
    }
    w.Gr = G(Eigen::all, sel);
    w.Rr = R(Eigen::all, sel);
    w.Mu = &w.Mr, w.Ku = &w.Kr, w.Gu = &w.Gr, w.Ru = &w.Rr;
  } else if (absent_ > 0) {
    w.Y = w.svd.matrixV().leftCols(nr);
    w.tmp.noalias() = M * w.Y;
    w.Mr.noalias() = w.Y.transpose() * w.tmp;
    w.tmp.noalias() = K * w.Y;
    w.Kr.noalias() = w.Y.transpose() * w.tmp;
    if (C != nullptr) {
      w.tmp.noalias() = *C * w.Y;
      w.Cr.noalias() = w.Y.transpose() * w.tmp;
      w.Cu = &w.Cr;
    }
    w.Gr.noalias() = G * w.Y;
    w.Rr.noalias() = R * w.Y;
    w.Mu = &w.Mr, w.Ku = &w.Kr, w.Gu = &w.Gr, w.Ru = &w.Rr;
  }
  const double k_norm = w.Ku->norm(), mr_norm = w.Mu->norm();
  w_ = k_norm > 0.0 && mr_norm > 0.0 ? std::sqrt(k_norm / mr_norm) : 1.0;
  // 2. On the constraint manifold when the pencil allows.
  return nr > 0 && rule_.manifold && manifold_modes(w, Phi);
}

void LinearModes::compute(std::vector<Eigenvalue>& out) {
  const Eigen::MatrixXd* Ru = &R;
  int N = size_;
  bool manifold = false;
  for (int k = 0; k < nc_; ++k) phi_row_norm_[k] = Phi_q.row(k).norm();
  if (general_) {
    const double a_norm = A.norm(), b_norm = B.norm();
    if (!(a_norm > 0.0) || !(b_norm > 0.0)) throw SolverError("linearization: a zero pencil matrix");
    w_ = a_norm / b_norm;
    absent_ = 0;
    dyn_->engine->build(A, B, a_norm, b_norm);
  } else {
    const double m_norm = M.norm();
    if (!(m_norm > 0.0)) throw SolverError("linearization: the mass matrix is zero");
    if (small_) {
      Work<kSmall>& w = *small_;
      w.Mi = M, w.Ki = K, w.Gi = G, w.Ri = R, w.Pi = Phi_q;
      if (damped_) w.Ci = C;
      manifold = reduce(w, w.Mi, w.Ki, damped_ ? &w.Ci : nullptr, w.Gi, w.Ri, w.Pi);
    }
    // Otherwise the generic path, also for a small system whose pencil the manifold path declines.
    if (!manifold) {
      if (!dyn_) dyn_ = std::make_unique<Work<Eigen::Dynamic>>(n_, m_, nq_, nc_, damped_);
      Work<Eigen::Dynamic>& w = *dyn_;
      manifold = reduce(w, M, K, damped_ ? &C : nullptr, G, R, Phi_q);
      Ru = w.Ru;
      if (!manifold && w.nr > 0) w.engine->build(*w.Mu, w.Cu, *w.Ku, *w.Gu, w_, w.Mu->norm());
    }
    N = 2 * (n_ - absent_) + m_;
  }
  // 3. QZ, and each eigenvalue judged by its mode.
  if (manifold) {
    // raw_[0, N) written by manifold_modes()
  } else if (N - m_ > 0 || general_) {
    path_ = static_cast<int>(Path::kQZ);
    Engine& engine = *dyn_->engine;
    if (!engine.qz()) throw SolverError("linearization: QZ did not converge");
    const double r_norm = Ru->norm();
    const double tol_a = rule_.singular * engine.norm_A(), tol_b = rule_.singular * engine.norm_B();
    // A pair alpha ~ beta ~ 0 left after deflation: a singular pencil of another kind; modes then
    // come from null spaces.
    bool singular = false;
    for (int i = 0; i < N; ++i) singular = singular || zero_pair(i, tol_a, tol_b);
    for (int i = 0; i < N; ++i) {
      classify(i, singular, *Ru, r_norm, tol_a, tol_b);
      // QZ returns a complex pair as consecutive, exactly conjugate alphas with one beta; the
      // partner's mode is the conjugate vector, with the same judgement.
      if (raw_[i].kind == 0 && raw_[i].s.imag() != 0.0 && i + 1 < N &&
          engine.alpha(i + 1) == std::conj(engine.alpha(i)) && engine.beta(i + 1) == engine.beta(i)) {
        raw_[i + 1] = raw_[i];
        raw_[i + 1].s = std::conj(raw_[i].s);
        ++i;
      }
    }
  } else {  // every direction absent: nothing but multipliers
    path_ = static_cast<int>(Path::kQZ);
    for (int i = 0; i < N; ++i) raw_[i] = Raw{cd(kNaN, kNaN), 2, false, 0.0, 0.0, kUndetermined};
  }
  for (int i = N; i < size_; ++i) raw_[i] = Raw{cd(kNaN, kNaN), 2, false, 0.0, 0.0, kAbsent};  // two per absent direction

  // 4. Insertion sort (stable, no allocation): finite by |s|, ties (to 1e-9) by imaginary then
  // real part; then infinite; then undetermined.
  // |s| once per eigenvalue, not per comparison (std::abs of a complex is a hypot call).
  for (int i = 0; i < size_; ++i) {
    order_[i] = i;
    magnitude_[i] = raw_[i].kind == 0 ? std::abs(raw_[i].s) : 0.0;
  }
  auto less = [this](int i, int j) {
    const Raw &a = raw_[i], &b = raw_[j];
    if (a.kind != b.kind) return a.kind < b.kind;
    if (a.kind != 0) return false;
    const double ma = magnitude_[i], mb = magnitude_[j], tol = 1e-9 * std::max(ma, mb);
    if (std::abs(ma - mb) > tol) return ma < mb;
    if (std::abs(a.s.imag() - b.s.imag()) > tol) return a.s.imag() < b.s.imag();
    return a.s.real() < b.s.real() - tol;
  };
  for (int i = 1; i < size_; ++i) {
    const int v = order_[i];
    int j = i - 1;
    while (j >= 0 && less(v, order_[j])) {
      order_[j + 1] = order_[j];
      --j;
    }
    order_[j + 1] = v;
  }

  // 5. Output, with the reason of each judgement. Each slot keeps the reason and figure its text was
  // last made from and formats again only when either differs: the text is a function of the two
  // alone, so the output never depends on an earlier call; only the formatting is saved.
  for (int k = 0; k < size_; ++k) {
    const Raw& r = raw_[order_[k]];
    Eigenvalue& e = out[k];
    e.s = r.s;
    e.finite = r.kind == 0;
    e.is_true = r.is_true;
    WhyCache& c = why_cache_[k];
    const double figure = r.reason == kTrue || r.reason == kViolates ? r.metric_b : r.metric_a;
    if (c.reason != r.reason || std::memcmp(&c.figure, &figure, sizeof figure) != 0) {
      c.reason = r.reason;
      c.figure = figure;
      write_why(c.text, r.reason, figure);
    }
    e.why.assign(c.text);
  }
}

// The manifold path (see the file comment) on w's deflated pencil. Writes raw_[0, 2 nr + m) and
// returns true, or returns false when the pencil is not of its kind: a dependent row of G, or
// T^T M T not positive definite (and, for a small system, a mode its companion path could not find).
template <int N>
bool LinearModes::manifold_modes(Work<N>& w, const typename Work<N>::MatQQ& Phi) {
  using Mat = typename Work<N>::Mat;
  const Mat &Mu = *w.Mu, &Ku = *w.Ku, &Gu = *w.Gu;
  const Mat* Cu = w.Cu;
  const typename Work<N>::MatQN& Ru = *w.Ru;
  const int nr = static_cast<int>(Mu.rows()), p = nr - m_;
  if (p < 0) return false;
  // 1. y = T u: T the orthonormal complement of the rows of G (Householder QR of G^T, rows at unit
  // norm so that the pivots measure dependence). Without multipliers T = I, and nothing is copied.
  const Mat *Mp = &Mu, *Kp = &Ku, *Cp = Cu;
  if (m_ > 0) {
    for (int k = 0; k < m_; ++k) {
      const double g = Gu.row(k).norm();
      if (!(g > 0.0)) return false;
      w.GnT.col(k) = Gu.row(k).transpose() / g;
    }
    w.gqr.compute(w.GnT);
    for (int k = 0; k < m_; ++k)
      if (!(std::abs(w.gqr.matrixQR()(k, k)) > kRankTol)) return false;
    w.gqr.householderQ().evalTo(w.Qg, w.hwork);
    w.T = w.Qg.rightCols(p);
    w.TU.noalias() = Mu * w.T;
    w.Mt.noalias() = w.T.transpose() * w.TU;
    w.TU.noalias() = Ku * w.T;
    w.Kt.noalias() = w.T.transpose() * w.TU;
    if (Cu != nullptr) {
      w.TU.noalias() = *Cu * w.T;
      w.Ct.noalias() = w.T.transpose() * w.TU;
      Cp = &w.Ct;
    }
    Mp = &w.Mt, Kp = &w.Kt;
  }
  // 2. Cholesky M_t = L L^T, with the pivot test that calls a mass direction absent.
  if (p > 0) {
    w.mllt.compute(*Mp);
    if (w.mllt.info() != Eigen::Success) return false;
    const auto d = w.mllt.matrixLLT().diagonal();
    if (!(d.minCoeff() * d.minCoeff() > rule_.absent * d.maxCoeff() * d.maxCoeff())) return false;
  }
  const double r_norm = Ru.norm();
  // 3. S_K = L^-1 K_t L^-T (and S_C): w = L^T u turns M_t into I.
  // Triangular solves with L or L^T (tri): a column at a time for small systems (Eigen's blocked
  // solver for a matrix right-hand side costs more in setup than the solve at these sizes).
  auto solve = [](const auto& tri, Mat& S) {
    if constexpr (N == Eigen::Dynamic) {
      tri.solveInPlace(S);
    } else {
      for (int j = 0; j < S.cols(); ++j) {
        auto col = S.col(j);
        tri.solveInPlace(col);
      }
    }
  };
  auto solve_l = [&](Mat& S) { solve(w.mllt.matrixL(), S); };
  auto solve_lt = [&](Mat& S) { solve(w.mllt.matrixU(), S); };
  auto congruence = [&solve_l, p](const Mat& X, Mat& S) {
    S = X;
    if (p == 0) return;
    solve_l(S);  // L^-1 X
    S.transposeInPlace();
    solve_l(S);  // L^-1 X^T L^-T
    S.transposeInPlace();
  };
  congruence(*Kp, w.Sk);
  const bool damped = Cp != nullptr && Cp->norm() > 0.0;
  const double big = w_ / rule_.infinite;  // |s| above this is infinite, as |beta| <= infinite |alpha| is for QZ
  if (!damped && asymmetry(*Kp) <= kSymmetryTol * Kp->norm()) {
    // 4a. Undamped, symmetric: S_K x = lambda x, s = +-sqrt(-lambda), the mode y = T L^-T x real.
    path_ = static_cast<int>(Path::kSymmetric);
    if (p > 0) {
      for (int j = 0; j < p; ++j)
        for (int i = j + 1; i < p; ++i) w.Sk(i, j) = w.Sk(j, i) = 0.5 * (w.Sk(i, j) + w.Sk(j, i));
      w.tri.compute(w.Sk);
      w.diag = w.tri.diagonal();
      w.subdiag = w.tri.subDiagonal();
      w.tri.matrixQ().evalTo(w.Qs, w.pwork);
      w.sym->computeFromTridiagonal(w.diag, w.subdiag, Eigen::ComputeEigenvectors);
      if (w.sym->info() != Eigen::Success)
        throw SolverError("linearization: the symmetric eigensolver did not converge");
      product(w.X, w.Qs, w.sym->eigenvectors());
      w.U = w.X;
      solve_lt(w.U);  // L^-T X
      if (m_ > 0) w.TU.noalias() = w.T * w.U;
    }
    const Mat& Y = m_ > 0 ? w.TU : w.U;
    for (int k = 0; k < p; ++k) {
      const double lambda = w.sym->eigenvalues()[k];
      const cd s = lambda >= 0.0 ? cd(0.0, std::sqrt(lambda)) : cd(std::sqrt(-lambda), 0.0);
      Raw& r = raw_[2 * k];
      r = Raw{s, 0, false, 0.0, 0.0, kTrue};
      if (std::abs(s) > big) {
        r = Raw{cd(std::numeric_limits<double>::infinity(), 0.0), 1, false, w_ / std::abs(s), 0.0, kInfinite};
      } else {
        w.yr = Y.col(k);
        w.yi.setZero();
        judge(w, r, Ru, r_norm, Phi);
      }
      raw_[2 * k + 1] = r;  // the partner -s, written so that no component becomes -0
      if (r.kind == 0) raw_[2 * k + 1].s = lambda >= 0.0 ? std::conj(s) : cd(-s.real(), 0.0);
    }
  } else {
    // 4b. Damped (or K unsymmetric): the companion matrix [0 I; -S_K -S_C] in scaled time, a
    // standard eigenproblem (Hessenberg QR), modes by inverse iteration; y = T L^-T w.
    path_ = static_cast<int>(Path::kCompanion);
    auto fill = [&](auto& Ac) {
      Ac.setZero();
      Ac.block(0, p, p, p).setIdentity();
      Ac.block(p, 0, p, p) = (-1.0 / (w_ * w_)) * w.Sk;
      if (damped) Ac.block(p, p, p, p) = (-1.0 / w_) * w.Sc;
    };
    if (p > 0) {
      if (damped) congruence(*Cp, w.Sc);
      if constexpr (N == Eigen::Dynamic) {
        if (!w.companion || w.companion->size() != 2 * p) w.companion = std::make_unique<Engine>(2 * p);
        fill(w.companion->a());
        if (!w.companion->standard()) throw SolverError("linearization: the companion eigensolver did not converge");
      } else {
        fill(w.Ac);
        w.es.compute(w.Ac, false);
        if (w.es.info() != Eigen::Success) throw SolverError("linearization: the companion eigensolver did not converge");
      }
      w.U.setIdentity();
      solve_lt(w.U);  // L^-T
      if (m_ > 0) w.TU.noalias() = w.T * w.U;
    }
    auto alpha = [&w](int i) -> cd {
      if constexpr (N == Eigen::Dynamic)
        return w.companion->alpha(i);
      else
        return w.es.eigenvalues()[i];
    };
    const Mat& W = m_ > 0 ? w.TU : w.U;  // y = W w
    if (p > 0) w.Rw.noalias() = Ru * W;
    for (int i = 0; i < 2 * p; ++i) {
      const cd s_hat = alpha(i);
      Raw& r = raw_[i];
      r = Raw{w_ * s_hat, 0, false, 0.0, 0.0, kTrue};
      if (std::abs(r.s) > big) {
        r = Raw{cd(std::numeric_limits<double>::infinity(), 0.0), 1, false, w_ / std::abs(r.s), 0.0, kInfinite};
      } else if (quadratic_mode(w, r.s, damped)) {
        w.ur = w.qw.real();
        w.ui = w.qw.imag();
        product(w.yr, W, w.ur);
        product(w.yi, W, w.ui);
        judge(w, r, Ru, r_norm, Phi);
      } else if constexpr (N != Eigen::Dynamic) {
        return false;  // the generic path's inverse iteration on the companion pencil decides
      } else if (const Eigen::VectorXcd* z = w.companion->mode(s_hat, false, w.Rw)) {
        w.ur = z->head(p).real();
        w.ui = z->head(p).imag();
        w.yr.noalias() = W * w.ur;
        w.yi.noalias() = W * w.ui;
        judge(w, r, Ru, r_norm, Phi);
      } else {
        r.reason = kNoMode;
      }
      // Pairs come as consecutive, exactly conjugate eigenvalues; the partner's mode is the conjugate.
      if (r.kind == 0 && r.s.imag() != 0.0 && i + 1 < 2 * p && alpha(i + 1) == std::conj(s_hat)) {
        raw_[i + 1] = r;
        raw_[i + 1].s = std::conj(r.s);
        ++i;
      }
    }
  }
  // 5. The multipliers: 3 m eigenvalues at infinity (an index-3 block per independent row of G).
  for (int i = 2 * p; i < 2 * p + 3 * m_; ++i)
    raw_[i] = Raw{cd(std::numeric_limits<double>::infinity(), 0.0), 1, false, 0.0, 0.0, kMultiplierBlock};
  return true;
}

// The mode w of the companion path's eigenvalue s, from the p x p quadratic (s^2 I + s S_C + S_K) w = 0
// (the companion's eigenvector is [w; s w]): two steps of inverse iteration at s + delta, as mode()
// does on the pencil, at half its size. The LU (partial pivoting by |re| + |im|, as LAPACK's izamax)
// is written out: Eigen's dynamic complex LU spent most of the companion path on a 3 x 3 in
// overhead and a hypot per pivot candidate. False if it did not give a finite vector.
template <int N>
bool LinearModes::quadratic_mode(Work<N>& w, cd s, bool damped) {
  auto& Qc = w.Qc;
  const int p = static_cast<int>(Qc.rows());
  const cd sigma = s + 1e-10 * (w_ + std::hypot(s.real(), s.imag())) * cd(M_SQRT1_2, M_SQRT1_2);
  Qc = w.Sk.template cast<cd>();
  if (damped) Qc += sigma * w.Sc.template cast<cd>();
  Qc.diagonal().array() += sigma * sigma;
  auto cabs1 = [](cd z) { return std::abs(z.real()) + std::abs(z.imag()); };
  // The pivots' reciprocals, conj(u) / |u|^2 (no library complex division; |u| is far from
  // overflow here, the matrix being O(|s|^2) and shifted off singular by 1e-10).
  for (int k = 0; k < p; ++k) {
    int pivot = k;
    for (int i = k + 1; i < p; ++i)
      if (cabs1(Qc(i, k)) > cabs1(Qc(pivot, k))) pivot = i;
    w.qperm[k] = pivot;
    if (!(cabs1(Qc(pivot, k)) > 0.0)) return false;  // exactly singular: the shift prevents it
    if (pivot != k) Qc.row(k).swap(Qc.row(pivot));
    const cd u = Qc(k, k);
    w.qinv[k] = std::conj(u) / std::norm(u);
    for (int i = k + 1; i < p; ++i) Qc(i, k) *= w.qinv[k];
    for (int j = k + 1; j < p; ++j)
      for (int i = k + 1; i < p; ++i) Qc(i, j) -= Qc(i, k) * Qc(k, j);
  }
  auto solve = [&w, &Qc, p](auto& x) {  // x = (P^T L U)^-1 x, in place
    for (int k = 0; k < p; ++k) std::swap(x[k], x[w.qperm[k]]);
    for (int j = 0; j < p; ++j)
      for (int i = j + 1; i < p; ++i) x[i] -= Qc(i, j) * x[j];
    for (int j = p - 1; j >= 0; --j) {
      x[j] *= w.qinv[j];
      for (int i = 0; i < j; ++i) x[i] -= Qc(i, j) * x[j];
    }
  };
  w.qx = w.qb;
  solve(w.qx);
  w.qx.normalize();
  w.qw = w.qx;
  solve(w.qw);
  const double norm = w.qw.norm();
  if (!(norm > 0.0) || !std::isfinite(norm)) return false;
  w.qw /= norm;
  return true;
}

// alpha ~ beta ~ 0 (a real eigenvalue, where alpha and beta are diagonal entries of the Schur
// forms; a complex pair's beta is a product of two such entries and its alpha scales alike, so
// their size says nothing about singularity: a 0/0 of a singular pencil is real).
bool LinearModes::zero_pair(int i, double tol_a, double tol_b) const {
  const cd a = dyn_->engine->alpha(i);
  return a.imag() == 0.0 && std::abs(a) <= tol_a && std::abs(dyn_->engine->beta(i)) <= tol_b;
}

void LinearModes::classify(int i, bool singular, const Eigen::MatrixXd& Ru, double r_norm, double tol_a,
                           double tol_b) {
  Raw& r = raw_[i];
  Engine& engine = *dyn_->engine;
  const cd a = engine.alpha(i);
  const double b = engine.beta(i);
  r.is_true = false;
  r.metric_a = r.metric_b = 0.0;
  if (zero_pair(i, tol_a, tol_b)) {
    r.kind = 2;
    r.reason = kUndetermined;
    r.s = cd(kNaN, kNaN);
    return;
  }
  if (std::abs(b) <= rule_.infinite * std::abs(a)) {
    r.kind = 1;
    r.reason = kInfinite;
    r.s = cd(std::numeric_limits<double>::infinity(), 0.0);
    r.metric_a = std::abs(b) / std::abs(a);
    return;
  }
  r.kind = 0;
  const cd s_hat = a / b;
  r.s = w_ * s_hat;
  const Eigen::VectorXcd* z = engine.mode(s_hat, singular, Ru);
  if (z == nullptr) {
    r.reason = kNoMode;
    return;
  }
  // y: the leading Ru.cols() entries of z (all of z for a general pencil).
  const auto y = z->head(Ru.cols());
  const double y_norm = y.norm();
  // Second-order pencil: |z| = 1 and y' = s^ y, so a mode whose y and y' are both ~0 is the multipliers'.
  if (!general_ && y_norm * (1.0 + std::abs(s_hat)) <= rule_.massless) {
    r.reason = kMultiplierOnly;
    r.metric_a = y_norm * (1.0 + std::abs(s_hat));
    return;
  }
  dyn_->yr = y.real();  // contiguous copies: a product with a strided real() view would allocate one
  dyn_->yi = y.imag();
  judge(*dyn_, r, Ru, r_norm, Phi_q);
}

template <int N>
void LinearModes::judge(Work<N>& w, Raw& r, const typename Work<N>::MatQN& Ru, double r_norm,
                        const typename Work<N>::MatQQ& Phi) {
  const double y_norm = std::hypot(w.yr.norm(), w.yi.norm());
  product(w.dqr, Ru, w.yr);
  product(w.dqi, Ru, w.yi);
  const double dq_norm = std::hypot(w.dqr.norm(), w.dqi.norm());
  r.metric_a = y_norm > 0.0 ? dq_norm / (r_norm * y_norm) : 0.0;
  if (!(dq_norm > rule_.massless * r_norm * y_norm)) {
    r.reason = kMassless;
    return;
  }
  double violation = 0.0;
  if (nc_ > 0) {
    product(w.cr, Phi, w.dqr);
    product(w.ci, Phi, w.dqi);
    for (int k = 0; k < nc_; ++k)
      if (phi_row_norm_[k] > 0.0)
        violation += (w.cr[k] * w.cr[k] + w.ci[k] * w.ci[k]) / (phi_row_norm_[k] * phi_row_norm_[k]);
    violation = std::sqrt(violation) / dq_norm;
  }
  r.metric_b = violation;
  if (violation > rule_.constraint) {
    r.reason = kViolates;
    return;
  }
  r.reason = kTrue;
  r.is_true = true;
}

// ---------------------------------------------------------------------------------------------
// NaturalEquilibrium

NaturalEquilibrium::NaturalEquilibrium(const Model& model)
    : nat_(model),
      q0_(model.initial_q()),
      lambda0_(Eigen::VectorXd::Zero(model.nc())),
      r_(model.nq()),
      Phi_q_(model.nc(), model.nq()),
      Phi_qT_(model.nq(), model.nc()),
      K_geo_(model.nq(), model.nq()),
      qr_(model.nq(), model.nc()) {
  qr_.setThreshold(kRankTol);
  rows_.reserve(model.nc());
  factor();  // rank and independent rows are known at setup
  Gr_.resize(rank_, nat_.nq());
  S_.resize(rank_, rank_);
  // Sized by a first factorization: LLT(size) leaves its info member uninitialized, and assigning
  // it reads that (UBSan: invalid enum value).
  llt_.compute(Eigen::MatrixXd::Identity(rank_, rank_));
  rhs_.resize(rank_);
  lambda_r_.resize(rank_);
  setup_rank_ = rank_;
}

void NaturalEquilibrium::factor() {
  nat_.Phi_q(q0_, Phi_q_);
  Phi_qT_ = Phi_q_.transpose();
  rows_.clear();
  rank_ = 0;
  if (nat_.nc() == 0 || nat_.nq() == 0) return;
  qr_.compute(Phi_qT_);
  rank_ = static_cast<int>(qr_.rank());
  // Columns of Phi_q^T (rows of Phi_q) in pivot order: the first `rank` are independent.
  for (int i = 0; i < rank_; ++i) rows_.push_back(qr_.colsPermutation().indices()[i]);
  std::sort(rows_.begin(), rows_.end());
}

void NaturalEquilibrium::evaluate(const char* who) {
  factor();
  if (rank_ != setup_rank_)
    throw SolverError(fmt::format("{}: the rank of Phi_q changed from {} to {}", who, setup_rank_, rank_));
  // Phi_q^T lambda0 = Q in least squares over the independent rows G_r (the others get 0): the
  // normal equations (G_r G_r^T) lambda_r = G_r Q, G_r of full row rank. Which solution is taken does
  // not matter on the constraint manifold: a self-stress sigma (Phi_q^T sigma = 0) adds
  // sum sigma_k d2Phi_k/dq2, which vanishes on tangent vectors (differentiate sigma^T Phi = 0 twice).
  lambda0_.setZero();
  if (rank_ > 0) {
    for (int i = 0; i < rank_; ++i) Gr_.row(i) = Phi_q_.row(rows_[i]);
    S_.noalias() = Gr_ * Gr_.transpose();
    llt_.compute(S_);
    rhs_.noalias() = Gr_ * nat_.Q();
    lambda_r_ = llt_.solve(rhs_);
    for (int i = 0; i < rank_; ++i) lambda0_[rows_[i]] = lambda_r_[i];
  }
  r_ = nat_.Q();
  r_.noalias() -= Phi_qT_ * lambda0_;
  const double q_norm = nat_.Q().norm(), r_norm = r_.norm();
  residual_ = q_norm > 0.0 ? r_norm / q_norm : r_norm;
  if (!(residual_ <= kEquilibriumTol))
    throw SolverError(fmt::format(
        "{}: the initial configuration is not a static equilibrium (|Q - Phi_q^T lambda0| = {:.3g} |Q| > {:g} |Q|)",
        who, residual_, kEquilibriumTol));
  K_geo_.setZero();
  nat_.add_Phi_qq_times(lambda0_, K_geo_);
}

}  // namespace mbs
