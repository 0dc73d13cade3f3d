#include "common/sparse_natural.hpp"

#include <klu.h>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "common/independent_rows.hpp"
#include "core/formulation.hpp"

namespace mbs {

std::string sparse_unsupported_reason(const Model& model) {
  for (const auto& e : model.elements) {
    if (e->role() == ElementRole::kForce)
      return fmt::format("force element {} ({}): its Jacobians are dense", e->name, e->kind());
    if (e->role() == ElementRole::kContact) return fmt::format("contact {}: contacts run dense", e->name);
  }
  return "";
}

bool sparse_path(LinearAlgebra la, const Model& model, int min_coordinates) {
  switch (la) {
    case LinearAlgebra::kDense:
      return false;
    case LinearAlgebra::kSparse:
      if (const std::string why = sparse_unsupported_reason(model); !why.empty())
        throw SolverError("the sparse linear algebra does not take " + why);
      return true;
    case LinearAlgebra::kAuto:
    default:
      return model.nq() >= min_coordinates && sparse_unsupported_reason(model).empty();
  }
}

namespace {

// Calls f(column, value) for every structurally non-zero entry of row r of Phi_q, in a fixed order
// (the dense NaturalCoordinates::Phi_q's terms). kValues = false: structure only (q unused, value 0).
// An entry of d1's block t is structural unless d2 is a constant with a zero in that component (a
// coincidence row's e_c), and likewise for d2's blocks.
template <bool kValues, typename F>
void visit_row(const ConstraintRow& r, const Eigen::Ref<const Eigen::VectorXd>* q, int dim, F&& f) {
  Combo::Small d1 = Combo::Small::Zero(dim), d2 = Combo::Small::Zero(dim);
  if constexpr (kValues) {
    d1 = r.d1.eval(*q);
    if (!r.same) d2 = r.d2.eval(*q);
  }
  if (r.same) {
    for (int t = 0; t < r.d1.n; ++t)
      for (int c = 0; c < dim; ++c) f(r.d1.off[t] + c, 2.0 * r.s * r.d1.w[t] * d1[c]);
    return;
  }
  for (int t = 0; t < r.d1.n; ++t)
    for (int c = 0; c < dim; ++c)
      if (r.d2.n > 0 || r.d2.c[c] != 0.0) f(r.d1.off[t] + c, r.s * r.d1.w[t] * d2[c]);
  for (int t = 0; t < r.d2.n; ++t)
    for (int c = 0; c < dim; ++c)
      if (r.d1.n > 0 || r.d1.c[c] != 0.0) f(r.d2.off[t] + c, r.s * r.d2.w[t] * d1[c]);
}

// Calls f(i, j, coef) for the entries of d2Phi/dq2 of row r divided by nothing: the dense
// add_Phi_qq_times adds mu s w_t w_u to (i, j) and to (j, i) for every pair of blocks, component c.
template <typename F>
void visit_hessian(const ConstraintRow& r, int dim, F&& f) {
  const Combo& d2 = r.same ? r.d1 : r.d2;
  for (int t = 0; t < r.d1.n; ++t)
    for (int u = 0; u < d2.n; ++u) {
      const double x = r.s * r.d1.w[t] * d2.w[u];
      for (int c = 0; c < dim; ++c) {
        f(r.d1.off[t] + c, d2.off[u] + c, x);
        f(d2.off[u] + c, r.d1.off[t] + c, x);
      }
    }
}

std::vector<int> all_rows(int nc) {
  std::vector<int> rows(nc);
  for (int k = 0; k < nc; ++k) rows[k] = k;
  return rows;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// SparseJacobian

SparseJacobian::SparseJacobian(const NaturalCoordinates& nat) : SparseJacobian(nat, all_rows(nat.nc())) {}

SparseJacobian::SparseJacobian(const NaturalCoordinates& nat, std::vector<int> rows)
    : nat_(&nat), rows_(std::move(rows)), J_(static_cast<int>(rows_.size()), nat.nq()) {
  const int dim = nat.dim();
  std::vector<Eigen::Triplet<double, int>> entries;
  std::vector<std::pair<int, int>> visits;  // (row, column) in evaluate()'s order
  for (size_t k = 0; k < rows_.size(); ++k)
    visit_row<false>(nat.rows()[rows_[k]], nullptr, dim, [&](int col, double) {
      entries.emplace_back(static_cast<int>(k), col, 1.0);
      visits.emplace_back(static_cast<int>(k), col);
    });
  J_.setFromTriplets(entries.begin(), entries.end());
  J_.makeCompressed();
  slot_.reserve(visits.size());
  const int* outer = J_.outerIndexPtr();
  const int* inner = J_.innerIndexPtr();
  for (const auto& [k, col] : visits) {
    const int* p = std::lower_bound(inner + outer[k], inner + outer[k + 1], col);
    slot_.push_back(static_cast<int>(p - inner));
  }
  std::fill(J_.valuePtr(), J_.valuePtr() + J_.nonZeros(), 0.0);
}

void SparseJacobian::evaluate(const Eigen::Ref<const Eigen::VectorXd>& q) {
  double* val = J_.valuePtr();
  std::fill(val, val + J_.nonZeros(), 0.0);
  const int dim = nat_->dim();
  const int* slot = slot_.data();
  for (const int r : rows_) visit_row<true>(nat_->rows()[r], &q, dim, [&](int, double x) { val[*slot++] += x; });
}

// ---------------------------------------------------------------------------------------------
// SparseSystem

// KLU state of an unsymmetric SparseSystem. A refactorization keeps the pivot sequence of the last
// pivoting factorization; it is trusted while its crude reciprocal condition estimate (smallest over
// largest |U_kk|) stays within kStalePivots of that factorization's, else the matrix is factored
// again with pivoting (the pivots chosen for one configuration of a mechanism can become poor once
// it has turned).
struct SparseSystem::Klu {
  static constexpr double kStalePivots = 1e-3;
  klu_common common;
  klu_symbolic* symbolic = nullptr;
  klu_numeric* numeric = nullptr;
  double rcond_pivoted = 0.0;  // klu_rcond of the last pivoting factorization

  bool factorize(SparseSystem::Matrix& a) {
    int* ap = a.outerIndexPtr();
    int* ai = a.innerIndexPtr();
    double* ax = a.valuePtr();
    if (numeric && klu_refactor(ap, ai, ax, symbolic, numeric, &common) && klu_rcond(symbolic, numeric, &common) &&
        common.rcond >= kStalePivots * rcond_pivoted)
      return true;
    if (numeric) klu_free_numeric(&numeric, &common);
    numeric = klu_factor(ap, ai, ax, symbolic, &common);
    if (!numeric || !klu_rcond(symbolic, numeric, &common)) return false;
    rcond_pivoted = common.rcond;
    return common.status == KLU_OK;
  }
  ~Klu() {
    if (numeric) klu_free_numeric(&numeric, &common);
    if (symbolic) klu_free_symbolic(&symbolic, &common);
  }
};

void SparseSystem::KluFree::operator()(Klu* k) const { delete k; }

SparseSystem::SparseSystem(int n, const std::vector<std::pair<int, int>>& entries, bool symmetric)
    : n_(n), symmetric_(symmetric), perm_(n), A_(n, n), diag_(n), bp_(n), xp_(n) {
  for (int i = 0; i < n; ++i) perm_[i] = i;
  std::vector<Eigen::Triplet<double, int>> t;
  t.reserve(2 * entries.size() + n);
  for (int i = 0; i < n; ++i) t.emplace_back(i, i, 1.0);
  for (const auto& [i, j] : entries) {
    t.emplace_back(i, j, 1.0);
    if (symmetric) t.emplace_back(j, i, 1.0);
  }
  if (symmetric && n > 0) {  // fill-reducing order of the full symmetric pattern, as SimplicialLDLT's
    Matrix full(n, n);
    full.setFromTriplets(t.begin(), t.end());
    Eigen::PermutationMatrix<Eigen::Dynamic, Eigen::Dynamic, int> p_inv;
    Eigen::AMDOrdering<int>()(full, p_inv);
    const Eigen::PermutationMatrix<Eigen::Dynamic, Eigen::Dynamic, int> p = p_inv.inverse();
    for (int i = 0; i < n; ++i) perm_[i] = p.indices()[i];
    std::vector<Eigen::Triplet<double, int>> upper;
    upper.reserve(t.size());
    for (const auto& e : t) {
      const int a = perm_[e.row()], b = perm_[e.col()];
      if (a <= b) upper.emplace_back(a, b, 1.0);
    }
    t.swap(upper);
  }
  A_.setFromTriplets(t.begin(), t.end());
  A_.makeCompressed();
  for (int i = 0; i < n; ++i) diag_[i] = slot(i, i);
  set_zero();
  if (symmetric) {
    ldlt_.analyzePattern(A_);
  } else if (n > 0) {
    klu_.reset(new Klu);
    klu_defaults(&klu_->common);
    klu_->symbolic = klu_analyze(n, A_.outerIndexPtr(), A_.innerIndexPtr(), &klu_->common);
    if (!klu_->symbolic) throw std::runtime_error("SparseSystem: KLU's analysis failed");
  }
}

int SparseSystem::slot(int i, int j) const {
  int a = i, b = j;
  if (symmetric_) {
    a = perm_[i];
    b = perm_[j];
    if (a > b) return -1;
  }
  const int* outer = A_.outerIndexPtr();
  const int* inner = A_.innerIndexPtr();
  const int* p = std::lower_bound(inner + outer[b], inner + outer[b + 1], a);
  return p != inner + outer[b + 1] && *p == a ? static_cast<int>(p - inner) : -1;
}

void SparseSystem::set_zero() { std::fill(A_.valuePtr(), A_.valuePtr() + A_.nonZeros(), 0.0); }

void SparseSystem::multiply(const Eigen::VectorXd& x, Eigen::VectorXd& y) {
  if (!symmetric_) {
    y.noalias() = A_ * x;
    return;
  }
  for (int i = 0; i < n_; ++i) bp_[perm_[i]] = x[i];
  xp_.setZero();
  const int* outer = A_.outerIndexPtr();
  const int* inner = A_.innerIndexPtr();
  const double* val = A_.valuePtr();
  for (int c = 0; c < n_; ++c)
    for (int p = outer[c]; p < outer[c + 1]; ++p) {
      const int r = inner[p];
      xp_[r] += val[p] * bp_[c];
      if (r != c) xp_[c] += val[p] * bp_[r];
    }
  for (int i = 0; i < n_; ++i) y[i] = xp_[perm_[i]];
}

bool SparseSystem::factorize(double shift) {
  if (n_ == 0) return ok_ = true;
  if (symmetric_) {
    ldlt_.setShift(shift);
    ldlt_.factorize_in_place(A_);
    ok_ = ldlt_.info() == Eigen::Success;
  } else {
    ok_ = klu_->factorize(A_);
  }
  return ok_;
}

void SparseSystem::solve(const Eigen::VectorXd& b, Eigen::VectorXd& x) {
  if (n_ == 0) return;
  if (!symmetric_) {
    x = b;
    klu_solve(klu_->symbolic, klu_->numeric, n_, 1, x.data(), &klu_->common);
    return;
  }
  for (int i = 0; i < n_; ++i) bp_[perm_[i]] = b[i];
  xp_ = ldlt_.solve(bp_);
  for (int i = 0; i < n_; ++i) x[i] = xp_[perm_[i]];
}

double SparseSystem::min_pivot_ratio() const {
  double r = std::numeric_limits<double>::infinity();
  const Eigen::VectorXd& d = ldlt_.diagonal();
  for (int k = 0; k < n_; ++k) r = std::min(r, d[k] / std::abs(A_.valuePtr()[diag_[k]]));
  return r;
}

double SparseSystem::max_diagonal() const {
  double m = 0.0;
  for (const int s : diag_) m = std::max(m, std::abs(A_.valuePtr()[s]));
  return m;
}

// ---------------------------------------------------------------------------------------------
// SparseTangent

SparseSystem SparseTangent::build(const NaturalCoordinates& nat, const SparseJacobian& J, bool symmetric,
                                  bool geometric_stiffness) {
  std::vector<std::pair<int, int>> entries;
  const auto& m = J.matrix();
  for (int k = 0; k < m.rows(); ++k)
    for (int a = m.outerIndexPtr()[k]; a < m.outerIndexPtr()[k + 1]; ++a)
      for (int b = m.outerIndexPtr()[k]; b < m.outerIndexPtr()[k + 1]; ++b)
        entries.emplace_back(m.innerIndexPtr()[a], m.innerIndexPtr()[b]);
  if (geometric_stiffness)
    for (const ConstraintRow& r : nat.rows())
      visit_hessian(r, nat.dim(), [&](int i, int j, double) { entries.emplace_back(i, j); });
  return SparseSystem(nat.nq(), entries, symmetric);
}

SparseTangent::SparseTangent(const NaturalCoordinates& nat, const SparseJacobian& J, bool symmetric,
                             bool geometric_stiffness)
    : sys_(build(nat, J, symmetric, geometric_stiffness)), diag_(nat.nq()) {
  const auto& m = J.matrix();
  for (int k = 0; k < m.rows(); ++k)
    for (int a = m.outerIndexPtr()[k]; a < m.outerIndexPtr()[k + 1]; ++a)
      for (int b = m.outerIndexPtr()[k]; b < m.outerIndexPtr()[k + 1]; ++b) {
        const int s = sys_.slot(m.innerIndexPtr()[a], m.innerIndexPtr()[b]);
        if (s >= 0) gram_.push_back({s, a, b});
      }
  // Sorted by slot: the accumulation then walks the value array forwards.
  std::stable_sort(gram_.begin(), gram_.end(), [](const Gram& x, const Gram& y) { return x.slot < y.slot; });
  if (geometric_stiffness) {
    int row = 0;
    for (const ConstraintRow& r : nat.rows()) {
      visit_hessian(r, nat.dim(), [&](int i, int j, double coef) {
        const int s = sys_.slot(i, j);
        if (s >= 0) hess_.push_back({s, row, coef});
      });
      ++row;
    }
  }
  for (int i = 0; i < nat.nq(); ++i) diag_[i] = sys_.slot(i, i);
}

void SparseTangent::add_diagonal(const Eigen::VectorXd& d) {
  double* val = sys_.values();
  for (int i = 0; i < static_cast<int>(diag_.size()); ++i) val[diag_[i]] += d[i];
}

void SparseTangent::add_gram(double alpha, const SparseJacobian& A, const SparseJacobian& B) {
  double* val = sys_.values();
  const double* a = A.matrix().valuePtr();
  const double* b = B.matrix().valuePtr();
  for (const Gram& g : gram_) val[g.slot] += alpha * a[g.a] * b[g.b];
}

void SparseTangent::add_geometric_stiffness(const Eigen::VectorXd& mu, double s) {
  double* val = sys_.values();
  for (const Hess& h : hess_) val[h.slot] += s * mu[h.row] * h.coef;
}

// ---------------------------------------------------------------------------------------------
// SparseKkt

SparseSystem SparseKkt::build(const NaturalCoordinates& nat, const SparseJacobian& G) {
  std::vector<std::pair<int, int>> entries;
  const int nq = nat.nq();
  const auto& m = G.matrix();
  for (int k = 0; k < m.rows(); ++k)
    for (int a = m.outerIndexPtr()[k]; a < m.outerIndexPtr()[k + 1]; ++a) {
      entries.emplace_back(nq + k, m.innerIndexPtr()[a]);
      entries.emplace_back(m.innerIndexPtr()[a], nq + k);
    }
  for (int row : G.model_rows())
    visit_hessian(nat.rows()[row], nat.dim(), [&](int i, int j, double) { entries.emplace_back(i, j); });
  return SparseSystem(nq + G.rows(), entries, false);
}

SparseKkt::SparseKkt(const NaturalCoordinates& nat, const SparseJacobian& G)
    : sys_(build(nat, G)), diag_(nat.nq()) {
  const int nq = nat.nq();
  const auto& m = G.matrix();
  g_.resize(m.nonZeros());
  for (int k = 0; k < m.rows(); ++k)
    for (int a = m.outerIndexPtr()[k]; a < m.outerIndexPtr()[k + 1]; ++a)
      g_[a] = {sys_.slot(nq + k, m.innerIndexPtr()[a]), sys_.slot(m.innerIndexPtr()[a], nq + k)};
  for (int k = 0; k < G.rows(); ++k)
    visit_hessian(nat.rows()[G.model_rows()[k]], nat.dim(),
                  [&](int i, int j, double coef) { hess_.push_back({sys_.slot(i, j), k, coef}); });
  std::stable_sort(hess_.begin(), hess_.end(), [](const Hess& x, const Hess& y) { return x.slot < y.slot; });
  for (int i = 0; i < nq; ++i) diag_[i] = sys_.slot(i, i);
}

void SparseKkt::assemble(const Eigen::VectorXd& d, double s, const Eigen::VectorXd& lambda, const SparseJacobian& G) {
  sys_.set_zero();
  double* val = sys_.values();
  for (int i = 0; i < static_cast<int>(diag_.size()); ++i) val[diag_[i]] += d[i];
  for (const Hess& h : hess_) val[h.slot] += s * lambda[h.row] * h.coef;
  const double* g = G.matrix().valuePtr();
  for (int a = 0; a < static_cast<int>(g_.size()); ++a) {
    val[g_[a].first] = g[a];
    val[g_[a].second] = g[a];
  }
}

// ---------------------------------------------------------------------------------------------
// SparseSchur

namespace {
SparseSystem schur_system(const SparseJacobian& G) {
  const auto& m = G.matrix();
  // Rows of every column of G (G is row-major).
  std::vector<std::vector<int>> col_rows(m.cols());
  for (int k = 0; k < m.rows(); ++k)
    for (int p = m.outerIndexPtr()[k]; p < m.outerIndexPtr()[k + 1]; ++p) col_rows[m.innerIndexPtr()[p]].push_back(k);
  std::vector<std::pair<int, int>> entries;
  for (const auto& rows : col_rows)
    for (const int a : rows)
      for (const int b : rows) entries.emplace_back(a, b);
  return SparseSystem(static_cast<int>(m.rows()), entries, true);
}
}  // namespace

SparseSchur::SparseSchur(const SparseJacobian& G) : sys_(schur_system(G)), r_(G.rows()), dx_(G.rows()) {
  const auto& m = G.matrix();
  std::vector<std::vector<std::pair<int, int>>> col_entries(m.cols());  // (row, value index)
  for (int k = 0; k < m.rows(); ++k)
    for (int p = m.outerIndexPtr()[k]; p < m.outerIndexPtr()[k + 1]; ++p)
      col_entries[m.innerIndexPtr()[p]].emplace_back(k, p);
  for (int c = 0; c < static_cast<int>(col_entries.size()); ++c)
    for (const auto& [ka, pa] : col_entries[c])
      for (const auto& [kb, pb] : col_entries[c]) {
        const int s = sys_.slot(ka, kb);
        if (s >= 0) terms_.push_back({s, pa, pb, c});
      }
  std::stable_sort(terms_.begin(), terms_.end(), [](const Term& x, const Term& y) { return x.slot < y.slot; });
}

bool SparseSchur::assemble_and_factorize(const SparseJacobian& G, const Eigen::VectorXd& m_inv, double shift,
                                         double near_singular) {
  assemble(G, m_inv);
  const bool ok = factorize();
  pivot_ratio_ = ok ? sys_.min_pivot_ratio() : 0.0;
  if (ok && pivot_ratio_ >= near_singular) return true;
  shifted_ = shift > 0.0;
  return sys_.factorize(shift * sys_.max_diagonal());
}

void SparseSchur::assemble(const SparseJacobian& G, const Eigen::VectorXd& m_inv) {
  sys_.set_zero();
  double* val = sys_.values();
  const double* g = G.matrix().valuePtr();
  for (const Term& t : terms_) val[t.slot] += g[t.a] * g[t.b] * m_inv[t.col];
}

void SparseSchur::solve(const Eigen::VectorXd& b, Eigen::VectorXd& x) {
  sys_.solve(b, x);
  if (!shifted_) return;
  sys_.multiply(x, r_);  // one refinement against S itself
  r_ = b - r_;
  sys_.solve(r_, dx_);
  x += dx_;
}

// ---------------------------------------------------------------------------------------------
// Softest constraint mode

double softest_constraint_mode(const NaturalCoordinates& nat, const Model& model) {
  const std::vector<int> rows = independent_rows(nat, model);
  if (rows.empty()) return std::numeric_limits<double>::infinity();
  const Eigen::VectorXd q0 = model.initial_q();
  const Eigen::VectorXd m_inv = nat.M_diag().cwiseInverse();
  const int n = static_cast<int>(rows.size());
  if (model.nq() < kSparseMinCoordinates) {
    Eigen::MatrixXd J(nat.nc(), nat.nq());
    nat.Phi_q(q0, J);
    Eigen::MatrixXd G(n, nat.nq());
    for (int k = 0; k < n; ++k) G.row(k) = J.row(rows[k]);
    const Eigen::MatrixXd S = G * m_inv.asDiagonal() * G.transpose();
    return Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd>(S, Eigen::EigenvaluesOnly).eigenvalues()[0];
  }
  // Inverse iteration: x <- S^-1 x, normalized; the Rayleigh quotient converges to s_min at the
  // rate s_min / s_2 (0.25 on the N-four-bar).
  SparseJacobian G(nat, rows);
  G.evaluate(q0);
  SparseSchur S(G);
  S.assemble_and_factorize(G, m_inv, 0.0, 0.0);  // unshifted: its inverse iteration needs S itself
  Eigen::VectorXd x = Eigen::VectorXd::Ones(n), y(n), Sy(n);
  for (int k = 0; k < n; ++k) x[k] += 0.1 * std::sin(1.7 * k);
  x.normalize();
  double s = std::numeric_limits<double>::infinity();
  for (int it = 0; it < 200; ++it) {
    S.solve(x, y);
    S.system().multiply(y, Sy);
    const double s_new = y.dot(Sy) / y.squaredNorm();
    x = y.normalized();
    if (std::abs(s_new - s) <= 1e-6 * s_new) return s_new;
    s = s_new;
  }
  return s;
}

double penalty_mass_scale(const NaturalCoordinates& nat, const Model& model, double m_ref) {
  if (model.nc() == 0) return m_ref;
  const double s_min = softest_constraint_mode(nat, model);
  return s_min > 0.0 && 1.0 / s_min > kSoftModeRatio * m_ref ? 1.0 / s_min : m_ref;
}

}  // namespace mbs
