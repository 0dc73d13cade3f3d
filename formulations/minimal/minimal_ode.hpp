// The equations of motion in joint coordinates theta by velocity transformation:
//   q = g(theta), v = R(theta) theta_dot, a = R theta_ddot + c(theta, theta_dot)
//   (R^T M R) theta_ddot = R^T (Q - M c)
// N (joint coordinates) and NQ (natural coordinates) are fixed for small models so that the
// right-hand side runs on the stack; Eigen::Dynamic otherwise (sized once at construction).
#pragma once

#include <Eigen/Dense>
#include <cmath>

#include "core/natural_coordinates.hpp"
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
        work_(model.nq(), tree.ndof), mass_llt_(tree.ndof) {
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

  void rhs(double /*t*/, const State& y, State& dydt) {
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

  void rhs(const State& y, State& dydt, Work& w) const {
    kinematics(y, w);
    // Through work arrays: a product of expressions would make Eigen allocate a temporary.
    w.f = Q_ - m_.cwiseProduct(w.c);
    w.Qbar.noalias() = w.R.transpose() * w.f;
    dydt.head(n_) = y.tail(n_);
    if (constant_mass_) {  // factored once at setup
      if constexpr (N == 1) dydt[1] = w.Qbar[0] * inv_mass_;
      else dydt.tail(n_) = mass_llt_.solve(w.Qbar);
      return;
    }
    w.MR.noalias() = m_.asDiagonal() * w.R;
    w.Mbar.noalias() = w.R.transpose() * w.MR;
    w.llt.compute(w.Mbar);
    dydt.tail(n_) = w.llt.solve(w.Qbar);
  }

  // Positions r, velocity Jacobian R and convective accelerations c for the state y.
  EIGEN_STRONG_INLINE void kinematics(const State& y, Work& w) const {
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

 private:
  const JointTree& tree_;
  int n_, dim_;
  VecQ m_, Q_;  // mass diagonal (kg) and applied forces (N) in natural coordinates
  Work work_;   // dynamic sizes, and the observer's model_state()
  bool constant_mass_ = false;
  Eigen::LLT<MatN> mass_llt_;  // R^T M R when constant
  double inv_mass_ = 0.0;      // its inverse when N == 1
};

}  // namespace mbs::minimal
