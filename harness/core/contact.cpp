#include "core/contact.hpp"

#include <map>
#include <stdexcept>

namespace mbs {

namespace {
std::map<std::string, ContactGapForm>& gap_forms() {
  static std::map<std::string, ContactGapForm> forms;  // filled by the kinds' static initializers
  return forms;
}
}  // namespace

bool register_contact_gap(const std::string& kind, ContactGapForm form) {
  gap_forms()[kind] = form;
  return true;
}

std::vector<const Element*> contacts(const Model& model) {
  std::vector<const Element*> out;
  for (const auto& e : model.elements)
    if (e->role() == ElementRole::kContact) out.push_back(e.get());
  return out;
}

std::vector<ContactGap> contact_gaps(const Model& model) {
  std::vector<ContactGap> out;
  for (const Element* c : contacts(model)) {
    const auto it = gap_forms().find(c->kind());
    if (it == gap_forms().end())
      throw std::logic_error(std::string("contact kind '") + c->kind() + "' registered no gap form (core/contact.hpp)");
    out.push_back(it->second(*c, model));
  }
  return out;
}

}  // namespace mbs
