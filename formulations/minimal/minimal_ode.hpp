// The equations of motion in joint coordinates theta by velocity transformation:
//   q = g(theta), v = R(theta) theta_dot, a = R theta_ddot + c(theta, theta_dot)
//   (R^T M R) theta_ddot = R^T (Q - M c)
// Closed (persistent) contacts add bilateral constraints at acceleration level, see the contact
// section below and common/contact_events.hpp.
// N (joint coordinates) and NQ (natural coordinates) are fixed for small models so that the
// right-hand side runs on the stack; Eigen::Dynamic otherwise (sized once at construction).
#pragma once

#include <Eigen/Dense>
#include <array>
#include <cmath>
#include <vector>

#include "core/formulation.hpp"
#include "core/natural_coordinates.hpp"
#include "common/contact_lcp.hpp"
#include "common/fixed_segments.hpp"
#include "minimal/joint_tree.hpp"

namespace mbs::minimal {

template <int N, int NQ>
class MinimalOde {
 public:
  static constexpr int S = N == Eigen::Dynamic ? Eigen::Dynamic : 2 * N;
  using State = Eigen::Matrix<double, S, 1>;           // y = [theta; theta_dot]
  using VecQ = Eigen::Matrix<double, NQ, 1>;
  using MatR = Eigen::Matrix<double, NQ, N>;
  using MatN = Eigen::Matrix<double, N, N>;
  using VecN = Eigen::Matrix<double, N, 1>;

  MinimalOde(const Model& model, const JointTree& tree)
      : tree_(tree), n_(tree.ndof), dim_(model.dim), m_(model.mass_diagonal()), Q_(NaturalCoordinates(model).Q()),
        work_(model.nq(), tree.ndof), mass_llt_(tree.ndof), cs_(model), nct_(cs_.size()),
        cG_(nct_, n_), cY_(n_, nct_), cD_(nct_, nct_), cb_(nct_),
        cx_(nct_), cforce_(nct_), ctmp_(n_), cdy_(2 * n_), lcp_(nct_) {
    if constexpr (kFixed) {  // the sizes make_sized() fixes belong to planar trees of rods only
      for (int i = 0; i < N; ++i) {
        const Link& l = tree.links[i];
        if (l.free || dim_ != 2 || static_cast<int>(tree.links.size()) != N)
          throw SolverError("minimal: the fixed-size path takes planar rods only");
        rods_[i] = {2 * l.point, l.parent == kGround ? -1 : 2 * l.parent, l.dof, l.anchor, l.length * tree.down,
                    l.length * tree.side};
      }
    }
    // With every link hanging from ground (or free), R^T M R does not depend on theta:
    // each column of R is L du/dtheta with |du/dtheta| = 1, and distinct links touch distinct points.
    constant_mass_ = true;
    for (const Link& l : tree.links) constant_mass_ = constant_mass_ && (l.free || l.parent == kGround);
    if (constant_mass_) {
      State y0(2 * n_);
      initial_state(model, y0);
      kinematics(y0, work_);
      work_.Mbar.noalias() = work_.R.transpose() * m_.asDiagonal() * work_.R;
      mass_llt_.compute(work_.Mbar);
      inv_mass_ = 1.0 / work_.Mbar(0, 0);
    }
  }

  int size() const { return 2 * n_; }

  // Always inlined: into FixedButcherRk's unrolled step the right-hand side's locals then stay
  // in registers (docs/formulations.md, Method notes).
  EIGEN_ALWAYS_INLINE void rhs(double /*t*/, const State& y, State& dydt) {
    // Fixed sizes: the work arrays live on the stack, in registers; dynamic: preallocated members.
    if constexpr (kFixed) {
      Work w;
      rhs(y, dydt, w);
    } else {
      rhs(y, dydt, work_);
    }
  }

 private:
  static constexpr bool kFixed = N != Eigen::Dynamic && NQ != Eigen::Dynamic;
  using Contact = ContactRow;

  struct Work {
    VecQ r, c;    // positions and convective accelerations of the points
    VecQ f;       // Q - M c
    MatR R;       // dq/dtheta
    MatR MR;      // M R
    MatN Mbar;    // R^T M R
    VecN Qbar;    // R^T (Q - M c)
    Eigen::LLT<MatN> llt;
    Work() = default;
    Work(int nq, int n) : r(nq), c(nq), f(nq), R(nq, n), MR(nq, n), Mbar(n, n), Qbar(n), llt(n) {}
  };

