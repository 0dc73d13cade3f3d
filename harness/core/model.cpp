#include "core/model.hpp"

namespace mbs {

Eigen::VectorXd Model::initial_q() const {
  Eigen::VectorXd q(nq());
  for (size_t i = 0; i < points.size(); ++i) q.segment(dim * i, dim) = points[i].r0;
  return q;
}

Eigen::VectorXd Model::initial_v() const {
  Eigen::VectorXd v(nq());
  for (size_t i = 0; i < points.size(); ++i) v.segment(dim * i, dim) = points[i].v0;
  return v;
}

Eigen::VectorXd Model::mass_diagonal() const {
  Eigen::VectorXd m(nq());
  for (size_t i = 0; i < points.size(); ++i) m.segment(dim * i, dim).setConstant(points[i].mass);
  return m;
}

int Model::find_point(const std::string& point_name) const {
  for (size_t i = 0; i < points.size(); ++i)
    if (points[i].name == point_name) return static_cast<int>(i);
  return kNoPoint;
}

}  // namespace mbs
