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

double asymmetry(const Eigen::MatrixXd& X) {
  double sum = 0.0;
  for (int j = 0; j < X.cols(); ++j)
    for (int i = j + 1; i < X.rows(); ++i) sum += (X(i, j) - X(j, i)) * (X(i, j) - X(j, i));
  return std::sqrt(2.0 * sum);
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
      ldlt_(n),
      W_((damped ? 3 : 2) * n + m, n),
      svd_(W_.rows(), n, Eigen::ComputeFullV),
      raw_(size_), order_(size_), magnitude_(size_), why_cache_(size_),
      phi_row_norm_(nc), dqr_(nq), dqi_(nq), cr_(nc), ci_(nc) {
  size_reduced(n);  // no absent direction expected: the pencil of the full size
}

LinearModes::LinearModes(GeneralPencil, int N, int nq, int nc, ModeRule rule)
    : A(Eigen::MatrixXd::Zero(N, N)),
      B(Eigen::MatrixXd::Zero(N, N)),
      R(Eigen::MatrixXd::Zero(nq, N)),
      Phi_q(Eigen::MatrixXd::Zero(nc, nq)),
      n_(0), m_(0), nq_(nq), nc_(nc), size_(N), damped_(false), general_(true), rule_(rule),
      raw_(N), order_(N), magnitude_(N), why_cache_(N),
      phi_row_norm_(nc), dqr_(nq), dqi_(nq), cr_(nc), ci_(nc) {
  nr_ = 0;
  yr_.resize(N);
  yi_.resize(N);
  engine_ = std::make_unique<Engine>(N);
}

LinearModes::~LinearModes() = default;

void LinearModes::size_reduced(int nr) {
  if (nr == nr_) return;
  nr_ = nr;
  Y_.resize(n_, nr);
  Mr_.resize(nr, nr);
  Kr_.resize(nr, nr);
  Cr_.resize(damped_ ? nr : 0, damped_ ? nr : 0);
  Gr_.resize(m_, nr);
  Rr_.resize(nq_, nr);
  tmp_.resize(n_, nr);
  yr_.resize(nr);
  yi_.resize(nr);
  engine_ = std::make_unique<Engine>(2 * nr + m_);
  // The manifold path's workspace (p = nr - m coordinates; none if G has more rows than nr).
  const int p = std::max(nr - m_, 0), pc = damped_ ? p : 0;
  GnT_.resize(nr, m_);
  Qg_.resize(nr, nr);
  T_.resize(nr, p);
  Mt_.resize(p, p);
  Kt_.resize(p, p);
  Ct_.resize(pc, pc);
  Sk_.resize(p, p);
  Sc_.resize(p, p);
  Qs_.resize(p, p);
  X_.resize(p, p);
  U_.resize(p, p);
  TU_.resize(nr, p);
  Rw_.resize(nq_, p);
  gqr_ = Eigen::HouseholderQR<Eigen::MatrixXd>(nr, m_);
  mllt_.compute(Eigen::MatrixXd::Identity(p, p));  // sizes it (LLT(size) leaves info uninitialized)
  tri_ = Eigen::Tridiagonalization<Eigen::MatrixXd>(std::max(p, 1));
  // Made in place: Eigen's sizing constructor leaves its status uninitialized, so moving a
  // temporary into a member reads an indeterminate enum (UBSan flags it).
  sym_ = std::make_unique<Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd>>(std::max(p, 1));
  hwork_.resize(nr);
  pwork_.resize(p);
  diag_.resize(p);
  subdiag_.resize(std::max(p - 1, 0));
  ur_.resize(p);
  ui_.resize(p);
  Qc_.resize(p, p);
  qperm_.resize(p);
  qinv_.resize(p);
  qb_.resize(p);
  qx_.resize(p);
  qw_.resize(p);
  // A fixed, irregular start vector for inverse iteration, as Engine's.
  for (int k = 0; k < p; ++k) qb_[k] = cd(1.0 + 0.37 * std::cos(1.3 * k + 0.2), 0.5 * std::sin(0.7 * k + 1.1));
  if (p > 0) qb_.normalize();
  companion_.reset();
  if (damped_ && p > 0) companion_ = std::make_unique<Engine>(2 * p);
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
// block at unit norm).
int LinearModes::find_absent_directions() {
  ldlt_.compute(M);
  const auto& d = ldlt_.vectorD();
  const double d_max = d.cwiseAbs().maxCoeff();
  if (ldlt_.info() == Eigen::Success && d.minCoeff() > rule_.absent * d_max) return 0;  // M positive definite
  auto unit = [](const Eigen::MatrixXd& X) {
    const double x = X.norm();
    return x > 0.0 ? 1.0 / x : 0.0;
  };
  int row = 0;
  W_.middleRows(row, n_) = unit(M) * M;
  row += n_;
  W_.middleRows(row, n_) = unit(K) * K;
  row += n_;
  if (damped_) {
    W_.middleRows(row, n_) = unit(C) * C;
    row += n_;
  }
  for (int k = 0; k < m_; ++k) {
    const double g = G.row(k).norm();
    W_.row(row + k) = (g > 0.0 ? 1.0 / g : 0.0) * G.row(k);
  }
  svd_.compute(W_);
  const auto& sv = svd_.singularValues();
  int absent = 0;
  while (absent < n_ && sv[n_ - 1 - absent] <= rule_.absent * sv[0]) ++absent;
  return absent;
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
    engine_->build(A, B, a_norm, b_norm);
  } else {
    const double m_norm = M.norm();
    if (!(m_norm > 0.0)) throw SolverError("linearization: the mass matrix is zero");
    // 1. Deflate absent directions: y = Y y_r on their orthogonal complement.
    absent_ = find_absent_directions();
    const int nr = n_ - absent_;
    size_reduced(nr);
    const Eigen::MatrixXd *Mu = &M, *Ku = &K, *Cu = damped_ ? &C : nullptr, *Gu = &G;
    if (absent_ > 0) {
      Y_ = svd_.matrixV().leftCols(nr);
      tmp_.noalias() = M * Y_;
      Mr_.noalias() = Y_.transpose() * tmp_;
      tmp_.noalias() = K * Y_;
      Kr_.noalias() = Y_.transpose() * tmp_;
      if (damped_) {
        tmp_.noalias() = C * Y_;
        Cr_.noalias() = Y_.transpose() * tmp_;
        Cu = &Cr_;
      }
      Gr_.noalias() = G * Y_;
      Rr_.noalias() = R * Y_;
      Mu = &Mr_, Ku = &Kr_, Gu = &Gr_, Ru = &Rr_;
    }
    N = 2 * nr + m_;
    const double k_norm = Ku->norm(), mr_norm = Mu->norm();
    w_ = k_norm > 0.0 && mr_norm > 0.0 ? std::sqrt(k_norm / mr_norm) : 1.0;
    // 2. On the constraint manifold when the pencil allows; otherwise the scaled pencil for QZ.
    if (nr > 0) {
      manifold = rule_.manifold && manifold_modes(*Mu, Cu, *Ku, *Gu, *Ru);
      if (!manifold) engine_->build(*Mu, Cu, *Ku, *Gu, w_, mr_norm);
    }
  }
  // 3. QZ, and each eigenvalue judged by its mode.
  if (manifold) {
    // raw_[0, N) written by manifold_modes()
  } else if (N - m_ > 0 || general_) {
    path_ = static_cast<int>(Path::kQZ);
    if (!engine_->qz()) throw SolverError("linearization: QZ did not converge");
    const double r_norm = Ru->norm();
    const double tol_a = rule_.singular * engine_->norm_A(), tol_b = rule_.singular * engine_->norm_B();
    // A pair alpha ~ beta ~ 0 left after deflation: a singular pencil of another kind; modes then
    // come from null spaces.
    bool singular = false;
    for (int i = 0; i < N; ++i) singular = singular || zero_pair(i, tol_a, tol_b);
    for (int i = 0; i < N; ++i) {
      classify(i, singular, *Ru, r_norm, tol_a, tol_b);
      // QZ returns a complex pair as consecutive, exactly conjugate alphas with one beta; the
      // partner's mode is the conjugate vector, with the same judgement.
      if (raw_[i].kind == 0 && raw_[i].s.imag() != 0.0 && i + 1 < N &&
          engine_->alpha(i + 1) == std::conj(engine_->alpha(i)) && engine_->beta(i + 1) == engine_->beta(i)) {
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

// The manifold path (see the file comment). Writes raw_[0, 2 nr + m) and returns true, or returns
// false when the pencil is not of its kind: a dependent row of G, or T^T M T not positive definite.
bool LinearModes::manifold_modes(const Eigen::MatrixXd& Mu, const Eigen::MatrixXd* Cu, const Eigen::MatrixXd& Ku,
                                 const Eigen::MatrixXd& Gu, const Eigen::MatrixXd& Ru) {
  const int nr = static_cast<int>(Mu.rows()), p = nr - m_;
  if (p < 0) return false;
  // 1. y = T u: T the orthonormal complement of the rows of G (Householder QR of G^T, rows at unit
  // norm so that the pivots measure dependence). Without multipliers T = I, and nothing is copied.
  const Eigen::MatrixXd *Mp = &Mu, *Kp = &Ku, *Cp = Cu;
  if (m_ > 0) {
    for (int k = 0; k < m_; ++k) {
      const double g = Gu.row(k).norm();
      if (!(g > 0.0)) return false;
      GnT_.col(k) = Gu.row(k).transpose() / g;
    }
    gqr_.compute(GnT_);
    for (int k = 0; k < m_; ++k)
      if (!(std::abs(gqr_.matrixQR()(k, k)) > kRankTol)) return false;
    gqr_.householderQ().evalTo(Qg_, hwork_);
    T_ = Qg_.rightCols(p);
    TU_.noalias() = Mu * T_;
    Mt_.noalias() = T_.transpose() * TU_;
    TU_.noalias() = Ku * T_;
    Kt_.noalias() = T_.transpose() * TU_;
    if (Cu != nullptr) {
      TU_.noalias() = *Cu * T_;
      Ct_.noalias() = T_.transpose() * TU_;
      Cp = &Ct_;
    }
    Mp = &Mt_, Kp = &Kt_;
  }
  // 2. Cholesky M_t = L L^T, with the pivot test that calls a mass direction absent.
  if (p > 0) {
    mllt_.compute(*Mp);
    if (mllt_.info() != Eigen::Success) return false;
    const auto d = mllt_.matrixLLT().diagonal();
    if (!(d.minCoeff() * d.minCoeff() > rule_.absent * d.maxCoeff() * d.maxCoeff())) return false;
  }
  const double r_norm = Ru.norm();
  // 3. S_K = L^-1 K_t L^-T (and S_C): w = L^T u turns M_t into I.
  auto congruence = [this, p](const Eigen::MatrixXd& X, Eigen::MatrixXd& S) {
    S = X;
    if (p == 0) return;
    mllt_.matrixL().solveInPlace(S);  // L^-1 X
    S.transposeInPlace();
    mllt_.matrixL().solveInPlace(S);  // L^-1 X^T L^-T
    S.transposeInPlace();
  };
  congruence(*Kp, Sk_);
  const bool damped = Cp != nullptr && Cp->norm() > 0.0;
  const double big = w_ / rule_.infinite;  // |s| above this is infinite, as |beta| <= infinite |alpha| is for QZ
  if (!damped && asymmetry(*Kp) <= kSymmetryTol * Kp->norm()) {
    // 4a. Undamped, symmetric: S_K x = lambda x, s = +-sqrt(-lambda), the mode y = T L^-T x real.
    path_ = static_cast<int>(Path::kSymmetric);
    if (p > 0) {
      for (int j = 0; j < p; ++j)
        for (int i = j + 1; i < p; ++i) Sk_(i, j) = Sk_(j, i) = 0.5 * (Sk_(i, j) + Sk_(j, i));
      tri_.compute(Sk_);
      diag_ = tri_.diagonal();
      subdiag_ = tri_.subDiagonal();
      tri_.matrixQ().evalTo(Qs_, pwork_);
      sym_->computeFromTridiagonal(diag_, subdiag_, Eigen::ComputeEigenvectors);
      if (sym_->info() != Eigen::Success) throw SolverError("linearization: the symmetric eigensolver did not converge");
      X_.noalias() = Qs_ * sym_->eigenvectors();
      U_ = X_;
      mllt_.matrixU().solveInPlace(U_);  // L^-T X
      if (m_ > 0) TU_.noalias() = T_ * U_;
    }
    const Eigen::MatrixXd& Y = m_ > 0 ? TU_ : U_;
    for (int k = 0; k < p; ++k) {
      const double lambda = sym_->eigenvalues()[k];
      const cd s = lambda >= 0.0 ? cd(0.0, std::sqrt(lambda)) : cd(std::sqrt(-lambda), 0.0);
      Raw& r = raw_[2 * k];
      r = Raw{s, 0, false, 0.0, 0.0, kTrue};
      if (std::abs(s) > big) {
        r = Raw{cd(std::numeric_limits<double>::infinity(), 0.0), 1, false, w_ / std::abs(s), 0.0, kInfinite};
      } else {
        yr_ = Y.col(k);
        yi_.setZero();
        judge(r, Ru, r_norm);
      }
      raw_[2 * k + 1] = r;  // the partner -s, written so that no component becomes -0
      if (r.kind == 0) raw_[2 * k + 1].s = lambda >= 0.0 ? std::conj(s) : cd(-s.real(), 0.0);
    }
  } else {
    // 4b. Damped (or K unsymmetric): the companion matrix [0 I; -S_K -S_C] in scaled time, a
    // standard eigenproblem (Hessenberg QR), modes by inverse iteration; y = T L^-T w.
    path_ = static_cast<int>(Path::kCompanion);
    if (p > 0) {
      if (damped) congruence(*Cp, Sc_);
      if (!companion_ || companion_->size() != 2 * p) companion_ = std::make_unique<Engine>(2 * p);
      Eigen::MatrixXd& Ac = companion_->a();
      Ac.setZero();
      Ac.block(0, p, p, p).setIdentity();
      Ac.block(p, 0, p, p) = (-1.0 / (w_ * w_)) * Sk_;
      if (damped) Ac.block(p, p, p, p) = (-1.0 / w_) * Sc_;
      if (!companion_->standard()) throw SolverError("linearization: the companion eigensolver did not converge");
      U_.setIdentity();
      mllt_.matrixU().solveInPlace(U_);  // L^-T
      if (m_ > 0) TU_.noalias() = T_ * U_;
    }
    const Eigen::MatrixXd& W = m_ > 0 ? TU_ : U_;  // y = W w
    if (p > 0) Rw_.noalias() = Ru * W;
    for (int i = 0; i < 2 * p; ++i) {
      const cd s_hat = companion_->alpha(i);
      Raw& r = raw_[i];
      r = Raw{w_ * s_hat, 0, false, 0.0, 0.0, kTrue};
      if (std::abs(r.s) > big) {
        r = Raw{cd(std::numeric_limits<double>::infinity(), 0.0), 1, false, w_ / std::abs(r.s), 0.0, kInfinite};
      } else if (quadratic_mode(r.s, damped)) {
        ur_ = qw_.real();
        ui_ = qw_.imag();
        yr_.noalias() = W * ur_;
        yi_.noalias() = W * ui_;
        judge(r, Ru, r_norm);
      } else if (const Eigen::VectorXcd* z = companion_->mode(s_hat, false, Rw_)) {
        ur_ = z->head(p).real();
        ui_ = z->head(p).imag();
        yr_.noalias() = W * ur_;
        yi_.noalias() = W * ui_;
        judge(r, Ru, r_norm);
      } else {
        r.reason = kNoMode;
      }
      // Pairs come as consecutive, exactly conjugate eigenvalues; the partner's mode is the conjugate.
      if (r.kind == 0 && r.s.imag() != 0.0 && i + 1 < 2 * p && companion_->alpha(i + 1) == std::conj(s_hat)) {
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
bool LinearModes::quadratic_mode(cd s, bool damped) {
  const int p = static_cast<int>(Qc_.rows());
  const cd sigma = s + 1e-10 * (w_ + std::hypot(s.real(), s.imag())) * cd(M_SQRT1_2, M_SQRT1_2);
  Qc_ = Sk_.cast<cd>();
  if (damped) Qc_ += sigma * Sc_.cast<cd>();
  Qc_.diagonal().array() += sigma * sigma;
  auto cabs1 = [](cd z) { return std::abs(z.real()) + std::abs(z.imag()); };
  // The pivots' reciprocals, conj(u) / |u|^2 (no library complex division; |u| is far from
  // overflow here, the matrix being O(|s|^2) and shifted off singular by 1e-10).
  for (int k = 0; k < p; ++k) {
    int pivot = k;
    for (int i = k + 1; i < p; ++i)
      if (cabs1(Qc_(i, k)) > cabs1(Qc_(pivot, k))) pivot = i;
    qperm_[k] = pivot;
    if (!(cabs1(Qc_(pivot, k)) > 0.0)) return false;  // exactly singular: the shift prevents it
    if (pivot != k) Qc_.row(k).swap(Qc_.row(pivot));
    const cd u = Qc_(k, k);
    qinv_[k] = std::conj(u) / std::norm(u);
    for (int i = k + 1; i < p; ++i) Qc_(i, k) *= qinv_[k];
    for (int j = k + 1; j < p; ++j)
      for (int i = k + 1; i < p; ++i) Qc_(i, j) -= Qc_(i, k) * Qc_(k, j);
  }
  auto solve = [this, p](Eigen::VectorXcd& x) {  // x = (P^T L U)^-1 x, in place
    for (int k = 0; k < p; ++k) std::swap(x[k], x[qperm_[k]]);
    for (int j = 0; j < p; ++j)
      for (int i = j + 1; i < p; ++i) x[i] -= Qc_(i, j) * x[j];
    for (int j = p - 1; j >= 0; --j) {
      x[j] *= qinv_[j];
      for (int i = 0; i < j; ++i) x[i] -= Qc_(i, j) * x[j];
    }
  };
  qx_ = qb_;
  solve(qx_);
  qx_.normalize();
  qw_ = qx_;
  solve(qw_);
  const double norm = qw_.norm();
  if (!(norm > 0.0) || !std::isfinite(norm)) return false;
  qw_ /= norm;
  return true;
}

// alpha ~ beta ~ 0 (a real eigenvalue, where alpha and beta are diagonal entries of the Schur
// forms; a complex pair's beta is a product of two such entries and its alpha scales alike, so
// their size says nothing about singularity: a 0/0 of a singular pencil is real).
bool LinearModes::zero_pair(int i, double tol_a, double tol_b) const {
  const cd a = engine_->alpha(i);
  return a.imag() == 0.0 && std::abs(a) <= tol_a && std::abs(engine_->beta(i)) <= tol_b;
}

void LinearModes::classify(int i, bool singular, const Eigen::MatrixXd& Ru, double r_norm, double tol_a,
                           double tol_b) {
  Raw& r = raw_[i];
  const cd a = engine_->alpha(i);
  const double b = engine_->beta(i);
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
  const Eigen::VectorXcd* z = engine_->mode(s_hat, singular, Ru);
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
  yr_ = y.real();  // contiguous copies: a product with a strided real() view would allocate one
  yi_ = y.imag();
  judge(r, Ru, r_norm);
}

void LinearModes::judge(Raw& r, const Eigen::MatrixXd& Ru, double r_norm) {
  const double y_norm = std::hypot(yr_.norm(), yi_.norm());
  dqr_.noalias() = Ru * yr_;
  dqi_.noalias() = Ru * yi_;
  const double dq_norm = std::hypot(dqr_.norm(), dqi_.norm());
  r.metric_a = y_norm > 0.0 ? dq_norm / (r_norm * y_norm) : 0.0;
  if (!(dq_norm > rule_.massless * r_norm * y_norm)) {
    r.reason = kMassless;
    return;
  }
  double violation = 0.0;
  if (nc_ > 0) {
    cr_.noalias() = Phi_q * dqr_;
    ci_.noalias() = Phi_q * dqi_;
    for (int k = 0; k < nc_; ++k)
      if (phi_row_norm_[k] > 0.0)
        violation += (cr_[k] * cr_[k] + ci_[k] * ci_[k]) / (phi_row_norm_[k] * phi_row_norm_[k]);
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