  // Always inlined: with the contact code around, GCC stopped inlining it into the RK4 step, which
  // slowed it (docs/formulations.md, Method notes); the contact branch stays out of line
  // (constrain()).
  EIGEN_ALWAYS_INLINE void rhs(const State& y, State& dydt, Work& w) const {
    kinematics(y, w);
    // Through work arrays: a product of expressions would make Eigen allocate a temporary.
    if (constant_mass_) {  // every link from ground: each point's c lies along its own rod, normal to R
      w.Qbar.noalias() = w.R.transpose() * Q_;
    } else {
      w.f = Q_ - m_.cwiseProduct(w.c);
      w.Qbar.noalias() = w.R.transpose() * w.f;
    }
    angles(dydt) = rates(y);
    if (constant_mass_) {  // factored once at setup
      if constexpr (N == 1) dydt[1] = w.Qbar[0] * inv_mass_;
      else rates(dydt) = mass_llt_.solve(w.Qbar);
      if (cs_.num_closed() != 0) constrain(dydt, w, mass_llt_);
      return;
    }
    w.MR.noalias() = m_.asDiagonal() * w.R;
    w.Mbar.noalias() = w.R.transpose() * w.MR;
    w.llt.compute(w.Mbar);
    rates(dydt) = w.llt.solve(w.Qbar);
    if (cs_.num_closed() != 0) constrain(dydt, w, w.llt);
  }

  // G_j = n_j^T R_p (the contact normal's row in joint space) into ctmp_, and returns n_j^T c_p
  // (the normal convective acceleration: the normal acceleration is G_j theta_ddot + n_j^T c_p).
  double contact_row(const Contact& c, const Work& w) const {
    ctmp_ = c.n[0] * w.R.row(c.off).transpose();
    double gamma = c.n[0] * w.c[c.off];
    for (int d = 1; d < dim_; ++d) {
      ctmp_ += c.n[d] * w.R.row(c.off + d).transpose();
      gamma += c.n[d] * w.c[c.off + d];
    }
    return gamma;
  }

  // Closed contacts as bilateral constraints at acceleration level:
  //   theta_ddot = theta_ddot_free + Mbar^-1 G^T f,  (G Mbar^-1 G^T) f = -(G theta_ddot_free + n^T c)
  // f (N) are the contact forces along the normals (> 0 pushing), kept in cforce_ for the release
  // test. They are not clipped inside the right-hand side (which stays smooth within a step): a
  // contact whose force would pull is released between steps (common/contact_events.hpp).
  template <class Llt>
  EIGEN_DONT_INLINE void constrain(State& dydt, const Work& w, const Llt& llt) const {
    const int k = cs_.num_closed();
    for (int a = 0; a < k; ++a) {
      const double gamma = contact_row(cs_.row(cs_.closed_index(a)), w);
      cG_.row(a) = ctmp_.transpose();
      cb_[a] = ctmp_.dot(dydt.tail(n_)) + gamma;
      llt.solveInPlace(ctmp_);
      cY_.col(a) = ctmp_;
    }
    cD_.topLeftCorner(k, k).noalias() = cG_.topRows(k) * cY_.leftCols(k);
    lcp_.solve_equalities(cD_, cb_, k, cx_);
    for (int a = 0; a < k; ++a) {
      cforce_[cs_.closed_index(a)] = cx_[a];
      dydt.tail(n_) += cx_[a] * cY_.col(a);
    }
  }

  // theta and theta_dot within a state (fixed-size segments for the fixed sizes).
  template <typename Y>
  auto angles(Y& y) const { return head_of<N>(y, n_); }
  template <typename Y>
  auto rates(Y& y) const { return tail_of<N>(y, n_); }

