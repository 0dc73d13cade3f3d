// point_plane contact: frictionless unilateral contact of a point mass with a fixed plane (a rigid
// wall): the gap g = n . (r - p0) must stay >= 0; when the point hits the plane (g = 0, n . v < 0)
// its normal velocity is reversed and scaled by Newton's restitution coefficient e:
// (n . v)+ = -e (n . v)-. Formulations that declare ElementRole::kContact implement the impact law.
#pragma once

#include <vector>

#include "core/element.hpp"
#include "core/model.hpp"

namespace mbs {

struct PlaneContact final : Element {
  int point = 0;               // point-mass index
  Eigen::VectorXd plane_point; // a point of the plane, local frame (m)
  Eigen::VectorXd normal;      // unit normal towards the allowed side, local frame
  double restitution = 0.0;    // Newton's e, 0..1

  PlaneContact() = default;
  PlaneContact(std::string contact_name, int point_index, const Eigen::VectorXd& p0, const Eigen::VectorXd& n, double e)
      : point(point_index), plane_point(p0), normal(n), restitution(e) {
    name = std::move(contact_name);
  }
  const char* kind() const override { return "point_plane"; }
  ElementRole role() const override { return ElementRole::kContact; }
  // The point's coordinate block against the plane.
  std::optional<ContactGap> contact_gap(const Model& model) const override {
    return ContactGap{model.dim * point, plane_point, normal, restitution};
  }

  // Gap (m, >= 0 when admissible) and normal velocity (m/s, < 0 when approaching).
  template <typename Vec>
  double gap(const Model& model, const Vec& q) const {
    return normal.dot(q.segment(model.dim * point, model.dim) - plane_point);
  }
  template <typename Vec>
  double normal_velocity(const Model& model, const Vec& v) const {
    return normal.dot(v.segment(model.dim * point, model.dim));
  }
};

// The model's plane contacts, in file order.
inline std::vector<const PlaneContact*> plane_contacts(const Model& model) { return model.elements_of<PlaneContact>(); }

}  // namespace mbs
