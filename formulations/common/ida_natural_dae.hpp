// What the natural-coordinate DAEs for IDA share (ida-index3's Index3Dae, ida-ggl's GglDae), with
// y = (q, v, lambda, ...): the kept independent constraint rows, the dynamics block
// M v' + Phi_q^T lambda - Q and its Jacobians, the position level Phi(q) on the kept rows, the
// constant second derivatives of those rows, the compressed-column pattern of a sparse iteration
// matrix, and consistent (q, v, lambda) from the shared toolkit. A DAE derives from NaturalDae and
// writes its own rows and blocks.
//
// Redundant constraints (a rank-deficient Phi_q, e.g. two spherical joints on one hinge line) would
// make the iteration matrix singular, so only an independent subset of the model's constraint rows
// enters the DAE: chosen once at setup by a column-pivoted QR of Phi_q^T at the initial
// configuration (common/independent_rows.hpp). nc() is that subset's size.
//
// Sparse (large models, common/sparse_natural.hpp): a fixed-pattern sparse Phi_q of the kept rows,
// and the iteration matrix in compressed-column form on a pattern fixed at setup, for SUNDIALS'
// sparse matrix and KLU.
#pragma once

#include <Eigen/Dense>
#include <Eigen/SparseCore>
#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common/independent_rows.hpp"
#include "common/kept_constraints.hpp"
#include "common/sparse_natural.hpp"
#include "core/formulation.hpp"
#include "core/natural_coordinates.hpp"

namespace mbs::ida {

// A DAE on NaturalDae declares, for common/ida_driver.hpp: size(); residual F (size()), the
// iteration matrix J = dF/dy + cj dF/dy' (size() x size(), every entry written) dense or as values
// on the sparse pattern, all three allocation-free (they run inside IDA's Newton iteration); and
// consistent (y0, y'0) from the model's initial state (setup only).
class NaturalDae {
 public:
  using ConstVec = const Eigen::Ref<const Eigen::VectorXd>&;
  using Vec = Eigen::Ref<Eigen::VectorXd>;
  using Mat = Eigen::Ref<Eigen::MatrixXd>;

  int nq() const { return nat_.nq(); }
  int nc() const { return static_cast<int>(rows_.size()); }        // independent rows kept
  int dropped_constraints() const { return nat_.nc() - nc(); }      // redundant rows removed
  const std::vector<int>& constraint_rows() const { return rows_; }  // kept rows of the model's Phi
  const NaturalCoordinates& nat() const { return nat_; }

  // Sparse mode: the iteration matrix's compressed-column pattern (column pointers, size() + 1, and
  // row indices), fixed at setup.
  bool sparse() const { return sparse_; }
  const std::vector<int64_t>& column_pointers() const { return col_ptr_; }
  const std::vector<int64_t>& row_indices() const { return row_ind_; }

 protected:
  NaturalDae(const Model& model, bool sparse)
      : nat_(model),
        sparse_(sparse),
        Q_(nat_.Q()),
        dQ_dq_(nat_.has_force_elements() ? nat_.nq() : 0, nat_.has_force_elements() ? nat_.nq() : 0),
        dQ_dv_(dQ_dq_.rows(), dQ_dq_.cols()),
        rows_(independent_rows(nat_, model)),
        inv_m_(nat_.M_diag().cwiseInverse()),
        Phi_q_all_(nat_.nc(), nat_.nq()),
        Phi_all_(nat_.nc()),
        lambda_all_(Eigen::VectorXd::Zero(nat_.nc())),
        Phi_q_(nc(), nat_.nq()) {
    build_hessian_entries();
    kept_index_.assign(nat_.nc(), -1);
    for (int k = 0; k < nc(); ++k) kept_index_[rows_[k]] = k;
    if (sparse_) Phi_q_sp_ = std::make_unique<SparseJacobian>(nat_, rows_);
  }