  // kinematics() for the fixed sizes (planar rods): the loop over the N links unrolls with every
  // offset a constant of rods_; the same arithmetic as the generic loop below.
  EIGEN_ALWAYS_INLINE void fixed_kinematics(const State& y, Work& w) const {
    if constexpr (N == 1) {  // one rod from the ground, its point the only one: no offset to look up,
      // R assigned whole (an element-wise += on R, read back as a vector, stalls store forwarding)
      const FixedRod& l = rods_[0];
      const double th = y[0], om = y[1];
      const double co = std::cos(th), si = std::sin(th);
      const Eigen::Vector2d e = co * l.Ld + si * l.Ls;
      w.r = l.anchor + e;
      w.c = -(om * om) * e;
      w.R = co * l.Ls - si * l.Ld;
      return;
    }
    w.R.setZero();
    for (int i = 0; i < (kFixed ? N : 0); ++i) {
      const FixedRod& l = rods_[i];
      const double th = y[l.dof], om = y[n_ + l.dof];
      const double co = std::cos(th), si = std::sin(th);
      const Eigen::Vector2d e = co * l.Ld + si * l.Ls;    // L u
      const Eigen::Vector2d et = co * l.Ls - si * l.Ld;   // L du/dtheta
      Eigen::Vector2d r = l.anchor, c = Eigen::Vector2d::Zero();
      if (l.parent >= 0) {
        w.R.row(l.off) = w.R.row(l.parent);
        w.R.row(l.off + 1) = w.R.row(l.parent + 1);
        r = w.r.template segment<2>(l.parent);
        c = w.c.template segment<2>(l.parent);
      }
      w.r.template segment<2>(l.off) = r + e;
      w.c.template segment<2>(l.off) = c - (om * om) * e;
      w.R(l.off, l.dof) += et[0];
      w.R(l.off + 1, l.dof) += et[1];
    }
  }

  // Positions r, velocity Jacobian R and convective accelerations c for the state y.
  EIGEN_ALWAYS_INLINE void kinematics(const State& y, Work& w) const {
    if constexpr (kFixed) {
      fixed_kinematics(y, w);
      return;
    }
    w.R.setZero();
    for (const Link& l : tree_.links) {
      const int off = dim_ * l.point;
      if (l.free) {
        w.r.segment(off, dim_) = y.segment(l.dof, dim_);
        w.R.block(off, l.dof, dim_, dim_).setIdentity();
        w.c.segment(off, dim_).setZero();
        continue;
      }
      const double th = y[l.dof], om = y[n_ + l.dof];
      const double co = std::cos(th), si = std::sin(th);
      double rx = l.anchor[0], ry = l.anchor[1], cx = 0.0, cy = 0.0;
      if (l.parent != kGround) {
        const int po = dim_ * l.parent;
        w.R.row(off) = w.R.row(po);
        w.R.row(off + 1) = w.R.row(po + 1);
        rx = w.r[po], ry = w.r[po + 1], cx = w.c[po], cy = w.c[po + 1];
      }
      const Eigen::Vector2d u = co * tree_.down + si * tree_.side;    // unit vector along the rod
      const Eigen::Vector2d ut = -si * tree_.down + co * tree_.side;  // du/dtheta
      w.r[off] = rx + l.length * u[0];
      w.r[off + 1] = ry + l.length * u[1];
      w.c[off] = cx - l.length * om * om * u[0];
      w.c[off + 1] = cy - l.length * om * om * u[1];
      w.R(off, l.dof) += l.length * ut[0];
      w.R(off + 1, l.dof) += l.length * ut[1];
    }
  }

 public:
  // The model's natural coordinates for state y.
  template <typename VQ>
  void model_state(const State& y, VQ& q, VQ& v) {
    kinematics(y, work_);
    q = work_.r;
    v.noalias() = work_.R * y.tail(n_);
  }

  // Joint coordinates of the model's initial state (assumed consistent: the loader checks it).
  void initial_state(const Model& model, State& y) const {
    for (const Link& l : tree_.links) {
      const PointMass& p = model.points[l.point];
      if (l.free) {
        y.segment(l.dof, dim_) = p.r0;
        y.segment(n_ + l.dof, dim_) = p.v0;
        continue;
      }
      Eigen::Vector2d d = p.r0.head<2>(), dv = p.v0.head<2>();
      if (l.parent == kGround) {
        d -= l.anchor;
      } else {
        d -= model.points[l.parent].r0.head<2>();
        dv -= model.points[l.parent].v0.head<2>();
      }
      y[l.dof] = std::atan2(d.dot(tree_.side), d.dot(tree_.down));
      y[n_ + l.dof] = (d[0] * dv[1] - d[1] * dv[0]) / d.squaredNorm();
    }
  }

  // ---- Contacts (frictionless point-plane; the event logic is in common/contact_events.hpp) ----
  ContactSet& contact_set() { return cs_; }

