#include "recursive/loop_closure.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "common/kept_constraints.hpp"
#include "recursive/crba.hpp"
#include "recursive/kinematics.hpp"

namespace mbs::recursive {

namespace {
constexpr double kRankTol = 1e-10;  // pivots of Phi_q^T's QR below this share of the largest: dependent
}  // namespace

LoopClosure::Side LoopClosure::side(const Model& model, const Combo& d, const std::vector<int>& block_body,
                                    const std::vector<int>& block_kind, const std::string& element) const {
  Side out;
  out.c.head(model.dim) = d.c;
  for (int t = 0; t < d.n; ++t) {
    const int off = d.off[t];
    const int i = off >= 0 && off < static_cast<int>(block_body.size()) ? block_body[off] : -1;
    if (i < 0)
      throw SolverError(fmt::format("joint {} closes a loop on coordinates no tree body carries", element));
    const TreeBody& b = tree_.bodies[i];
    Term& term = out.t[out.n++];
    term.body = i;
    term.w = d.w[t];
    term.axis = block_kind[off] > 0;
    term.local = term.axis ? Vec3(b.axes.col(block_kind[off] - 1)) : b.com;
  }
  return out;
}

LoopClosure::LoopClosure(const Model& model, const SpatialTree& tree, RunStats* stats)
    : tree_(tree), stats_(stats), llt_(0), ab_(tree.bodies.size(), Vec6::Zero()) {
  if (tree.cuts.empty()) return;
  if (tree.has_quaternions)
    throw SolverError("a closed loop on a tree with spherical joints or spatial rods (quaternion coordinates): not implemented");
  // Which tree body carries each block of natural coordinates, and which part of it (0: its point
  // or centroid; k > 0: its (k-1)th axis), indexed by the block's first coordinate.
  const int nq_model = model.nq(), dim = model.dim;
  std::vector<int> block_body(nq_model, -1), block_kind(nq_model, 0);
  for (int i = 0; i < static_cast<int>(tree.bodies.size()); ++i) {
    const TreeBody& b = tree.bodies[i];
    if (b.point >= 0) block_body[dim * b.point] = i;
    if (b.body < 0) continue;
    const int off = model.body_offset(b.body);
    for (int k = 0; k <= dim; ++k) {
      block_body[off + dim * k] = i;
      block_kind[off + dim * k] = k;
    }
  }
  std::vector<ConstraintRow> natural;
  for (const Element* e : tree.cuts) {
    const size_t first = natural.size();
    e->add_rows(model, natural);
    for (size_t k = first; k < natural.size(); ++k) {
      const ConstraintRow& r = natural[k];
      Row row;
      row.d1 = side(model, r.d1, block_body, block_kind, e->name);
      row.d2 = r.same ? row.d1 : side(model, r.d2, block_body, block_kind, e->name);
      row.s = r.s;
      row.c = r.c;
      rows_.push_back(row);
    }
  }
  // The independent rows at q0.
  TreeWorkspace ws(tree, false);
  kinematics(tree, tree.q0, tree.v0, ws);
  world_frames(tree, ws);
  kept_.resize(rows_.size());
  for (size_t k = 0; k < rows_.size(); ++k) kept_[k] = static_cast<int>(k);
  n_r_ = static_cast<int>(rows_.size());
  Eigen::MatrixXd G(n_r_, tree.nv);
  jacobian(ws, G);
  Eigen::ColPivHouseholderQR<Eigen::MatrixXd> qr(G.transpose());
  qr.setThreshold(kRankTol);
  const int rank = static_cast<int>(qr.rank());
  kept_.assign(qr.colsPermutation().indices().data(), qr.colsPermutation().indices().data() + rank);
  std::sort(kept_.begin(), kept_.end());
  n_r_ = rank;
  if (n_r_ == 0) return;  // the cut joints' rows all hold on the tree (a duplicated rod): nothing to enforce
  const double scale = position_scale(model);
  tol_Phi_ = kProjectionPhiTol * scale;
  tol_dq_ = kProjectionStepTol;  // rad (or m, for a slide on a metre-scale mechanism)
  G_.setZero(n_r_, tree.nv);
  Y_.setZero(tree.nv, n_r_);
  llt_ = ShiftedLlt<Eigen::MatrixXd, Eigen::VectorXd>(n_r_);
  Phi_.setZero(n_r_);
  b_.setZero(n_r_);
  lambda_.setZero(n_r_);
  dq_.setZero(tree.nv);
  zero_v_.setZero(tree.nv);
  // The pivot share of G H^-1 G^T at q0, from which a singular position is judged.
  TreeWorkspace wh(tree, true);
  prepare(tree.q0, zero_v_, wh);
  llt_.set_floor_from_current();
}

Vec3 LoopClosure::value(const Side& d, const TreeWorkspace& ws) const {
  Vec3 x = d.c;
  for (int t = 0; t < d.n; ++t) {
    const Term& term = d.t[t];
    const Vec3 p = ws.Rw[term.body] * term.local;
    x += term.w * (term.axis ? p : Vec3(ws.ow[term.body] + p));
  }
  return x;
}

void LoopClosure::rates(const Side& d, const TreeWorkspace& ws, const std::vector<Vec6>& ab, Vec3& rate, Vec3& bias) const {
  rate.setZero();
  bias.setZero();
  for (int t = 0; t < d.n; ++t) {
    const Term& term = d.t[t];
    const int i = term.body;
    const Vec3 w = ws.v[i].head<3>(), vo = ws.v[i].tail<3>(), alpha = ab[i].head<3>();
    const Vec3& p = term.local;
    // A body-fixed axis moves by w x u; a point also with its origin (body coordinates, then world).
    const Vec3 r = term.axis ? Vec3(w.cross(p)) : Vec3(vo + w.cross(p));
    const Vec3 a = term.axis ? Vec3(alpha.cross(p) + w.cross(w.cross(p)))
                             : Vec3(ab[i].tail<3>() + alpha.cross(p) + w.cross(vo + w.cross(p)));
    rate.noalias() += term.w * (ws.Rw[i] * r);
    bias.noalias() += term.w * (ws.Rw[i] * a);
  }
}

void LoopClosure::add_jacobian(const Side& d, const TreeWorkspace& ws, double s, const Vec3& x, Eigen::MatrixXd& G,
                               int r) const {
  for (int t = 0; t < d.n; ++t) {
    const Term& term = d.t[t];
    const Vec3 p = ws.Rw[term.body] * term.local;
    const Vec3 xb = term.axis ? p : Vec3(ws.ow[term.body] + p);
    const double sw = s * term.w;
    for (int j = term.body; j >= 0; j = tree_.bodies[j].parent) {
      const TreeBody& b = tree_.bodies[j];
      for (int k = 0; k < b.nv; ++k) {
        const Vec3 w = ws.Rw[j] * b.S.col(k).head<3>();
        const Vec3 dx = term.axis ? Vec3(w.cross(xb)) : Vec3(ws.Rw[j] * b.S.col(k).tail<3>() + w.cross(xb - ws.ow[j]));
        G(r, b.vi + k) += sw * dx.dot(x);
      }
    }
  }
}

void LoopClosure::positions(const TreeWorkspace& ws, Eigen::VectorXd& Phi) const {
  for (int a = 0; a < n_r_; ++a) {
    const Row& row = rows_[kept_[a]];
    const Vec3 x1 = value(row.d1, ws), x2 = value(row.d2, ws);
    Phi[a] = row.s * (x1.dot(x2) - row.c);
  }
}

void LoopClosure::jacobian(const TreeWorkspace& ws, Eigen::MatrixXd& G) const {
  G.setZero();
  for (int a = 0; a < n_r_; ++a) {
    const Row& row = rows_[kept_[a]];
    const Vec3 x1 = value(row.d1, ws), x2 = value(row.d2, ws);
    add_jacobian(row.d1, ws, row.s, x2, G, a);
    add_jacobian(row.d2, ws, row.s, x1, G, a);
  }
}

void LoopClosure::velocities(const TreeWorkspace& ws, const std::vector<Vec6>& ab, Eigen::VectorXd& Phi_q_v,
                             Eigen::VectorXd& gamma) const {
  for (int a = 0; a < n_r_; ++a) {
    const Row& row = rows_[kept_[a]];
    const Vec3 x1 = value(row.d1, ws), x2 = value(row.d2, ws);
    Vec3 r1, r2, b1, b2;
    rates(row.d1, ws, ab, r1, b1);
    rates(row.d2, ws, ab, r2, b2);
    Phi_q_v[a] = row.s * (r1.dot(x2) + x1.dot(r2));
    gamma[a] = -row.s * (b1.dot(x2) + 2.0 * r1.dot(r2) + x1.dot(b2));
  }
}

void LoopClosure::prepare(const Eigen::Ref<const Eigen::VectorXd>& q, const Eigen::Ref<const Eigen::VectorXd>& v,
                          TreeWorkspace& ws) {
  kinematics(tree_, q, v, ws);
  world_frames(tree_, ws);
  factor_at_frames(ws);
}

void LoopClosure::factor_at_frames(TreeWorkspace& ws) {
  factored_mass_matrix(tree_, ws);
  factor_rows(ws);
}

void LoopClosure::factor_rows(TreeWorkspace& ws) {
  jacobian(ws, G_);
  Y_ = G_.transpose();
  for (int a = 0; a < n_r_; ++a) ltdl_solve(tree_, ws.H, Y_.col(a));
  llt_.S().noalias() = G_ * Y_;
  llt_.factor();
}

void LoopClosure::constrain(const Eigen::Ref<const Eigen::VectorXd>& q, const Eigen::Ref<const Eigen::VectorXd>& v,
                            TreeWorkspace& ws, Eigen::Ref<Eigen::VectorXd> qdd) {
  prepare(q, v, ws);
  correct(ws, qdd);
}

void LoopClosure::constrain_factored(TreeWorkspace& ws, Eigen::Ref<Eigen::VectorXd> qdd) {
  factor_rows(ws);
  correct(ws, qdd);
}

void LoopClosure::correct(TreeWorkspace& ws, Eigen::Ref<Eigen::VectorXd> qdd) {
  bias_accelerations(tree_, ws, ab_);
  velocities(ws, ab_, Phi_, b_);  // Phi_ holds Phi_q v here, b_ gamma
  b_.noalias() -= G_ * qdd;
  llt_.solve(b_, lambda_);
  qdd.noalias() += Y_ * lambda_;
}

void LoopClosure::project(double t, Eigen::Ref<Eigen::VectorXd> q, Eigen::Ref<Eigen::VectorXd> v, TreeWorkspace& ws) {
  bool frames_at_q = false;  // the world frames are q's: the velocity projection reuses them
  for (int it = 0;; ++it) {
    kinematics(tree_, q, zero_v_, ws);
    world_frames(tree_, ws);
    positions(ws, Phi_);
    const double residual = Phi_.cwiseAbs().maxCoeff();
    if (residual <= tol_Phi_) {
      frames_at_q = true;
      break;
    }
    if (it == kProjectionMaxIterations || !std::isfinite(residual))
      throw SolverError(fmt::format("recursive: the loops' position projection did not converge at t = {:.9g} s ({} iterations, |Phi| = {:.3g} m)",
                                    t, it, residual));
    factor_at_frames(ws);
    llt_.solve(Phi_, lambda_);
    dq_.noalias() = Y_ * lambda_;
    q -= dq_;
    if (stats_ != nullptr) ++stats_->newton_iterations;
    if (dq_.cwiseAbs().maxCoeff() <= tol_dq_) break;  // see kProjectionStepTol
  }
  if (frames_at_q) factor_at_frames(ws);
  else prepare(q, zero_v_, ws);
  b_.noalias() = G_ * v;
  llt_.solve(b_, lambda_);
  v.noalias() -= Y_ * lambda_;
}

}  // namespace mbs::recursive
