// What the harness reads of a contact (an element of ElementRole::kContact), whatever its kind, to
// score penetration and impacts: its gap and normal velocity, and its name to report them.
//
// A contact kind registers its gap form from its own unit (harness/elements/), next to its YAML
// reading: a registry rather than a virtual on Element, so the kind's header (which the formulations
// that implement its impact law include) does not depend on how the harness scores it.
#pragma once

#include <string>
#include <vector>

#include "core/element.hpp"
#include "core/model.hpp"

namespace mbs {

// The gap g = n . (r - p0) (m, >= 0 when admissible) and the normal velocity n . r' (m/s, < 0 when
// approaching) of a point whose coordinates are q[offset, offset + dim), against a fixed plane
// through p0 with unit normal n. Built once per run: the scoring loop evaluates it inline, with no
// virtual call a step.
struct ContactGap {
  int offset = 0;
  Eigen::VectorXd point, normal;  // p0, n (dim)
  template <typename Vec>
  double gap(const Vec& q) const { return normal.dot(q.segment(offset, normal.size()) - point); }
  template <typename Vec>
  double normal_velocity(const Vec& v) const { return normal.dot(v.segment(offset, normal.size())); }
};

// A contact kind's gap form: called only with an element of that kind.
using ContactGapForm = ContactGap (*)(const Element& contact, const Model& model);
// Registers a kind's gap form (kind: Element::kind()); returns true, for a static initializer.
bool register_contact_gap(const std::string& kind, ContactGapForm form);

// The model's contacts, in file order (Impact::contact indexes them).
std::vector<const Element*> contacts(const Model& model);
// Each contact's gap, in the same order. Throws std::logic_error for a contact kind that
// registered no gap form.
std::vector<ContactGap> contact_gaps(const Model& model);

}  // namespace mbs
