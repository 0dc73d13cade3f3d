// A problem file's YAML as an immutable tree: parsed by libyaml's event API into flat arrays (one
// record a node, the scalars' bytes back to back), read through light Node handles. yaml-cpp's
// node graph (a shared_ptr'd node an entry) made reading a 100,000-body file most of its set-up
// (docs/formulations.md, Status: Scale); this tree is a small multiple of the file's size.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace mbs::yaml {

// A position in the text, 0-based as libyaml gives it; line < 0: none (a node not in the file).
struct Mark {
  int line = -1, column = -1;
  bool is_null() const { return line < 0; }
};

// A syntax error, or a tree the reader does not take (a duplicate key, a non-scalar key, an alias
// to no anchor), where it is.
struct ParseError : std::runtime_error {
  ParseError(Mark m, const std::string& what) : std::runtime_error(what), mark(m) {}
  Mark mark;
};

class Document;
struct Entry;
class Iterator;

// A node of a Document, or undefined (a key the map does not have); valid while its Document lives.
class Node {
 public:
  Node() = default;
  explicit operator bool() const { return doc_ != nullptr; }
  bool IsNull() const;  // a plain ~, null, Null, NULL or nothing
  bool IsScalar() const;
  bool IsSequence() const;
  bool IsMap() const;
  std::string Scalar() const;             // the scalar's text; empty for anything else
  std::string_view scalar_view() const;   // the same, without a copy
  Mark mark() const;
  size_t size() const;                    // a sequence's items, a map's entries; 0 otherwise
  Node operator[](size_t i) const;        // a sequence's item i; undefined when out of range
  Node operator[](int i) const { return i < 0 ? Node() : (*this)[static_cast<size_t>(i)]; }
  Node operator[](std::string_view key) const;  // a map's value at `key`; undefined when absent
  Node operator[](const char* key) const { return (*this)[std::string_view(key)]; }
  Node operator[](const std::string& key) const { return (*this)[std::string_view(key)]; }
  // Over a sequence, each item as an Entry (a Node); over a map, each entry's `first` (the key) and
  // `second` (the value); nothing otherwise.
  Iterator begin() const;
  Iterator end() const;

 private:
  friend class Document;
  friend class Iterator;
  Node(const Document* doc, uint32_t index) : doc_(doc), index_(index) {}
  const Document* doc_ = nullptr;
  uint32_t index_ = 0;
};

struct Entry : Node {
  Node first, second;
};

class Iterator {
 public:
  Entry operator*() const;
  Iterator& operator++() {
    at_ += step_;
    return *this;
  }
  bool operator!=(const Iterator& o) const { return at_ != o.at_; }
  bool operator==(const Iterator& o) const { return at_ == o.at_; }

 private:
  friend class Node;
  Iterator(const Document* doc, const uint32_t* at, int step) : doc_(doc), at_(at), step_(step) {}
  const Document* doc_ = nullptr;
  const uint32_t* at_ = nullptr;
  int step_ = 1;
};

// The first document of a YAML text (later ones are not read, as yaml-cpp's Load did not). Throws
// ParseError, or Cancelled once --timeout's budget is spent (core/cancellation.hpp).
class Document {
 public:
  explicit Document(std::string_view text);
  Document(const Document&) = delete;
  Document& operator=(const Document&) = delete;
  Node root() const { return Node(this, 0); }

 private:
  friend class Node;
  friend class Iterator;
  enum class Kind : uint8_t { kNull, kScalar, kSequence, kMap };
  struct Record {
    Kind kind;
    int32_t line, column;
    uint32_t begin, count;  // scalar: bytes in text_; sequence, map: items_ (a map's keys and values alternate)
  };
  uint32_t add(Kind kind, Mark m, uint32_t begin, uint32_t count);
  std::vector<Record> nodes_;
  std::vector<uint32_t> items_;
  std::string text_;
};

// yaml-cpp's conversions, which the problem files were written against: a number as C++ streams read
// it (whole, trailing blanks allowed; .inf and .nan spelled YAML's way); a flag from y/n, yes/no,
// true/false, on/off in lower, upper or capitalized case.
bool to_double(std::string_view text, double& x);
bool to_bool(std::string_view text, bool& b);

}  // namespace mbs::yaml
