// The element kinds a problem file may use, registered by the kinds themselves.
//
// A kind lives in one file under harness/elements/ (its YAML keys, validation, and the rows or
// forces of core/element.hpp) and adds itself here with one line:
//   MBS_REGISTER_ELEMENT_KIND(revolute, {"revolute", ElementRole::kJoint, "...", read_revolute});
// The loader reads section `joints`, `forces` or `contacts` (by the kind's role) through it.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/element.hpp"
#include "problem/yaml_reader.hpp"

namespace mbs {

struct ElementKindInfo {
  std::string name;  // as written after `kind:`
  ElementRole role;  // decides the section: joints, forces or contacts
  std::string summary;  // one line for --list and the docs
  // Reads and validates one entry (a mapping whose `name` and `kind` are already read) against
  // the model read so far; fails through ctx.rd with file:line:col.
  std::function<std::shared_ptr<Element>(const ReadContext& ctx, const yaml::Node& node, const std::string& name)> read;
};

// The YAML section of a role: "joints", "forces" or "contacts".
const char* section_of(ElementRole role);

class ElementKinds {
 public:
  static ElementKinds& instance();
  bool add(ElementKindInfo info);
  const ElementKindInfo* find(ElementRole role, const std::string& name) const;
  const ElementKindInfo* find(const std::string& name) const;
  std::vector<const ElementKindInfo*> all() const;  // sorted by role, then name
  std::vector<std::string> names(ElementRole role) const;

 private:
  std::vector<ElementKindInfo> kinds_;
};

}  // namespace mbs

#define MBS_REGISTER_ELEMENT_KIND(Id, ...) \
  [[maybe_unused]] static const bool mbs_element_kind_##Id = ::mbs::ElementKinds::instance().add(__VA_ARGS__)