  // Phi_q_ <- kept rows of Phi_q(q) (dense mode).
  void kept_Phi_q(const Eigen::Ref<const Eigen::VectorXd>& q) {
    nat_.Phi_q(q, Phi_q_all_);
    for (int k = 0; k < nc(); ++k) Phi_q_.row(k) = Phi_q_all_.row(rows_[k]);
  }
  // The kept rows of Phi_q(q) on their fixed sparse pattern (sparse mode).
  const SparseJacobian::Matrix& kept_Phi_q_sparse(const Eigen::Ref<const Eigen::VectorXd>& q) {
    Phi_q_sp_->evaluate(q);
    return Phi_q_sp_->matrix();
  }
  // Position level: F_pos <- kept rows of Phi(q). (Templates forced inline here and below: the
  // residual's blocks pass through without a Ref or a call made at every evaluation.)
  template <class VecQ, class VecF>
  EIGEN_ALWAYS_INLINE void kept_Phi(const VecQ& q, VecF&& F_pos) {
    nat_.Phi(q, Phi_all_);
    for (int k = 0; k < nc(); ++k) F_pos[k] = Phi_all_[rows_[k]];
  }
  // Dynamics, after F_dyn = Phi_q^T lambda: F_dyn += M v' - Q(q, v).
  template <class VecQ, class VecV, class VecA, class VecF>
  EIGEN_ALWAYS_INLINE void add_M_v_dot_minus_Q(const VecQ& q, const VecV& v, const VecA& v_dot, VecF&& F_dyn) {
    F_dyn += nat_.M_diag().cwiseProduct(v_dot);
    if (nat_.has_force_elements()) {
      nat_.Q(q, v, Q_);
      F_dyn -= Q_;
    } else {
      F_dyn -= nat_.Q();
    }
  }
  // The dynamics rows' q and v blocks of the iteration matrix, after the second derivatives are in
  // J_dq: J_dq -= dQ/dq, J_dv = cj M - dQ/dv (J_dv left as it was without force elements).
  template <class VecQ, class VecV, class BlockQ, class BlockV>
  void add_dynamics_blocks(double cj, const VecQ& q, const VecV& v, BlockQ&& J_dq, BlockV&& J_dv) {
    if (nat_.has_force_elements()) {
      dQ_dq_.setZero();
      dQ_dv_.setZero();
      nat_.add_Q_jacobians(q, v, dQ_dq_, dQ_dv_);
      J_dq -= dQ_dq_;
      J_dv = -dQ_dv_;
    }
    J_dv.diagonal() += cj * nat_.M_diag();
  }
  // all[rows_[k]] = kept[k]; dropped rows stay 0.
  template <class Vec>
  EIGEN_ALWAYS_INLINE void scatter(const Vec& kept, Eigen::VectorXd& all) const {
    for (int k = 0; k < nc(); ++k) all[rows_[k]] = kept[k];
  }

  // Setup only: q0 as given, v0 projected mass-orthogonally onto Phi_q v = 0, v'0 and lambda0 from
  // the acceleration-level constraint, q'0 = v0, through the shared toolkit
  // (common/kept_constraints.hpp) on the kept rows. Writes y = (q, v, lambda, ...) and
  // y' = (q', v', ...); the rest of y and y' is the caller's.
  void consistent_q_v_lambda(const char* who, Eigen::Ref<Eigen::VectorXd> y, Eigen::Ref<Eigen::VectorXd> yp) {
    if (sparse_) consistent_start<true>(who, y, yp);
    else consistent_start<false>(who, y, yp);
  }

  // The sparse pattern's entries of every natural DAE, on the diagonals of the (q, v) blocks:
  // dF_q/dq (cj), dF_q/dv (-1), dF_v/dv (cj M); the DAE adds its constraint and stiffness entries.
  std::vector<Eigen::Triplet<double, int>> kinematic_pattern() const {
    const int n = nq();
    std::vector<Eigen::Triplet<double, int>> t;
    for (int i = 0; i < n; ++i) {
      t.emplace_back(i, i, 1.0);
      t.emplace_back(i, n + i, 1.0);
      t.emplace_back(n + i, n + i, 1.0);
    }
    return t;
  }

