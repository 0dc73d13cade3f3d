#include "core/model.hpp"

namespace mbs {

Eigen::VectorXd Model::initial_q() const {
  Eigen::VectorXd q(nq());
  for (size_t i = 0; i < points.size(); ++i) q.segment(dim * i, dim) = points[i].r0;
  for (size_t k = 0; k < bodies.size(); ++k) {
    const int o = body_offset(static_cast<int>(k));
    q.segment<3>(o) = bodies[k].r0;
    for (int a = 0; a < 3; ++a) q.segment<3>(o + 3 + 3 * a) = bodies[k].R0.col(a);
  }
  return q;
}

Eigen::VectorXd Model::initial_v() const {
  Eigen::VectorXd v(nq());
  for (size_t i = 0; i < points.size(); ++i) v.segment(dim * i, dim) = points[i].v0;
  for (size_t k = 0; k < bodies.size(); ++k) {
    const int o = body_offset(static_cast<int>(k));
    v.segment<3>(o) = bodies[k].v0;
    for (int a = 0; a < 3; ++a) v.segment<3>(o + 3 + 3 * a) = bodies[k].omega0.cross(Eigen::Vector3d(bodies[k].R0.col(a)));
  }
  return v;
}

Eigen::VectorXd Model::mass_diagonal() const {
  Eigen::VectorXd m(nq());
  for (size_t i = 0; i < points.size(); ++i) m.segment(dim * i, dim).setConstant(points[i].mass);
  for (size_t k = 0; k < bodies.size(); ++k) {
    const int o = body_offset(static_cast<int>(k));
    m.segment<3>(o).setConstant(bodies[k].mass);
    for (int a = 0; a < 3; ++a) m.segment<3>(o + 3 + 3 * a).setConstant(bodies[k].second_moments[a]);
  }
  return m;
}

int Model::find_body(const std::string& body_name) const {
  for (size_t i = 0; i < bodies.size(); ++i)
    if (bodies[i].name == body_name) return static_cast<int>(i);
  return -1;
}

Eigen::VectorXd Model::anchor_position(const Anchor& anchor, const Eigen::VectorXd& q) const {
  if (anchor.body >= 0) {
    const int o = body_offset(anchor.body);
    Eigen::VectorXd r = q.segment(o, 3);
    for (int a = 0; a < 3; ++a) r += anchor.at[a] * q.segment(o + 3 + 3 * a, 3);
    return r;
  }
  if (anchor.point == kGround) return anchor.at;
  return q.segment(dim * anchor.point, dim);
}

const std::string& Model::anchor_name(const Anchor& anchor) const {
  static const std::string ground = "ground";
  if (anchor.body >= 0) return bodies[anchor.body].name;
  return anchor.point == kGround ? ground : points[anchor.point].name;
}

int Model::find_point(const std::string& point_name) const {
  for (size_t i = 0; i < points.size(); ++i)
    if (points[i].name == point_name) return static_cast<int>(i);
  return kNoPoint;
}

}  // namespace mbs
