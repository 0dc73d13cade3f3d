#include "core/contact.hpp"

#include <stdexcept>

namespace mbs {

std::vector<const Element*> contacts(const Model& model) {
  std::vector<const Element*> out;
  for (const auto& e : model.elements)
    if (e->role() == ElementRole::kContact) out.push_back(e.get());
  return out;
}

std::vector<ContactGap> contact_gaps(const Model& model) {
  std::vector<ContactGap> out;
  for (const Element* c : contacts(model)) {
    std::optional<ContactGap> g = c->contact_gap(model);
    if (!g) throw std::logic_error(std::string("contact kind '") + c->kind() + "' gives no gap form (Element::contact_gap)");
    out.push_back(std::move(*g));
  }
  return out;
}

}  // namespace mbs
