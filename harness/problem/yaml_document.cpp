#include "problem/yaml_document.hpp"

#include "core/cancellation.hpp"

#include <yaml.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>
#include <memory>
#include <unordered_map>
#include <unordered_set>
#include <utility>

namespace mbs::yaml {

namespace {

Mark mark_of(const yaml_mark_t& m) { return Mark{static_cast<int>(m.line), static_cast<int>(m.column)}; }

// The parser and its current event, released on every path out.
struct Parser {
  yaml_parser_t parser;
  yaml_event_t event;
  bool has_event = false;
  explicit Parser(std::string_view text) {
    if (!yaml_parser_initialize(&parser)) throw ParseError(Mark{}, "out of memory");
    yaml_parser_set_input_string(&parser, reinterpret_cast<const unsigned char*>(text.data()), text.size());
  }
  ~Parser() {
    if (has_event) yaml_event_delete(&event);
    yaml_parser_delete(&parser);
  }
  Parser(const Parser&) = delete;
  Parser& operator=(const Parser&) = delete;
  const yaml_event_t& next() {
    if (has_event) yaml_event_delete(&event);
    has_event = false;
    if (!yaml_parser_parse(&parser, &event)) {
      std::string what = parser.problem ? parser.problem : "unreadable YAML";
      if (parser.context)
        what += " (" + std::string(parser.context) + " from " + std::to_string(parser.context_mark.line + 1) + ":" +
                std::to_string(parser.context_mark.column + 1) + ")";
      throw ParseError(mark_of(parser.problem_mark), what);
    }
    has_event = true;
    return event;
  }
};

bool is_null_text(std::string_view s) { return s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL"; }

}  // namespace

uint32_t Document::add(Kind kind, Mark m, uint32_t begin, uint32_t count) {
  if (nodes_.size() >= std::numeric_limits<uint32_t>::max()) throw ParseError(m, "too many YAML nodes");
  nodes_.push_back(Record{kind, m.line, m.column, begin, count});
  return static_cast<uint32_t>(nodes_.size() - 1);
}

Document::Document(std::string_view text) {
  if (text.size() >= std::numeric_limits<uint32_t>::max()) throw ParseError(Mark{}, "a file of 4 GB or more is not read");
  Parser p(text);
  // Open collections: their node, and where their items start in `pending`.
  // An anchor on a collection is known from the collection's end: an alias inside it is an error,
  // not a cycle.
  struct Open {
    uint32_t node;
    size_t first;
    std::string anchor;
  };
  std::vector<Open> open;
  std::vector<uint32_t> pending;
  std::unordered_map<std::string, uint32_t> anchors;
  // Reserved from the text's size (a node per 6 bytes in a generated chain): untouched pages cost no memory.
  text_.reserve(text.size() / 2);
  nodes_.reserve(text.size() / 4);
  items_.reserve(text.size() / 4);
  auto anchor = [&](const yaml_char_t* name, uint32_t node) {
    if (name) anchors[reinterpret_cast<const char*>(name)] = node;
  };
  auto place = [&](uint32_t node) {  // a complete node: an item of the open collection, or the root
    if (!open.empty()) pending.push_back(node);
  };
  bool done = false;
  for (size_t events = 1; !done; ++events) {
    if (events % (1u << 16) == 0) throw_if_cancelled("parsing the problem file");
    const yaml_event_t& e = p.next();
    const Mark m = mark_of(e.start_mark);
    switch (e.type) {
      case YAML_STREAM_START_EVENT:
      case YAML_DOCUMENT_START_EVENT:
      case YAML_NO_EVENT:
        break;
      case YAML_DOCUMENT_END_EVENT:
      case YAML_STREAM_END_EVENT:
        done = true;
        break;
      case YAML_ALIAS_EVENT: {
        const auto it = anchors.find(reinterpret_cast<const char*>(e.data.alias.anchor));
        if (it == anchors.end())
          throw ParseError(m, "alias *" + std::string(reinterpret_cast<const char*>(e.data.alias.anchor)) + " names no anchor before it");
        place(it->second);
        break;
      }
      case YAML_SCALAR_EVENT: {
        const std::string_view s(reinterpret_cast<const char*>(e.data.scalar.value), e.data.scalar.length);
        const bool null = e.data.scalar.plain_implicit && e.data.scalar.style == YAML_PLAIN_SCALAR_STYLE && is_null_text(s);
        const uint32_t begin = static_cast<uint32_t>(text_.size());
        text_.append(s);
        const uint32_t n = add(null ? Kind::kNull : Kind::kScalar, m, begin, static_cast<uint32_t>(s.size()));
        anchor(e.data.scalar.anchor, n);
        place(n);
        break;
      }
      case YAML_SEQUENCE_START_EVENT:
      case YAML_MAPPING_START_EVENT: {
        const bool map = e.type == YAML_MAPPING_START_EVENT;
        const uint32_t n = add(map ? Kind::kMap : Kind::kSequence, m, 0, 0);
        const yaml_char_t* name = map ? e.data.mapping_start.anchor : e.data.sequence_start.anchor;
        place(n);
        open.push_back(Open{n, pending.size(), name ? reinterpret_cast<const char*>(name) : ""});
        break;
      }
      case YAML_SEQUENCE_END_EVENT:
      case YAML_MAPPING_END_EVENT: {
        const Open o = std::move(open.back());
        open.pop_back();
        if (!o.anchor.empty()) anchors[o.anchor] = o.node;
        Record& r = nodes_[o.node];
        const size_t count = pending.size() - o.first;
        r.begin = static_cast<uint32_t>(items_.size());
        r.count = static_cast<uint32_t>(r.kind == Kind::kMap ? count / 2 : count);
        items_.insert(items_.end(), pending.begin() + static_cast<std::ptrdiff_t>(o.first), pending.end());
        pending.resize(o.first);
        if (r.kind == Kind::kMap) {  // keys are scalars, each once
          std::unordered_set<std::string_view> seen;
          const bool large = r.count > 16;
          for (uint32_t k = 0; k < r.count; ++k) {
            const Node key(this, items_[r.begin + 2 * k]);
            if (!key.IsScalar() && !key.IsNull()) throw ParseError(key.mark(), "a mapping key must be a plain value");
            const std::string_view name = key.scalar_view();
            bool repeated = false;
            if (large) {
              repeated = !seen.insert(name).second;
            } else {
              for (uint32_t j = 0; j < k && !repeated; ++j) repeated = Node(this, items_[r.begin + 2 * j]).scalar_view() == name;
            }
            if (repeated) throw ParseError(key.mark(), "duplicate key '" + std::string(name) + "' in a mapping");
          }
        }
        break;
      }
    }
  }
  if (nodes_.empty()) add(Kind::kNull, Mark{}, 0, 0);  // an empty text: one null document, as yaml-cpp read it
}

bool Node::IsNull() const { return doc_ && doc_->nodes_[index_].kind == Document::Kind::kNull; }
bool Node::IsScalar() const { return doc_ && doc_->nodes_[index_].kind == Document::Kind::kScalar; }
bool Node::IsSequence() const { return doc_ && doc_->nodes_[index_].kind == Document::Kind::kSequence; }
bool Node::IsMap() const { return doc_ && doc_->nodes_[index_].kind == Document::Kind::kMap; }

std::string_view Node::scalar_view() const {
  if (!doc_) return {};
  const Document::Record& r = doc_->nodes_[index_];
  if (r.kind != Document::Kind::kScalar && r.kind != Document::Kind::kNull) return {};
  return std::string_view(doc_->text_).substr(r.begin, r.count);
}

std::string Node::Scalar() const { return IsScalar() ? std::string(scalar_view()) : std::string(); }

Mark Node::mark() const {
  if (!doc_) return Mark{};
  const Document::Record& r = doc_->nodes_[index_];
  return Mark{r.line, r.column};
}

size_t Node::size() const {
  if (!doc_) return 0;
  const Document::Record& r = doc_->nodes_[index_];
  return r.kind == Document::Kind::kSequence || r.kind == Document::Kind::kMap ? r.count : 0;
}

Node Node::operator[](size_t i) const {
  if (!IsSequence() || i >= size()) return Node();
  return Node(doc_, doc_->items_[doc_->nodes_[index_].begin + i]);
}

Node Node::operator[](std::string_view key) const {
  if (!IsMap()) return Node();
  const Document::Record& r = doc_->nodes_[index_];
  for (uint32_t k = 0; k < r.count; ++k)
    if (Node(doc_, doc_->items_[r.begin + 2 * k]).scalar_view() == key) return Node(doc_, doc_->items_[r.begin + 2 * k + 1]);
  return Node();
}

Iterator Node::begin() const {
  if (!IsSequence() && !IsMap()) return Iterator(doc_, nullptr, 1);
  return Iterator(doc_, doc_->items_.data() + doc_->nodes_[index_].begin, IsMap() ? 2 : 1);
}

Iterator Node::end() const {
  if (!IsSequence() && !IsMap()) return Iterator(doc_, nullptr, 1);
  const Document::Record& r = doc_->nodes_[index_];
  return Iterator(doc_, doc_->items_.data() + r.begin + (IsMap() ? 2 * r.count : r.count), IsMap() ? 2 : 1);
}

Entry Iterator::operator*() const {
  Entry e;
  if (step_ == 2) {
    e.first = Node(doc_, at_[0]);
    e.second = Node(doc_, at_[1]);
  } else {
    static_cast<Node&>(e) = Node(doc_, at_[0]);
  }
  return e;
}

bool to_double(std::string_view s, double& x) {
  const std::string_view t = s.substr(0, s.find_last_not_of(" \t\n\r\f\v") + 1);  // trailing blanks, as a stream's ws
  if (t == ".inf" || t == ".Inf" || t == ".INF" || t == "+.inf" || t == "+.Inf" || t == "+.INF") {
    x = std::numeric_limits<double>::infinity();
    return true;
  }
  if (t == "-.inf" || t == "-.Inf" || t == "-.INF") {
    x = -std::numeric_limits<double>::infinity();
    return true;
  }
  if (t == ".nan" || t == ".NaN" || t == ".NAN") {
    x = std::numeric_limits<double>::quiet_NaN();
    return true;
  }
  // A stream reads a leading '+' and no "inf" or "nan"; from_chars the reverse.
  std::string_view u = t;
  const bool plus = !u.empty() && u[0] == '+';
  if (plus) u.remove_prefix(1);
  const size_t sign = !u.empty() && u[0] == '-' ? 1 : 0;
  if ((plus && sign) || u.size() <= sign) return false;
  const unsigned char first = static_cast<unsigned char>(u[sign]);
  if (!std::isdigit(first) && first != '.') return false;
  double v = 0.0;
  const auto [end, ec] = std::from_chars(u.data(), u.data() + u.size(), v);
  if (ec != std::errc() || end != u.data() + u.size()) return false;
  x = v;
  return true;
}

bool to_bool(std::string_view s, bool& b) {
  // Lower, upper or capitalized case only.
  std::string lower(s);
  bool all_lower = true, all_upper = true, capitalized = !s.empty() && std::isupper(static_cast<unsigned char>(s[0]));
  for (size_t i = 0; i < s.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    all_lower = all_lower && !std::isupper(c);
    all_upper = all_upper && !std::islower(c);
    if (i > 0) capitalized = capitalized && !std::isupper(c);
    lower[i] = static_cast<char>(std::tolower(c));
  }
  if (!all_lower && !all_upper && !capitalized) return false;
  static const std::pair<const char*, const char*> names[] = {{"y", "n"}, {"yes", "no"}, {"true", "false"}, {"on", "off"}};
  for (const auto& [t, f] : names) {
    if (lower == t) return b = true, true;
    if (lower == f) return b = false, true;
  }
  return false;
}

}  // namespace mbs::yaml
