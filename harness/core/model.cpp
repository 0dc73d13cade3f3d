#include "core/model.hpp"

#include <algorithm>
#include <stdexcept>

namespace mbs {

const char* to_string(ElementRole role) {
  switch (role) {
    case ElementRole::kJoint: return "joint";
    case ElementRole::kForce: return "force element";
    case ElementRole::kContact: return "contact";
  }
  return "?";
}

const char* to_string(TreeJointType type) {
  switch (type) {
    case TreeJointType::kNone: return "none";
    case TreeJointType::kRevolute: return "revolute";
    case TreeJointType::kPrismatic: return "prismatic";
    case TreeJointType::kSpherical: return "spherical";
    case TreeJointType::kFixed: return "fixed";
    case TreeJointType::kRod: return "rod";
  }
  return "?";
}

void Combo::add(int offset, double weight) {
  if (n == static_cast<int>(off.size())) throw std::logic_error("a constraint combination has more than 8 coordinate blocks");
  off[n] = offset, w[n] = weight, ++n;
}

int Model::nc() const {
  int n = body_constraints() * static_cast<int>(bodies.size());
  for (const auto& e : elements) n += e->row_count(dim);
  return n;
}

Eigen::VectorXd Model::initial_q() const {
  Eigen::VectorXd q(nq());
  for (size_t i = 0; i < points.size(); ++i) q.segment(dim * i, dim) = points[i].r0;
  for (size_t k = 0; k < bodies.size(); ++k) {
    const int o = body_offset(static_cast<int>(k));
    q.segment(o, dim) = bodies[k].r0;
    for (int a = 0; a < dim; ++a) q.segment(o + dim + dim * a, dim) = bodies[k].R0.col(a);
  }
  return q;
}

Eigen::VectorXd Model::initial_v() const {
  Eigen::VectorXd v(nq());
  for (size_t i = 0; i < points.size(); ++i) v.segment(dim * i, dim) = points[i].v0;
  for (size_t k = 0; k < bodies.size(); ++k) {
    const RigidBody& b = bodies[k];
    const int o = body_offset(static_cast<int>(k));
    v.segment(o, dim) = b.v0;
    for (int a = 0; a < dim; ++a) {
      Eigen::Vector3d u = Eigen::Vector3d::Zero();
      u.head(dim) = b.R0.col(a);
      v.segment(o + dim + dim * a, dim) = b.omega0.cross(u).head(dim);  // planar: omega along the normal
    }
  }
  return v;
}

Eigen::VectorXd Model::mass_diagonal() const {
  Eigen::VectorXd m(nq());
  for (size_t i = 0; i < points.size(); ++i) m.segment(dim * i, dim).setConstant(points[i].mass);
  for (size_t k = 0; k < bodies.size(); ++k) {
    const int o = body_offset(static_cast<int>(k));
    m.segment(o, dim).setConstant(bodies[k].mass);
    for (int a = 0; a < dim; ++a) m.segment(o + dim + dim * a, dim).setConstant(bodies[k].second_moments[a]);
  }
  return m;
}

int Model::find_body(const std::string& body_name) const {
  for (size_t i = 0; i < bodies.size(); ++i)
    if (bodies[i].name == body_name) return static_cast<int>(i);
  return -1;
}

int Model::find_point(const std::string& point_name) const {
  for (size_t i = 0; i < points.size(); ++i)
    if (points[i].name == point_name) return static_cast<int>(i);
  return kNoPoint;
}

int Model::position_offset(const std::string& body_name) const {
  const int i = find_point(body_name), b = find_body(body_name);
  if (i != kNoPoint) return dim * i;
  return b >= 0 ? body_offset(b) : -1;
}

Eigen::VectorXd Model::anchor_position(const Anchor& anchor, const Eigen::VectorXd& q) const {
  if (anchor.body >= 0) {
    const int o = body_offset(anchor.body);
    Eigen::VectorXd r = q.segment(o, dim);
    for (int a = 0; a < dim; ++a) r += anchor.at[a] * q.segment(o + dim + dim * a, dim);
    return r;
  }
  if (anchor.point == kGround) return anchor.at;
  return q.segment(dim * anchor.point, dim);
}

Combo Model::combo() const {
  Combo d;
  d.c = Combo::Small::Zero(dim);
  return d;
}

void Model::add_anchor(Combo& d, const Anchor& anchor, double sign) const {
  if (anchor.body >= 0) {  // r_G + sum_a p_a u_a
    d.add(body_offset(anchor.body), sign);
    add_body_vector(d, anchor.body, anchor.at, sign);
  } else if (anchor.point == kGround) {
    d.c += sign * anchor.at;
  } else {
    d.add(dim * anchor.point, sign);
  }
}

void Model::add_body_vector(Combo& d, int body, const Eigen::VectorXd& p, double sign) const {
  const int o = body_offset(body);
  for (int a = 0; a < dim; ++a)
    if (p[a] != 0.0) d.add(o + dim + dim * a, sign * p[a]);
}

const std::string& Model::anchor_name(const Anchor& anchor) const {
  static const std::string ground = "ground";
  if (anchor.body >= 0) return bodies[anchor.body].name;
  return anchor.point == kGround ? ground : points[anchor.point].name;
}


}  // namespace mbs
