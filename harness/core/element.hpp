// What an element kind (a joint, a force element, a contact) provides to the core.
//
// An element kind is one unit under harness/elements/: its YAML reading and validation, and what it
// adds to the equations in natural coordinates: constraint rows (joints), applied forces with their
// Jacobians and potential (force elements), or contact data (contacts), and what the formulations
// that do not work in natural coordinates read of it: a joint's description as a tree joint, a
// contact's gap form. It registers itself by name once (MBS_REGISTER_ELEMENT_KIND,
// problem/element_kinds.hpp), for its YAML; the harness and the formulations never name a kind.
//
// Formulations declare which roles they accept, and which tree joints (Formulation::accepts): an
// element of a role a formulation has not declared is `unsupported` there, with a generated reason.
#pragma once

#include <Eigen/Dense>
#include <array>
#include <optional>
#include <string>
#include <vector>

namespace mbs {

struct Model;
struct Anchor;  // core/model.hpp

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

// A joint as the joint-coordinate formulations' tree builders read it (recursive's
// build_spatial_tree, minimal's rod tree and hinge): which two anchors it joins and what it leaves
// free between them.
enum class TreeJointType {
  kNone,       // no tree-joint description (not a joint, or a kind that gives none)
  kRevolute,   // one rotation about `axis` (planar: about the plane's normal, `axis` empty)
  kPrismatic,  // one translation along `axis`, rotation locked
  kSpherical,  // every rotation about the common point (planar: a pin)
  kFixed,      // nothing: a weld
  kRod,        // the distance `length` between two points kept (spherical ends; planar: pins)
};
const char* to_string(TreeJointType type);

struct TreeJoint {
  TreeJointType type = TreeJointType::kNone;
  const Anchor* a = nullptr;  // the two ends (the element's own anchors); a ground end is `a`
  const Anchor* b = nullptr;
  Eigen::VectorXd axis;       // revolute (spatial), prismatic: unit, local frame at the initial configuration
  double length = 0.0;        // rod (m)
};

// A contact as the harness scores it and the contact formulations integrate it: the gap
// g = n . (r - p0) (m, >= 0 when admissible) and the normal velocity n . r' (m/s, < 0 when
// approaching) of a point whose coordinates are q[offset, offset + dim), against a fixed plane
// through p0 with unit normal n; Newton's restitution e at an impact. Built once per run: loops
// evaluate it inline, with no virtual call a step.
struct ContactGap {
  int offset = 0;
  Eigen::VectorXd point, normal;  // p0, n (dim)
  double restitution = 0.0;       // e, 0..1
  template <typename Vec>
  double gap(const Vec& q) const { return normal.dot(q.segment(offset, normal.size()) - point); }
  template <typename Vec>
  double normal_velocity(const Vec& v) const { return normal.dot(v.segment(offset, normal.size())); }
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

  // Joints: the joint as a tree joint (type kNone: the kind gives no such description, and the
  // joint-coordinate formulations report it unsupported).
  virtual TreeJoint tree_joint() const { return {}; }
  // Contacts: the gap form (empty: the kind gives none; core/contact.hpp's contact_gaps throws).
  virtual std::optional<ContactGap> contact_gap(const Model& /*model*/) const { return std::nullopt; }
};

}  // namespace mbs