  // Gaps (m, >= 0 admissible) and normal velocities (m/s, < 0 approaching) of every contact at y.
  void contact_state(const State& y, Eigen::VectorXd& gap, Eigen::VectorXd& vn) {
    kinematics(y, work_);
    for (int j = 0; j < nct_; ++j) {
      const Contact& c = cs_.row(j);
      double g = -c.d0, v = 0.0;
      for (int d = 0; d < dim_; ++d) {
        g += c.n[d] * work_.r[c.off + d];
        v += c.n[d] * work_.R.row(c.off + d).dot(y.tail(n_));
      }
      gap[j] = g;
      vn[j] = v;
    }
  }

  // Forces (N, > 0 pushing) of the closed contacts at y, into force[j] (others untouched).
  void closed_forces(const State& y, Eigen::VectorXd& force) {
    rhs(0.0, y, cdy_);
    for (int a = 0; a < cs_.num_closed(); ++a) force[cs_.closed_index(a)] = cforce_[cs_.closed_index(a)];
  }

  // Impact: theta_dot += Mbar^-1 G^T P over the k contacts idx[0..k), the impulses P (N s, along
  // the normals) from the mixed complementarity problem (contact_lcp.hpp)
  //   w = G theta_dot+ + e_j min(G theta_dot-, 0) = D P + b,  D = G Mbar^-1 G^T,
  //   w_a = 0 where eq[a] (closing contacts: bilateral), else w_a >= 0, P_a >= 0, w_a P_a = 0,
  // i.e. Newton's law (G theta_dot)+ = -e (G theta_dot)- for the contacts that receive an impulse.
  // Returns P in impulse[0..k) and the post-impact normal velocities in vn_after[0..k).
  void apply_impulses(State& y, const std::vector<int>& idx, const std::vector<char>& eq,
                      const Eigen::VectorXd& e, int k, Eigen::VectorXd& impulse, Eigen::VectorXd& vn_after) {
    kinematics(y, work_);
    if (!constant_mass_) {
      work_.MR.noalias() = m_.asDiagonal() * work_.R;
      work_.Mbar.noalias() = work_.R.transpose() * work_.MR;
      work_.llt.compute(work_.Mbar);
    }
    for (int a = 0; a < k; ++a) {
      contact_row(cs_.row(idx[a]), work_);
      cG_.row(a) = ctmp_.transpose();
      const double vn = ctmp_.dot(y.tail(n_));
      cb_[a] = vn + e[a] * std::min(vn, 0.0);
      if (constant_mass_) mass_llt_.solveInPlace(ctmp_);
      else work_.llt.solveInPlace(ctmp_);
      cY_.col(a) = ctmp_;
    }
    cD_.topLeftCorner(k, k).noalias() = cG_.topRows(k) * cY_.leftCols(k);
    lcp_.solve(cD_, cb_, eq, k, impulse);
    for (int a = 0; a < k; ++a) y.tail(n_) += impulse[a] * cY_.col(a);
    for (int a = 0; a < k; ++a) vn_after[a] = cG_.row(a).dot(y.tail(n_));
  }

 private:
  // A rod of the fixed-size path: its point's and parent's first coordinates (-1: ground), its
  // angle, the ground anchor, and L d, L s (m).
  struct FixedRod {
    int off = 0, parent = -1, dof = 0;
    Eigen::Vector2d anchor = Eigen::Vector2d::Zero(), Ld = Eigen::Vector2d::Zero(), Ls = Eigen::Vector2d::Zero();
  };

  const JointTree& tree_;
  int n_, dim_;
  std::array<FixedRod, (N == Eigen::Dynamic ? 0 : N)> rods_{};
  VecQ m_, Q_;  // mass diagonal (kg) and applied forces (N) in natural coordinates
  Work work_;   // dynamic sizes, and the observer's model_state()
  bool constant_mass_ = false;
  Eigen::LLT<MatN> mass_llt_;  // R^T M R when constant
  double inv_mass_ = 0.0;      // its inverse when N == 1

  // Contacts: all storage sized at setup; the right-hand side's scratch is mutable (rhs is const).
  ContactSet cs_;
  int nct_ = 0;
  mutable Eigen::MatrixXd cG_, cY_, cD_;  // G (k x n), Mbar^-1 G^T (n x k), G Mbar^-1 G^T
  mutable Eigen::VectorXd cb_, cx_, cforce_;
  mutable VecN ctmp_;
  State cdy_;
  mutable ContactLcp lcp_;
};

}  // namespace mbs::minimal
