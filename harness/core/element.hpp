// What an element kind (a joint, a force element, a contact) provides to the core.
//
// An element kind is one unit under harness/elements/: its YAML reading and validation, and what it
// adds to the equations in natural coordinates: constraint rows (joints), applied forces with their
// Jacobians and potential (force elements), or contact data (contacts). It registers itself by name
// (MBS_REGISTER_ELEMENT_KIND, problem/element_kinds.hpp); the harness never names a kind.
//
// Formulations declare which roles (and, where they must understand the kind itself, which kinds)
// they accept (Formulation::accepts): a kind of a role a formulation has not declared is
// `unsupported` there, with a generated reason.
#pragma once

#include <Eigen/Dense>
#include <array>
#include <string>
#include <vector>

namespace mbs {

struct Model;

// What an element contributes to the equations. Statuses of support are decided per role.
enum class ElementRole {
  kJoint,    // bilateral holonomic constraint rows Phi(q) = 0
  kForce,    // applied forces Q(q, v) with their Jacobians
  kContact,  // unilateral contacts with an impact law
};
const char* to_string(ElementRole role);

// Where an element was written in its problem file (1-based; 0 when built in code).
struct SourceMark {
  int line = 0, column = 0;
};

// d = c + sum_t w_t q[off_t .. off_t + dim): an affine combination of coordinate blocks (a point of
// a body is r_G + sum_k p_k u_k: at most 1 + dim blocks; a relative position of two body points at
// most 2 (1 + dim) = 8 blocks).
struct Combo {
  using Small = Eigen::Matrix<double, Eigen::Dynamic, 1, 0, 3, 1>;  // dim <= 3, never allocates
  Small c;
  int n = 0;
  std::array<int, 8> off{};
  std::array<double, 8> w{};
  void add(int offset, double weight);  // throws std::logic_error past 8 blocks
  template <typename Vec>
  Small eval(const Vec& q) const {
    Small x = c;
    for (int t = 0; t < n; ++t) x.noalias() += w[t] * q.segment(off[t], c.size());
    return x;
  }
  // Rate of d: the constant part does not move.
  template <typename Vec>
  Small rate(const Vec& v) const {
    Small x = Small::Zero(c.size());
    for (int t = 0; t < n; ++t) x.noalias() += w[t] * v.segment(off[t], c.size());
    return x;
  }
  // x += s J^T f: the generalized force of a force f (dim) applied where d points.
  template <typename Vec, typename F>
  void add_transpose(double s, const F& f, Vec&& x) const {
    for (int t = 0; t < n; ++t) x.segment(off[t], c.size()) += (s * w[t]) * f;
  }
};

// One scalar constraint, a bilinear form of two combinations: Phi = s (d1 . d2 - c). With s chosen so
// that Phi is in metres (and Phi_q v in m/s), e.g. a rod (d.d - L^2) / (2 L), a coincident point
// component e_c . (r_A - r_B), an axis kept normal to another l (a . n).
struct ConstraintRow {
  Combo d1, d2;
  bool same = false;  // d2 == d1: evaluated once
  double s = 1.0, c = 0.0;
  double scale = 1.0;  // m: the length the initial-state tolerance is relative to
};

class Element {
 public:
  virtual ~Element() = default;

  std::string name;
  SourceMark mark;

  virtual const char* kind() const = 0;  // the registered kind name, as written in problem files
  virtual ElementRole role() const = 0;

  // Joints: how many constraint rows (never depends on q), and the rows, appended in a fixed order.
  virtual int row_count(int /*dim*/) const { return 0; }
  virtual void add_rows(const Model& /*model*/, std::vector<ConstraintRow>& /*rows*/) const {}

  // Force elements: Q += the generalized force in natural coordinates (N, or N m per unit vector
  // coordinate), and its Jacobians dQ/dq, dQ/dv (dense, nq x nq, added to). No allocation.
  virtual void add_force(const Model& /*model*/, const Eigen::Ref<const Eigen::VectorXd>& /*q*/,
                         const Eigen::Ref<const Eigen::VectorXd>& /*v*/, Eigen::Ref<Eigen::VectorXd> /*Q*/) const {}
  virtual void add_force_jacobians(const Model& /*model*/, const Eigen::Ref<const Eigen::VectorXd>& /*q*/,
                                   const Eigen::Ref<const Eigen::VectorXd>& /*v*/, Eigen::Ref<Eigen::MatrixXd> /*dQ_dq*/,
                                   Eigen::Ref<Eigen::MatrixXd> /*dQ_dv*/) const {}
  // The potential (J) whose decrease is the element's work, when it has one; see the two below.
  virtual double potential_energy(const Model& /*model*/, const Eigen::Ref<const Eigen::VectorXd>& /*q*/) const { return 0.0; }
  // True when the element's work is exactly minus the change of potential_energy(); false for
  // dampers (and spatial torques): the total energy is then no invariant, and a problem with such
  // an element is scored by its reference error, not by energy.
  virtual bool has_potential() const { return true; }
  // Non-zero when the potential is defined only up to multiples of this (J): a constant torque's
  // -tau theta with theta = atan2(..); scoring unwraps it between steps.
  virtual double potential_period() const { return 0.0; }
};

}  // namespace mbs
