#include "common/linear_modes.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <limits>

#include "core/formulation.hpp"  // SolverError

namespace mbs {

using cd = std::complex<double>;

// ---------------------------------------------------------------------------------------------
// The QZ and inverse-iteration workspace.

struct LinearModes::Engine {
  // A pencil of size N; R (in mode()) maps z's leading R.cols() entries to point displacements.
  explicit Engine(int N)
      : A_(N, N), B_(N, N), ges_(N), P_(N, N), lu_(N), b_(N), x_(N), z_(N), svd_(N, N, Eigen::ComputeFullV), c_(N) {
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
  Eigen::VectorXcd alphas_;
  Eigen::VectorXd betas_;
  Eigen::MatrixXcd P_;
  Eigen::PartialPivLU<Eigen::MatrixXcd> lu_;
  Eigen::VectorXcd b_, x_, z_;
  Eigen::JacobiSVD<Eigen::MatrixXcd> svd_;
  Eigen::VectorXcd c_;
};

namespace {

enum Reason { kTrue, kInfinite, kUndetermined, kAbsent, kNoMode, kMultiplierOnly, kMassless, kViolates };

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

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
      raw_(size_), order_(size_),
      phi_row_norm_(nc), dqr_(nq), dqi_(nq), cr_(nc), ci_(nc) {
  size_reduced(n);  // no absent direction expected: the pencil of the full size
}

LinearModes::LinearModes(GeneralPencil, int N, int nq, int nc, ModeRule rule)
    : A(Eigen::MatrixXd::Zero(N, N)),
      B(Eigen::MatrixXd::Zero(N, N)),
      R(Eigen::MatrixXd::Zero(nq, N)),
      Phi_q(Eigen::MatrixXd::Zero(nc, nq)),
      n_(0), m_(0), nq_(nq), nc_(nc), size_(N), damped_(false), general_(true), rule_(rule),
      raw_(N), order_(N),
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
    // 2. The scaled pencil.
    const double k_norm = Ku->norm(), mr_norm = Mu->norm();
    w_ = k_norm > 0.0 && mr_norm > 0.0 ? std::sqrt(k_norm / mr_norm) : 1.0;
    if (nr > 0) engine_->build(*Mu, Cu, *Ku, *Gu, w_, mr_norm);
  }
  // 3. QZ, and each eigenvalue judged by its mode.
  if (N - m_ > 0 || general_) {
    if (!engine_->qz()) throw SolverError("linearization: QZ did not converge");
    const double r_norm = Ru->norm();
    for (int k = 0; k < nc_; ++k) phi_row_norm_[k] = Phi_q.row(k).norm();
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
    for (int i = 0; i < N; ++i) raw_[i] = Raw{cd(kNaN, kNaN), 2, false, 0.0, 0.0, kUndetermined};
  }
  for (int i = N; i < size_; ++i) raw_[i] = Raw{cd(kNaN, kNaN), 2, false, 0.0, 0.0, kAbsent};  // two per absent direction

  // 4. Insertion sort (stable, no allocation): finite by |s|, ties (to 1e-9) by imaginary then
  // real part; then infinite; then undetermined.
  for (int i = 0; i < size_; ++i) order_[i] = i;
  auto less = [this](int i, int j) {
    const Raw &a = raw_[i], &b = raw_[j];
    if (a.kind != b.kind) return a.kind < b.kind;
    if (a.kind != 0) return false;
    const double ma = std::abs(a.s), mb = std::abs(b.s), tol = 1e-9 * std::max(ma, mb);
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

  // 5. Output, with the reason of each judgement (formatted into the reserved strings).
  char buf[200];
  for (int k = 0; k < size_; ++k) {
    const Raw& r = raw_[order_[k]];
    Eigenvalue& e = out[k];
    e.s = r.s;
    e.finite = r.kind == 0;
    e.is_true = r.is_true;
    fmt::format_to_n_result<char*> res{buf, 0};
    switch (r.reason) {
      case kTrue:
        res = fmt::format_to_n(buf, sizeof buf, "true: moves mass, satisfies Phi_q dq = 0 ({:.1e} |dq|)", r.metric_b);
        break;
      case kInfinite:
        res = fmt::format_to_n(buf, sizeof buf, "spurious: infinite (|beta/alpha| = {:.1e} on the scaled pencil)",
                               r.metric_a);
        break;
      case kUndetermined:
        res = fmt::format_to_n(buf, sizeof buf, "spurious: undetermined, alpha ~ beta ~ 0: singular pencil");
        break;
      case kAbsent:
        res = fmt::format_to_n(buf, sizeof buf,
                               "spurious: undetermined (0/0), a coordinate direction with no mass, stiffness or "
                               "constraint (an 'infinite' pair of a singular mass matrix)");
        break;
      case kNoMode:
        res = fmt::format_to_n(buf, sizeof buf, "spurious: no mode found (no finite null vector of A - sB)");
        break;
      case kMultiplierOnly:
        res = fmt::format_to_n(buf, sizeof buf, "spurious: multiplier-only mode (|y| (1 + |s|/w) = {:.1e} |z|)",
                               r.metric_a);
        break;
      case kMassless:
        res = fmt::format_to_n(buf, sizeof buf, "spurious: moves no mass (|R y| = {:.1e} |R| |y|)", r.metric_a);
        break;
      case kViolates:
        res = fmt::format_to_n(buf, sizeof buf, "spurious: violates the constraints (|Phi_q dq| = {:.1e} |dq|)",
                               r.metric_b);
        break;
    }
    e.why.assign(buf, std::min<size_t>(res.size, sizeof buf));
  }
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
