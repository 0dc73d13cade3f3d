// The small mixed linear complementarity problem of simultaneous frictionless contacts:
//   w = D x + b,   equality rows (eq[i]):        w_i = 0, x_i free,
//                  complementarity rows (else):   w_i >= 0, x_i >= 0, x_i w_i = 0,
// with D = G M^-1 G^T (the Delassus matrix: symmetric positive semi-definite) over the k contacts
// involved, x their impulses (N s) or forces (N) along the normals and w their normal velocities
// (m/s) or accelerations. k is tiny (one or two contacts of the double pendulum; rarely more), so
// the active set is enumerated (fewest active rows first; for a positive definite D the solution
// is unique, and for a semi-definite one the first consistent set is taken); above kMaxEnumerated
// rows, or if round-off leaves no set consistent, projected Gauss-Seidel. All storage is sized at
// construction; solve() allocates nothing.
#pragma once

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <vector>

#include "core/model.hpp"
#include "core/contact.hpp"

namespace mbs {

// A model's contact (its gap form, core/element.hpp) in the form the integration loops use:
// gap = n . r - d0, where r is q.segment(off, dim).
struct ContactRow {
  int off = 0;                                  // first natural coordinate of the point
  Eigen::Vector3d n = Eigen::Vector3d::Zero();  // unit normal (first dim components)
  double d0 = 0.0;                              // n . plane point
  double e = 0.0;                               // Newton's restitution
};

inline std::vector<ContactRow> contact_rows(const Model& model) {
  std::vector<ContactRow> rows;
  for (const ContactGap& g : contact_gaps(model)) {
    ContactRow c;
    c.off = g.offset;
    for (int d = 0; d < model.dim; ++d) c.n[d] = g.normal[d];
    c.d0 = g.normal.dot(g.point);
    c.e = g.restitution;
    rows.push_back(c);
  }
  return rows;
}

// A model's contacts and which of them are closed (persistent, bilateral at acceleration level),
// the bookkeeping every ODE with contact events keeps (common/contact_events.hpp). Sized at setup.
class ContactSet {
 public:
  explicit ContactSet(const Model& model)
      : rows_(contact_rows(model)), n_(static_cast<int>(rows_.size())), closed_(n_, 0), idx_(n_, 0) {}
  int size() const { return n_; }
  const ContactRow& row(int j) const { return rows_[j]; }
  double restitution(int j) const { return rows_[j].e; }
  bool closed(int j) const { return closed_[j] != 0; }
  int num_closed() const { return n_closed_; }
  int closed_index(int a) const { return idx_[a]; }  // the a-th closed contact, a < num_closed()
  const int* closed_indices() const { return idx_.data(); }
  void set_closed(int j, bool on) {
    if (closed(j) == on) return;
    closed_[j] = on ? 1 : 0;
    n_closed_ = 0;
    for (int i = 0; i < n_; ++i)
      if (closed_[i]) idx_[n_closed_++] = i;
  }
  void open_all() {
    std::fill(closed_.begin(), closed_.end(), 0);
    n_closed_ = 0;
  }

 private:
  std::vector<ContactRow> rows_;
  int n_;
  std::vector<char> closed_;
  std::vector<int> idx_;
  int n_closed_ = 0;
};

class ContactLcp {
 public:
  static constexpr int kMaxEnumerated = 10;

  explicit ContactLcp(int max_rows)
      : A_(max_rows, max_rows), r_(max_rows), xs_(max_rows), rows_(max_rows) {}

  // Solves D x = -b over all k rows (every row an equality; dependent rows get x_i = 0).
  void solve_equalities(const Eigen::MatrixXd& D, const Eigen::VectorXd& b, int k, Eigen::VectorXd& x) {
    double dmax = 0.0;
    for (int i = 0; i < k; ++i) dmax = std::max(dmax, std::abs(D(i, i)));
    for (int i = 0; i < k; ++i) rows_[i] = i;
    eliminate(D, b, k, dmax);
    for (int i = 0; i < k; ++i) x[i] = xs_[i];
  }

  // D (at least k x k; its top-left block is used), b, eq (size >= k). On return x.head(k) holds
  // the solution. Returns false only when projected Gauss-Seidel did not converge either.
  bool solve(const Eigen::MatrixXd& D, const Eigen::VectorXd& b, const std::vector<char>& eq, int k,
             Eigen::VectorXd& x) {
    x.head(k).setZero();
    if (k == 0) return true;
    double bmax = 0.0, dmax = 0.0;
    for (int i = 0; i < k; ++i) bmax = std::max(bmax, std::abs(b[i])), dmax = std::max(dmax, std::abs(D(i, i)));
    if (bmax == 0.0) return true;
    const double tol_w = 1e-10 * bmax;
    int m = 0;  // complementarity rows
    for (int i = 0; i < k; ++i) m += eq[i] ? 0 : 1;
    if (m <= kMaxEnumerated) {
      for (int active = 0; active <= m; ++active) {
        for (unsigned mask = 0; mask < (1u << m); ++mask) {
          if (popcount(mask) != active) continue;
          if (try_set(D, b, eq, k, mask, dmax, tol_w, x)) return true;
        }
      }
    }
    return gauss_seidel(D, b, eq, k, dmax, tol_w, x);
  }

