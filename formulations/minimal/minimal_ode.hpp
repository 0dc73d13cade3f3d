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
      : tree_(tree), n_(tree.ndof), nq_(model.nq()), dim_(model.dim), m_(model.mass_diagonal()),
        Q_(nq_), r_(nq_), c_(nq_), R_(nq_, n_), Mbar_(n_, n_), Qbar_(n_), llt_(n_) {
    NaturalCoordinates nat(model);
    Q_ = nat.Q();
  }

  int size() const { return 2 * n_; }

  void rhs(double /*t*/, const State& y, State& dydt) {
    kinematics(y);
    // Generalized mass and force.
    Mbar_.noalias() = R_.transpose() * m_.asDiagonal() * R_;
    Qbar_.noalias() = R_.transpose() * (Q_ - m_.cwiseProduct(c_));
    dydt.head(n_) = y.tail(n_);
    if constexpr (N == 1) {
      dydt[1] = Qbar_[0] / Mbar_(0, 0);
    } else {
      llt_.compute(Mbar_);
      dydt.tail(n_) = llt_.solve(Qbar_);
    }
  }

  // Positions r, velocity Jacobian R and convective accelerations c for the state y.
  void kinematics(const State& y) {
    R_.setZero();
    for (const Link& l : tree_.links) {
      const int off = dim_ * l.point;
      if (l.free) {
        r_.segment(off, dim_) = y.segment(l.dof, dim_);
        R_.block(off, l.dof, dim_, dim_).setIdentity();
        c_.segment(off, dim_).setZero();
        continue;
      }
      const double th = y[l.dof], w = y[n_ + l.dof];
      const double co = std::cos(th), si = std::sin(th);
      if (l.parent == kGround) {
        r_[off] = l.anchor[0] + l.length * co;
        r_[off + 1] = l.anchor[1] + l.length * si;
        c_[off] = -l.length * w * w * co;
        c_[off + 1] = -l.length * w * w * si;
      } else {
        const int po = dim_ * l.parent;
        R_.row(off) = R_.row(po);
        R_.row(off + 1) = R_.row(po + 1);
        r_[off] = r_[po] + l.length * co;
        r_[off + 1] = r_[po + 1] + l.length * si;
        c_[off] = c_[po] - l.length * w * w * co;
        c_[off + 1] = c_[po + 1] - l.length * w * w * si;
      }
      R_(off, l.dof) += -l.length * si;
      R_(off + 1, l.dof) += l.length * co;
    }
  }

  // The model's natural coordinates for state y.
  template <typename VQ>
  void model_state(const State& y, VQ& q, VQ& v) {
    kinematics(y);
    q = r_;
    v.noalias() = R_ * y.tail(n_);
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
      y[l.dof] = std::atan2(d[1], d[0]);
      y[n_ + l.dof] = (d[0] * dv[1] - d[1] * dv[0]) / d.squaredNorm();
    }
  }

 private:
  const JointTree& tree_;
  int n_, nq_, dim_;
  Eigen::VectorXd m_;
  VecQ Q_, r_, c_;
  MatR R_;
  MatN Mbar_;
  VecN Qbar_;
  Eigen::LLT<MatN> llt_;
};

}  // namespace mbs::minimal
