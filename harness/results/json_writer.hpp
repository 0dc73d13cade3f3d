// A minimal JSON emitter for the summary file (objects, arrays, strings, numbers, booleans).
// Non-finite numbers are written as null, since JSON has no NaN or infinity.
#pragma once

#include <cmath>
#include <fmt/format.h>
#include <string>

namespace mbs {

class JsonWriter {
 public:
  JsonWriter& begin_object() { return open('{'); }
  JsonWriter& end_object() { return close('}'); }
  JsonWriter& begin_array() { return open('['); }
  JsonWriter& end_array() { return close(']'); }
  JsonWriter& key(const std::string& k) {
    separate();
    out_ += quote(k) + ": ";
    after_key_ = true;
    return *this;
  }
  JsonWriter& value(const std::string& s) { return raw(quote(s)); }
  JsonWriter& value(const char* s) { return raw(quote(s)); }
  JsonWriter& value(bool b) { return raw(b ? "true" : "false"); }
  JsonWriter& value(long n) { return raw(std::to_string(n)); }
  JsonWriter& value(int n) { return raw(std::to_string(n)); }
  JsonWriter& value(double x) { return raw(std::isfinite(x) ? fmt::format("{:.17g}", x) : "null"); }
  JsonWriter& null() { return raw("null"); }
  template <typename T>
  JsonWriter& field(const std::string& k, const T& v) { return key(k).value(v); }
  const std::string& str() const { return out_; }

 private:
  JsonWriter& raw(const std::string& s) {
    separate();
    out_ += s;
    return *this;
  }
  JsonWriter& open(char c) {
    separate();
    out_ += c;
    ++depth_;
    first_ = true;
    return *this;
  }
  JsonWriter& close(char c) {
    --depth_;
    if (!first_) out_ += "\n" + std::string(2 * depth_, ' ');
    out_ += c;
    first_ = false;
    return *this;
  }
  void separate() {
    if (after_key_) {
      after_key_ = false;
      return;
    }
    if (depth_ > 0) {
      if (!first_) out_ += ',';
      out_ += "\n" + std::string(2 * depth_, ' ');
    }
    first_ = false;
  }
  static std::string quote(const std::string& s) {
    std::string q = "\"";
    for (const char c : s) {
      switch (c) {
        case '"': q += "\\\""; break;
        case '\\': q += "\\\\"; break;
        case '\n': q += "\\n"; break;
        case '\t': q += "\\t"; break;
        case '\r': q += "\\r"; break;
        default:
          if (static_cast<unsigned char>(c) < 0x20) q += fmt::format("\\u{:04x}", c);
          else q += c;
      }
    }
    return q + "\"";
  }
  std::string out_;
  int depth_ = 0;
  bool first_ = true, after_key_ = false;
};

}  // namespace mbs
