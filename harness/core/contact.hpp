// What the harness reads of a contact (an element of ElementRole::kContact), whatever its kind, to
// score penetration and impacts: its gap and normal velocity (Element::contact_gap, which each
// contact kind gives in its own unit under harness/elements/), and its name to report them.
#pragma once

#include <vector>

#include "core/element.hpp"
#include "core/model.hpp"

namespace mbs {

// The model's contacts, in file order (Impact::contact indexes them).
std::vector<const Element*> contacts(const Model& model);
// Each contact's gap form, in the same order. Throws std::logic_error for a contact kind that
// gives none.
std::vector<ContactGap> contact_gaps(const Model& model);

}  // namespace mbs