 private:
  static int popcount(unsigned v) {
    int c = 0;
    for (; v != 0; v &= v - 1) ++c;
    return c;
  }

  // Rows in the set: every equality row and the complementarity rows selected by mask. Solves
  // D_SS x_S = -b_S and checks x_S >= 0 and w >= 0 outside the set (w = 0 on equality rows).
  bool try_set(const Eigen::MatrixXd& D, const Eigen::VectorXd& b, const std::vector<char>& eq, int k,
               unsigned mask, double dmax, double tol_w, Eigen::VectorXd& x) {
    int s = 0, c = 0;
    for (int i = 0; i < k; ++i) {
      const bool in = eq[i] || ((mask >> c) & 1u);
      if (!eq[i]) ++c;
      if (in) rows_[s++] = i;
    }
    eliminate(D, b, s, dmax);
    double xmax = 0.0;
    for (int a = 0; a < s; ++a) xmax = std::max(xmax, std::abs(xs_[a]));
    for (int a = 0; a < s; ++a)
      if (!eq[rows_[a]] && xs_[a] < -1e-12 * xmax) return false;
    x.head(k).setZero();
    for (int a = 0; a < s; ++a) x[rows_[a]] = eq[rows_[a]] ? xs_[a] : std::max(0.0, xs_[a]);
    for (int i = 0; i < k; ++i) {
      double w = b[i];
      for (int a = 0; a < s; ++a) w += D(i, rows_[a]) * x[rows_[a]];
      if (eq[i] ? std::abs(w) > tol_w + 1e-9 * dmax * xmax : w < -tol_w) return false;
    }
    return true;
  }

  // x_S = solution of D_SS x_S = -b_S for the rows rows_[0..s) (Gaussian elimination with partial
  // pivoting; a pivot at round-off level means a row dependent on the others: its unknown is zero).
  void eliminate(const Eigen::MatrixXd& D, const Eigen::VectorXd& b, int s, double dmax) {
    for (int a = 0; a < s; ++a) {
      for (int c = 0; c < s; ++c) A_(a, c) = D(rows_[a], rows_[c]);
      r_[a] = -b[rows_[a]];
    }
    for (int col = 0; col < s; ++col) {
      int p = col;
      for (int i = col + 1; i < s; ++i)
        if (std::abs(A_(i, col)) > std::abs(A_(p, col))) p = i;
      if (p != col) {
        A_.row(p).head(s).swap(A_.row(col).head(s));
        std::swap(r_[p], r_[col]);
      }
      if (std::abs(A_(col, col)) <= 1e-12 * dmax) {  // dependent row: drop it
        A_.row(col).head(s).setZero();
        A_(col, col) = 1.0;
        r_[col] = 0.0;
        continue;
      }
      for (int i = col + 1; i < s; ++i) {
        const double f = A_(i, col) / A_(col, col);
        if (f == 0.0) continue;
        A_.row(i).segment(col, s - col) -= f * A_.row(col).segment(col, s - col);
        r_[i] -= f * r_[col];
      }
    }
    for (int i = s - 1; i >= 0; --i) {
      double v = r_[i];
      for (int j = i + 1; j < s; ++j) v -= A_(i, j) * xs_[j];
      xs_[i] = v / A_(i, i);
    }
  }

  bool gauss_seidel(const Eigen::MatrixXd& D, const Eigen::VectorXd& b, const std::vector<char>& eq, int k,
                    double dmax, double tol_w, Eigen::VectorXd& x) {
    x.head(k).setZero();
    for (int it = 0; it < 10000; ++it) {
      double change = 0.0;
      for (int i = 0; i < k; ++i) {
        if (D(i, i) <= 1e-12 * dmax) continue;
        double w = b[i];
        for (int j = 0; j < k; ++j) w += D(i, j) * x[j];
        double xi = x[i] - w / D(i, i);
        if (!eq[i]) xi = std::max(0.0, xi);
        change = std::max(change, std::abs(xi - x[i]) * D(i, i));
        x[i] = xi;
      }
      if (change <= 1e-3 * tol_w) return true;
    }
    return false;
  }

  Eigen::MatrixXd A_;
  Eigen::VectorXd r_, xs_;
  std::vector<int> rows_;
};

}  // namespace mbs
