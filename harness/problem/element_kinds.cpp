#include "problem/element_kinds.hpp"

#include <algorithm>
#include <stdexcept>

namespace mbs {

const char* section_of(ElementRole role) {
  switch (role) {
    case ElementRole::kJoint: return "joints";
    case ElementRole::kForce: return "forces";
    case ElementRole::kContact: return "contacts";
  }
  return "?";
}

ElementKinds& ElementKinds::instance() {
  static ElementKinds kinds;
  return kinds;
}

bool ElementKinds::add(ElementKindInfo info) {
  if (find(info.name)) throw std::logic_error("element kind '" + info.name + "' registered twice");
  kinds_.push_back(std::move(info));
  std::sort(kinds_.begin(), kinds_.end(), [](const ElementKindInfo& a, const ElementKindInfo& b) {
    return a.role != b.role ? a.role < b.role : a.name < b.name;
  });
  return true;
}

const ElementKindInfo* ElementKinds::find(ElementRole role, const std::string& name) const {
  for (const ElementKindInfo& k : kinds_)
    if (k.role == role && k.name == name) return &k;
  return nullptr;
}

const ElementKindInfo* ElementKinds::find(const std::string& name) const {
  for (const ElementKindInfo& k : kinds_)
    if (k.name == name) return &k;
  return nullptr;
}

std::vector<const ElementKindInfo*> ElementKinds::all() const {
  std::vector<const ElementKindInfo*> out;
  for (const ElementKindInfo& k : kinds_) out.push_back(&k);
  return out;
}

std::vector<std::string> ElementKinds::names(ElementRole role) const {
  std::vector<std::string> out;
  for (const ElementKindInfo& k : kinds_)
    if (k.role == role) out.push_back(k.name);
  return out;
}

}  // namespace mbs
