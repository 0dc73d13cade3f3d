// The generic mechanical model: what a problem file describes, built once and never mutated.
//
// Units are SI throughout: m, kg, s, N, J.
// Space: a model is either planar (dim = 2) or spatial (dim = 3). Every vector stored here is in
// the model's local frame of `dim` components; `origin` and `basis` map it to world coordinates
// (world = origin + basis * local), so a planar problem in the x-z plane is as easy as one in x-y.
//
// Bodies are blocks of natural coordinates (the core's layout, dimension-generic): a point mass is
// its position (dim coordinates); a rigid body is its centroid and the dim unit vectors of its
// principal axes. Everything else (joints, force elements, contacts) is an Element: a plugin kind
// under harness/elements/ that contributes constraint rows, forces or contact data.
#pragma once

#include <Eigen/Dense>
#include <memory>
#include <string>
#include <vector>

#include "core/element.hpp"

namespace mbs {

// Index used for "the ground" wherever a point index is expected.
inline constexpr int kGround = -1;
// Returned by Model::find_point for a name that is not a point.
inline constexpr int kNoPoint = -2;

struct PointMass {
  std::string name;
  double mass = 0.0;      // kg
  Eigen::VectorXd r0;     // initial position, local frame (m)
  Eigen::VectorXd v0;     // initial velocity, local frame (m/s)
};

// A rigid body, planar or spatial. Its natural coordinates are the centroid r_G and the unit
// vectors u_1..u_dim of its principal axes (planar 6 coordinates and 3 rigidity constraints,
// spatial 12 and 6): a body point at principal-frame coordinates p is r_G + sum_k p_k u_k, linear
// in q. With the centroid as origin and principal axes as unit vectors the mass matrix is diagonal:
// m for r_G and J_k = integral of rho x_k^2 dm for u_k (García de Jalón & Bayo, ch. 3).
struct RigidBody {
  std::string name;
  double mass = 0.0;                 // kg, attached point masses included
  Eigen::VectorXd second_moments;    // J_k (kg m^2), about the centroid along principal axis k; dim entries
  Eigen::VectorXd r0, v0;            // centroid position (m) and velocity (m/s), local frame
  Eigen::MatrixXd R0;                // dim x dim; columns: the principal axes in the local frame (det +1)
  Eigen::Vector3d omega0 = Eigen::Vector3d::Zero();  // rad/s, local frame; planar: (0, 0, w) about e1 x e2
  double length_scale = 1.0;         // m: the body's size; scales its rigidity constraints to metres
  // Named body-fixed points (principal-frame coordinates about the centroid, m) that joints, forces
  // and histories refer to as "body.point".
  std::vector<std::pair<std::string, Eigen::VectorXd>> points;
  // The body frame the problem file describes the body in: its centroid c and principal axes V
  // (columns, dim x dim) in that frame; they differ from (0, I) when point masses are attached or
  // a full inertia tensor is given.
  Eigen::VectorXd frame_centroid;
  Eigen::MatrixXd frame_axes;
  Eigen::VectorXd from_body_frame(const Eigen::VectorXd& p) const { return frame_axes.transpose() * (p - frame_centroid); }

  int dim() const { return static_cast<int>(r0.size()); }
  // Central principal moments of inertia (kg m^2): spatial I_1 = J_2 + J_3, ...; planar: (0, 0, J_1 + J_2).
  Eigen::Vector3d principal_inertia() const {
    if (dim() == 2) return Eigen::Vector3d(0.0, 0.0, second_moments.sum());
    const double j = second_moments.sum();
    return Eigen::Vector3d(j - second_moments[0], j - second_moments[1], j - second_moments[2]);
  }
  int find_point(const std::string& point_name) const {
    for (size_t i = 0; i < points.size(); ++i)
      if (points[i].first == point_name) return static_cast<int>(i);
    return -1;
  }
};

// A point a joint or force attaches to: the ground, a point mass, or a point fixed on a rigid body.
struct Anchor {
  int point = kGround;   // point-mass index or kGround; kNoPoint when `body` is set
  int body = -1;         // rigid-body index, or -1
  Eigen::VectorXd at;    // ground: position (local frame, m); body: principal-frame coordinates (m)
  bool is_ground() const { return body < 0 && point == kGround; }
};

struct Model {
  std::string name;
  int dim = 2;                         // 2 (planar) or 3 (spatial)
  Eigen::Vector3d origin = Eigen::Vector3d::Zero();
  Eigen::Matrix3Xd basis;              // 3 x dim, orthonormal columns
  Eigen::VectorXd gravity;             // local frame (m/s^2)
  std::vector<PointMass> points;
  std::vector<RigidBody> bodies;
  // Joints, force elements and contacts, in file order (see core/element.hpp).
  std::vector<std::shared_ptr<const Element>> elements;
  // The joints the problem file names as cuts (`cut_joints`): indices into `elements`, in the file's
  // order. The joint-coordinate formulations leave them out of their spanning tree first
  // (common/joint_graph.hpp); each closes a loop of the other joints (the loader checks).
  std::vector<int> cut_joints;

  // Natural (fully Cartesian) coordinates: the positions of all points stacked, dim each, then
  // each rigid body's [r_G, u_1, .., u_dim] (dim + dim^2 each).
  int body_coordinates() const { return dim + dim * dim; }
  int body_constraints() const { return dim * (dim + 1) / 2; }
  int nq() const { return dim * static_cast<int>(points.size()) + body_coordinates() * static_cast<int>(bodies.size()); }
  int body_offset(int k) const { return dim * static_cast<int>(points.size()) + body_coordinates() * k; }
  // Offset in q of a point mass or of a rigid body's centroid, by name; -1 when absent.
  int position_offset(const std::string& body_name) const;
  // Scalar constraint equations: each joint element's rows in element order, then each body's rigidity rows.
  int nc() const;

  Eigen::VectorXd initial_q() const;
  Eigen::VectorXd initial_v() const;
  // Diagonal of the (lumped, exact for point masses) mass matrix in natural coordinates (kg).
  Eigen::VectorXd mass_diagonal() const;

  int find_point(const std::string& point_name) const;  // kNoPoint when absent
  int find_body(const std::string& body_name) const;    // -1 when absent
  // World-independent position of an anchor (local frame, m) for natural coordinates q.
  Eigen::VectorXd anchor_position(const Anchor& anchor, const Eigen::VectorXd& q) const;
  const std::string& anchor_name(const Anchor& anchor) const;  // "ground", or the body's name
  // Constraint and force building blocks: an empty combination (c = 0), d += sign r_anchor, and
  // d += sign sum_k p_k u_k (a body-fixed vector p of rigid body k, principal-frame coordinates).
  Combo combo() const;
  void add_anchor(Combo& d, const Anchor& anchor, double sign) const;
  void add_body_vector(Combo& d, int body, const Eigen::VectorXd& p, double sign) const;

  // Elements of one C++ type (e.g. the rods), in file order.
  template <typename T>
  std::vector<const T*> elements_of() const {
    std::vector<const T*> out;
    for (const auto& e : elements)
      if (const T* t = dynamic_cast<const T*>(e.get())) out.push_back(t);
    return out;
  }
  bool has_role(ElementRole role) const {
    for (const auto& e : elements)
      if (e->role() == role) return true;
    return false;
  }

  Eigen::Vector3d to_world(const Eigen::VectorXd& local_point) const { return origin + basis * local_point; }
  Eigen::Vector3d to_world_direction(const Eigen::VectorXd& local_vec) const { return basis * local_vec; }
};

}  // namespace mbs