  // Where a DAE's constraint terms go in the sparse iteration matrix, declared once by the DAE:
  // the kept rows' Phi_q entry p = (k, i) at (row + k, col + i), or transposed at (row + i, col + k);
  // a second-derivative entry e (hess_) at (row + e.i, e.j), or by its constraint at
  // (row + kept index of e.row, e.j). `slots` receives, entry by entry, where each value goes.
  struct JacobianPlacement {
    int row, col;
    bool transposed;
    std::vector<int>* slots;
  };
  struct HessianPlacement {
    int row;
    bool by_constraint;
    std::vector<int>* slots;
  };
  // Sparse mode: the pattern of a size x size iteration matrix, the (q, v) blocks' diagonals
  // (kinematic_pattern()) and the placements given, and the placements' slots.
  void place_constraint_terms(int size, std::initializer_list<JacobianPlacement> jacobian,
                              std::initializer_list<HessianPlacement> hessian) {
    const auto& J = Phi_q_sp_->matrix();  // row-major: outer index k, the kept row
    auto jacobian_at = [](const JacobianPlacement& a, int k, int i) {
      return a.transposed ? std::pair{a.row + i, a.col + k} : std::pair{a.row + k, a.col + i};
    };
    auto hessian_at = [this](const HessianPlacement& a, const HessEntry& e) {
      return std::pair{a.row + (a.by_constraint ? kept_index_[e.row] : e.i), e.j};
    };
    std::vector<Eigen::Triplet<double, int>> t = kinematic_pattern();
    for (const JacobianPlacement& a : jacobian)
      for (int k = 0; k < nc(); ++k)
        for (int p = J.outerIndexPtr()[k]; p < J.outerIndexPtr()[k + 1]; ++p) {
          const auto [r, c] = jacobian_at(a, k, J.innerIndexPtr()[p]);
          t.emplace_back(r, c, 1.0);
        }
    for (const HessianPlacement& a : hessian)
      for (const HessEntry& e : hess_) {
        const auto [r, c] = hessian_at(a, e);
        t.emplace_back(r, c, 1.0);
      }
    set_pattern(size, t);
    for (const JacobianPlacement& a : jacobian) {
      a.slots->clear();
      for (int k = 0; k < nc(); ++k)
        for (int p = J.outerIndexPtr()[k]; p < J.outerIndexPtr()[k + 1]; ++p) {
          const auto [r, c] = jacobian_at(a, k, J.innerIndexPtr()[p]);
          a.slots->push_back(slot(r, c));
        }
    }
    for (const HessianPlacement& a : hessian) {
      a.slots->clear();
      for (const HessEntry& e : hess_) {
        const auto [r, c] = hessian_at(a, e);
        a.slots->push_back(slot(r, c));
      }
    }
  }

  // The sparse iteration matrix's pattern: the (row, column) entries given (kinematic_pattern()'s
  // among them), size x size; slot() then finds where an entry's value goes.
  void set_pattern(int size, const std::vector<Eigen::Triplet<double, int>>& entries) {
    Eigen::SparseMatrix<double, Eigen::ColMajor, int> A(size, size);
    A.setFromTriplets(entries.begin(), entries.end());
    A.makeCompressed();
    col_ptr_.assign(A.outerIndexPtr(), A.outerIndexPtr() + size + 1);
    row_ind_.assign(A.innerIndexPtr(), A.innerIndexPtr() + A.nonZeros());
    const int n = nq();
    kinematic_slots_.clear();
    for (int i = 0; i < n; ++i) kinematic_slots_.push_back({slot(i, i), slot(i, n + i), slot(n + i, n + i)});
  }
  // Sparse mode: every value of the iteration matrix zeroed, then the (q, v) blocks' diagonals
  // written; the DAE adds the rest.
  void start_sparse_values(double cj, double* values) const {
    std::fill(values, values + row_ind_.size(), 0.0);
    for (size_t i = 0; i < kinematic_slots_.size(); ++i) {
      values[kinematic_slots_[i].qq] = cj;
      values[kinematic_slots_[i].qv] = -1.0;
      values[kinematic_slots_[i].vv] = cj * nat_.M_diag()[static_cast<Eigen::Index>(i)];
    }
  }
  int slot(int i, int j) const {
    const auto p = std::lower_bound(row_ind_.begin() + col_ptr_[j], row_ind_.begin() + col_ptr_[j + 1], i);
    return static_cast<int>(p - row_ind_.begin());
  }

