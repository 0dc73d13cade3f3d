#include "elements/joint_rows.hpp"

#include <algorithm>

namespace mbs::elements {

double joint_scale(const Model& model, const Anchor& a, const Anchor& b) {
  double scale = 1.0;
  for (const Anchor* an : {&a, &b})
    if (an->body >= 0) scale = std::max(scale, model.bodies[an->body].length_scale);
  return scale;
}

void add_coincidence_rows(const Model& model, const Anchor& a, const Anchor& b, double scale,
                          std::vector<ConstraintRow>& rows) {
  for (int c = 0; c < model.dim; ++c) {
    ConstraintRow r;
    r.d1 = model.combo();
    model.add_anchor(r.d1, a, 1.0);
    model.add_anchor(r.d1, b, -1.0);
    r.d2 = model.combo();
    r.d2.c = Combo::Small::Unit(model.dim, c);
    r.scale = scale;
    rows.push_back(r);
  }
}

Combo attached_vector(const Model& model, int body, const Eigen::VectorXd& w) {
  Combo d = model.combo();
  if (body < 0) {
    d.c = w;
    return d;
  }
  model.add_body_vector(d, body, model.bodies[body].R0.transpose() * w, 1.0);
  return d;
}

std::vector<Eigen::VectorXd> normals_to(const Eigen::VectorXd& axis) {
  if (axis.size() == 2) return {Eigen::Vector2d(-axis[1], axis[0])};
  const Eigen::Vector3d a = axis.normalized();
  // The world axis least aligned with a, made normal to it, then the third by the cross product.
  Eigen::Index i = 0;
  a.cwiseAbs().minCoeff(&i);
  const Eigen::Vector3d n1 = (Eigen::Vector3d::Unit(i) - a[i] * a).normalized();
  return {n1, a.cross(n1)};
}

void add_rotation_lock_rows(const Model& model, int body_a, int body_b, double l, std::vector<ConstraintRow>& rows) {
  const int d = model.dim;
  for (int i = 0; i < d; ++i)
    for (int j = i + 1; j < d; ++j) {
      ConstraintRow r;
      r.d1 = attached_vector(model, body_a, Eigen::VectorXd::Unit(d, i));
      r.d2 = attached_vector(model, body_b, Eigen::VectorXd::Unit(d, j));
      r.s = l;
      r.scale = l;
      rows.push_back(r);
    }
}

}  // namespace mbs::elements
