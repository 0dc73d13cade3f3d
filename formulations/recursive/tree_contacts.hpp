// Frictionless point-plane contacts on the points of a kinematic tree, for the event logic of
// common/contact_events.hpp (which states the method: located impacts, Newton's law through a small
// complementarity problem, persistent contacts as bilateral constraints at acceleration level).
//
// A contact's point is a tree body's point (a point mass at the end of its rod, or a free point).
// Its row in the tree's velocity coordinates is G_j = n^T J_p, with J_p's column for a DOF k of an
// ancestor body b the velocity its motion gives the point, omega_k x (x_p - o_b) + v_k (world); its
// velocity-product acceleration is n^T (Jdot v), the point's classical acceleration at qdd = 0 without
// gravity, from the bias accelerations a_b = X a_parent + c_b. Impulses and constraint forces act
// through H^-1 G^T, with H the joint-space mass matrix by CRBA and its tree-sparse L^T D L, so a
// contact costs O(N d) to O(N d^2) when it acts, and nothing in a step without one closed.
#pragma once

#include <Eigen/Dense>
#include <vector>

#include "common/contact_lcp.hpp"
#include "core/model.hpp"
#include "recursive/spatial_tree.hpp"

namespace mbs::recursive {

class TreeContacts {
 public:
  TreeContacts(const Model& model, const SpatialTree& tree)
      : tree_(tree), cs_(model), nct_(cs_.size()), body_(nct_, -1), G_(nct_, tree.nv), Y_(tree.nv, nct_), D_(nct_, nct_),
        b_(nct_), x_(nct_), force_(nct_), ab_(tree.bodies.size(), Vec6::Zero()), lcp_(nct_) {
    for (int j = 0; j < nct_; ++j) {
      const int point = cs_.row(j).off / model.dim;
      for (size_t i = 0; i < tree.bodies.size(); ++i)
        if (tree.bodies[i].point == point) body_[j] = static_cast<int>(i);
    }
  }

  // Whether every contact's point is a tree body's (else the formulation refuses the model).
  bool mapped() const {
    for (int b : body_)
      if (b < 0) return false;
    return true;
  }
  bool active() const { return nct_ > 0; }
  ContactSet& set() { return cs_; }
  int num_closed() const { return cs_.num_closed(); }

  // Gaps (m) and normal velocities (m/s) of every contact at (q, v).
  void state(const Eigen::Ref<const Eigen::VectorXd>& q, const Eigen::Ref<const Eigen::VectorXd>& v, TreeWorkspace& ws,
             Eigen::VectorXd& gap, Eigen::VectorXd& vn) const {
    kinematics(tree_, q, v, ws);
    world_frames(tree_, ws);
    for (int j = 0; j < nct_; ++j) {
      const int i = body_[j];
      const TreeBody& b = tree_.bodies[i];
      const Vec3 n = cs_.row(j).n;
      gap[j] = n.dot(ws.ow[i] + ws.Rw[i] * b.com) - cs_.row(j).d0;
      vn[j] = n.dot(ws.Rw[i] * (ws.v[i].tail<3>() + ws.v[i].head<3>().cross(b.com)));
    }
  }

  // Closed contacts as bilateral constraints at acceleration level, after the free qdd:
  //   qdd = qdd_free + H^-1 G^T f,  (G H^-1 G^T) f = -(G qdd_free + n^T Jdot v).
  // Their forces (N, > 0 pushing) are kept for closed_forces().
  // Out of line: the right-hand side without closed contacts compiles as it did without contacts.
  EIGEN_DONT_INLINE void constrain(const Eigen::Ref<const Eigen::VectorXd>& q, const Eigen::Ref<const Eigen::VectorXd>& v,
                                   TreeWorkspace& ws, Eigen::Ref<Eigen::VectorXd> qdd) {
    const int k = cs_.num_closed();
    prepare(q, v, ws, true);
    for (int a = 0; a < k; ++a) {
      const double gamma = row(cs_.closed_index(a), ws, a, true);
      b_[a] = G_.row(a).dot(qdd) + gamma;
    }
    D_.topLeftCorner(k, k).noalias() = G_.topRows(k) * Y_.leftCols(k);
    lcp_.solve_equalities(D_, b_, k, x_);
    for (int a = 0; a < k; ++a) {
      force_[cs_.closed_index(a)] = x_[a];
      qdd.noalias() += x_[a] * Y_.col(a);
    }
  }
  // The closed contacts' forces of the last constrain(), into force[j] (others untouched).
  void closed_forces(Eigen::VectorXd& force) const {
    for (int a = 0; a < cs_.num_closed(); ++a) force[cs_.closed_index(a)] = force_[cs_.closed_index(a)];
  }