  NaturalCoordinates nat_;
  bool sparse_ = false;
  Eigen::VectorXd Q_;              // applied forces at the current state (N)
  Eigen::MatrixXd dQ_dq_, dQ_dv_;  // their Jacobians (only sized with force elements)
  std::vector<int> rows_;          // independent constraint rows of the model, ascending
  std::vector<int> kept_index_;    // model row -> its index among rows_ (-1: dropped)
  Eigen::VectorXd inv_m_;          // M^-1 (diagonal)
  Eigen::MatrixXd Phi_q_all_;      // model's nc x nq workspace
  Eigen::VectorXd Phi_all_;        // model's nc workspace
  Eigen::VectorXd lambda_all_;     // lambda scattered onto the model's rows (dropped: 0)
  Eigen::MatrixXd Phi_q_;          // nc x nq (kept rows)
  // Second derivatives of the kept rows, Phi = s (d1 . d2 - c), constant (every row is a bilinear
  // form; as NaturalCoordinates::add_Phi_qq_times): d2 Phi_row / dq_i dq_j += coef, one entry per
  // contribution (symmetric pairs listed both ways).
  struct HessEntry {
    int i, j, row;  // row: the model's
    double coef;
  };
  std::vector<HessEntry> hess_;
  std::unique_ptr<SparseJacobian> Phi_q_sp_;  // sparse mode: kept rows of Phi_q
  std::vector<int64_t> col_ptr_, row_ind_;    // sparse mode: the iteration matrix's pattern

 private:
  // consistent_q_v_lambda() on the dense or sparse constraint toolkit.
  template <bool kSparse>
  void consistent_start(const char* who, Eigen::Ref<Eigen::VectorXd> y, Eigen::Ref<Eigen::VectorXd> yp) {
    const int n = nq(), m = nc();
    auto q = y.head(n), v = y.segment(n, n), lambda = y.segment(2 * n, m);
    q = nat_.model().initial_q();
    v = nat_.model().initial_v();
    RunStats setup_stats;
    KeptConstraints<Eigen::Dynamic, Eigen::Dynamic, kSparse> kc(nat_, rows_, setup_stats, who);
    kc.load(q, v);
    kc.project_velocities(v);
    kc.load(q, v);
    nat_.Q(q, v, Q_);
    Eigen::VectorXd a(n), lambda_kept(m);
    kc.accelerations(Q_, a, lambda_kept);
    lambda = lambda_kept;
    yp.head(n) = v;
    yp.segment(n, n) = a;
  }

  struct KinematicSlots {
    int qq, qv, vv;  // (i, i) = cj, (i, nq + i) = -1, (nq + i, nq + i) = cj M_i
  };
  std::vector<KinematicSlots> kinematic_slots_;

  void build_hessian_entries() {
    const int dim = nat_.dim();
    for (const int r : rows_) {
      const ConstraintRow& row = nat_.rows()[r];
      const Combo& d2 = row.same ? row.d1 : row.d2;
      for (int a = 0; a < row.d1.n; ++a)
        for (int b = 0; b < d2.n; ++b) {
          const double x = row.s * row.d1.w[a] * d2.w[b];
          for (int c = 0; c < dim; ++c) {
            hess_.push_back({row.d1.off[a] + c, d2.off[b] + c, r, x});
            hess_.push_back({d2.off[b] + c, row.d1.off[a] + c, r, x});
          }
        }
    }
  }
};

}  // namespace mbs::ida
