// The arithmetic of NaturalCoordinates' constraint functions (Phi, Phi_q, Phi_q v, d/dt(Phi_q) v,
// the geometric stiffness), as inline templates over any Eigen vector and matrix types.
//
// NaturalCoordinates' member functions instantiate them on Eigen::Ref (one out-of-line copy for
// every caller). A formulation whose sizes are fixed (the pendulums' 2 to 4 coordinates) calls them
// directly on its fixed-size vectors and matrices, so that nothing goes through a Ref or a call:
// on the planar pendulum the Ref path costs about as much as the rest of a right-hand side. Each
// function dispatches once on the dimension to a body whose combinations have 2 or 3 components.
#pragma once

#include <Eigen/Dense>
#include <algorithm>
#include <type_traits>
#include <vector>

#include "core/element.hpp"
#include "core/natural_coordinates.hpp"

namespace mbs::rows {

template <int D>
using Vd = Eigen::Matrix<double, D, 1>;

template <int D, typename Vec>
Vd<D> eval(const Combo& d, const Vec& q) {
  Vd<D> x = d.c;
  for (int t = 0; t < d.n; ++t) x.noalias() += d.w[t] * q.template segment<D>(d.off[t]);
  return x;
}
template <int D, typename Vec>
Vd<D> rate(const Combo& d, const Vec& v) {
  Vd<D> x = Vd<D>::Zero();
  for (int t = 0; t < d.n; ++t) x.noalias() += d.w[t] * v.template segment<D>(d.off[t]);
  return x;
}

// out = 0: fixed sizes inline; dynamic ones in one memset when contiguous, not one per column
// (what setZero() makes of a strided Ref: for small Jacobians the calls cost more than the stores).
template <typename Out>
void zero(Out& out) {
  if constexpr (Out::SizeAtCompileTime != Eigen::Dynamic) {
    out.setZero();
  } else {
    if (out.outerStride() == out.rows()) {
      std::fill_n(out.data(), out.size(), 0.0);
      return;
    }
    out.setZero();
  }
}

template <int D, typename Q, typename Out>
void phi(const std::vector<ConstraintRow>& rows, const Q& q, Out& out) {
  const int nc = static_cast<int>(rows.size());
  for (int k = 0; k < nc; ++k) {
    const ConstraintRow& r = rows[k];
    const Vd<D> d1 = eval<D>(r.d1, q);
    out[k] = r.s * ((r.same ? d1.squaredNorm() : d1.dot(eval<D>(r.d2, q))) - r.c);
  }
}

template <int D, typename Q, typename Out>
void phi_q(const std::vector<ConstraintRow>& rows, const Q& q, Out& out) {
  zero(out);
  const int nc = static_cast<int>(rows.size());
  for (int k = 0; k < nc; ++k) {
    const ConstraintRow& r = rows[k];
    const Vd<D> d1 = eval<D>(r.d1, q);
    if (r.same) {  // s d(d.d)/dq = 2 s d^T J
      for (int t = 0; t < r.d1.n; ++t) out.row(k).template segment<D>(r.d1.off[t]) += (2.0 * r.s * r.d1.w[t]) * d1.transpose();
      continue;
    }
    const Vd<D> d2 = eval<D>(r.d2, q);  // s (d2^T J1 + d1^T J2)
    for (int t = 0; t < r.d1.n; ++t) out.row(k).template segment<D>(r.d1.off[t]) += (r.s * r.d1.w[t]) * d2.transpose();
    for (int t = 0; t < r.d2.n; ++t) out.row(k).template segment<D>(r.d2.off[t]) += (r.s * r.d2.w[t]) * d1.transpose();
  }
}

template <int D, typename Q, typename V, typename Out>
void phi_q_times(const std::vector<ConstraintRow>& rows, const Q& q, const V& v, Out& out) {
  const int nc = static_cast<int>(rows.size());
  for (int k = 0; k < nc; ++k) {
    const ConstraintRow& r = rows[k];
    const Vd<D> d1 = eval<D>(r.d1, q), v1 = rate<D>(r.d1, v);
    out[k] = r.same ? 2.0 * r.s * d1.dot(v1) : r.s * (v1.dot(eval<D>(r.d2, q)) + d1.dot(rate<D>(r.d2, v)));
  }
}

// Phi'' = s (d1''.d2 + 2 d1'.d2' + d1.d2''): the velocity part is 2 s d1'.d2'.
template <int D, typename V, typename Out>
void phi_q_dot_v(const std::vector<ConstraintRow>& rows, const V& v, Out& out) {
  const int nc = static_cast<int>(rows.size());
  for (int k = 0; k < nc; ++k) {
    const ConstraintRow& r = rows[k];
    const Vd<D> v1 = rate<D>(r.d1, v);
    out[k] = 2.0 * r.s * (r.same ? v1.squaredNorm() : v1.dot(rate<D>(r.d2, v)));
  }
}

// d2Phi_k/dq2 = s (J1^T J2 + J2^T J1), each J a row of w_t I blocks.
template <int D, typename Mu, typename K>
void add_phi_qq_times(const std::vector<ConstraintRow>& rows, const Mu& mu, K& Kout) {
  const int nc = static_cast<int>(rows.size());
  for (int k = 0; k < nc; ++k) {
    const ConstraintRow& r = rows[k];
    const Combo& d2 = r.same ? r.d1 : r.d2;
    for (int t = 0; t < r.d1.n; ++t)
      for (int u = 0; u < d2.n; ++u) {
        const double x = mu[k] * r.s * r.d1.w[t] * d2.w[u];
        for (int c = 0; c < D; ++c) {
          Kout(r.d1.off[t] + c, d2.off[u] + c) += x;
          Kout(d2.off[u] + c, r.d1.off[t] + c) += x;
        }
      }
  }
}

template <typename T>
inline constexpr bool kFixed = std::decay_t<T>::SizeAtCompileTime != Eigen::Dynamic;

// NaturalCoordinates' members of these names, called as rows::Phi(nat, q, out) etc.: inline on the
// caller's own types when they are all fixed-size, the out-of-line member otherwise.
template <typename Q, typename Out>
void Phi(const NaturalCoordinates& nat, const Q& q, Out&& out) {
  if constexpr (kFixed<Q> && kFixed<Out>) nat.dim() == 2 ? phi<2>(nat.rows(), q, out) : phi<3>(nat.rows(), q, out);
  else nat.Phi(q, out);
}
template <typename Q, typename Out>
void Phi_q(const NaturalCoordinates& nat, const Q& q, Out&& out) {
  if constexpr (kFixed<Q> && kFixed<Out>) nat.dim() == 2 ? phi_q<2>(nat.rows(), q, out) : phi_q<3>(nat.rows(), q, out);
  else nat.Phi_q(q, out);
}
template <typename Q, typename V, typename Out>
void Phi_q_times(const NaturalCoordinates& nat, const Q& q, const V& v, Out&& out) {
  if constexpr (kFixed<Q> && kFixed<V> && kFixed<Out>)
    nat.dim() == 2 ? phi_q_times<2>(nat.rows(), q, v, out) : phi_q_times<3>(nat.rows(), q, v, out);
  else nat.Phi_q_times(q, v, out);
}
template <typename Q, typename V, typename Out>
void Phi_q_dot_v(const NaturalCoordinates& nat, const Q& q, const V& v, Out&& out) {
  if constexpr (kFixed<V> && kFixed<Out>) nat.dim() == 2 ? phi_q_dot_v<2>(nat.rows(), v, out) : phi_q_dot_v<3>(nat.rows(), v, out);
  else nat.Phi_q_dot_v(q, v, out);
}
template <typename Mu, typename K>
void add_Phi_qq_times(const NaturalCoordinates& nat, const Mu& mu, K&& Kout) {
  if constexpr (kFixed<Mu> && kFixed<K>)
    nat.dim() == 2 ? add_phi_qq_times<2>(nat.rows(), mu, Kout) : add_phi_qq_times<3>(nat.rows(), mu, Kout);
  else nat.add_Phi_qq_times(mu, Kout);
}

}  // namespace mbs::rows