  // Impact: v += H^-1 G^T P over the contacts idx[0..k), P from the complementarity problem of
  // contact_lcp.hpp with w = G v+ + e_j min(G v-, 0) (Newton's law where P > 0; w = 0 where eq).
  void apply_impulses(const Eigen::Ref<const Eigen::VectorXd>& q, Eigen::Ref<Eigen::VectorXd> v, TreeWorkspace& ws,
                      const std::vector<int>& idx, const std::vector<char>& eq, const Eigen::VectorXd& e, int k,
                      Eigen::VectorXd& impulse, Eigen::VectorXd& vn_after) {
    prepare(q, v, ws, false);
    for (int a = 0; a < k; ++a) {
      row(idx[a], ws, a, false);
      const double vn = G_.row(a).dot(v);
      b_[a] = vn + e[a] * std::min(vn, 0.0);
    }
    D_.topLeftCorner(k, k).noalias() = G_.topRows(k) * Y_.leftCols(k);
    lcp_.solve(D_, b_, eq, k, impulse);
    for (int a = 0; a < k; ++a) v.noalias() += impulse[a] * Y_.col(a);
    for (int a = 0; a < k; ++a) vn_after[a] = G_.row(a).dot(v);
  }

 private:
  // Kinematics, world frames, factored H and (for gamma) the bias accelerations at (q, v).
  void prepare(const Eigen::Ref<const Eigen::VectorXd>& q, const Eigen::Ref<const Eigen::VectorXd>& v, TreeWorkspace& ws,
               bool bias) {
    kinematics(tree_, q, v, ws);
    world_frames(tree_, ws);
    factored_mass_matrix(tree_, ws);
    if (bias) bias_accelerations(tree_, ws, ab_);
  }

  // Contact j's row G_j into G_.row(a), H^-1 G_j^T into Y_.col(a); returns n^T Jdot v when bias.
  double row(int j, const TreeWorkspace& ws, int a, bool bias) {
    const int ip = body_[j];
    const TreeBody& bp = tree_.bodies[ip];
    const Vec3 n = cs_.row(j).n;
    const Vec3 xp = ws.ow[ip] + ws.Rw[ip] * bp.com;
    G_.row(a).setZero();
    for (int i = ip; i >= 0; i = tree_.bodies[i].parent) {
      const TreeBody& b = tree_.bodies[i];
      for (int k = 0; k < b.nv; ++k) {
        const Vec3 w = ws.Rw[i] * b.S.col(k).head<3>(), vo = ws.Rw[i] * b.S.col(k).tail<3>();
        G_(a, b.vi + k) = n.dot(vo + w.cross(xp - ws.ow[i]));
      }
    }
    Y_.col(a) = G_.row(a).transpose();
    ltdl_solve(tree_, ws.H, Y_.col(a));
    if (!bias) return 0.0;
    const Vec3 w = ws.v[ip].head<3>(), vo = ws.v[ip].tail<3>();
    const Vec3 acc = ab_[ip].tail<3>() + ab_[ip].head<3>().cross(bp.com) + w.cross(vo + w.cross(bp.com));
    return n.dot(ws.Rw[ip] * acc);
  }

  const SpatialTree& tree_;
  ContactSet cs_;
  int nct_;
  std::vector<int> body_;            // contact -> tree body of its point
  Eigen::MatrixXd G_, Y_, D_;        // rows, H^-1 G^T, G H^-1 G^T
  Eigen::VectorXd b_, x_, force_;
  std::vector<Vec6> ab_;             // bias accelerations (qdd = 0, no gravity), body coordinates
  ContactLcp lcp_;
};

}  // namespace mbs::recursive
