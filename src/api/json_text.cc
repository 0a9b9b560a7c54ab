#include "api/json_text.h"

#include <charconv>
#include <nlohmann/json.hpp>

namespace adapt::api {

void JsonText::BeforeValue() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (!first_) out_ += ',';
  first_ = false;
}

void JsonText::Open(char c) {
  BeforeValue();
  out_ += c;
  first_ = true;
}

void JsonText::Close(char c) {
  out_ += c;
  first_ = false;
}

void JsonText::BeforeKey() {
  if (!first_) out_ += ',';
  first_ = false;
}

void JsonText::Key(std::string_view key) {
  BeforeKey();
  out_ += '"';
  out_ += key;
  out_ += "\":";
  after_key_ = true;
}

void JsonText::TextKey(std::string_view key) {
  BeforeKey();
  Quoted(key);
  out_ += ':';
  after_key_ = true;
}

void JsonText::String(std::string_view s) {
  BeforeValue();
  Quoted(s);
}

void JsonText::Quoted(std::string_view s) {
  for (unsigned char c : s) {
    if (c < 0x20 || c >= 0x80) {
      // Control characters and UTF-8 (checked, invalid bytes replaced): nlohmann's own rules.
      out_ += nlohmann::json(std::string(s))
                  .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
      return;
    }
  }
  out_ += '"';
  for (char c : s) {
    if (c == '"' || c == '\\') out_ += '\\';
    out_ += c;
  }
  out_ += '"';
}

void JsonText::Int(int64_t n) {
  BeforeValue();
  char buf[24];
  auto end = std::to_chars(buf, buf + sizeof buf, n).ptr;
  out_.append(buf, end);
}

void JsonText::Bool(bool b) {
  BeforeValue();
  out_ += b ? "true" : "false";
}

void JsonText::Null() {
  BeforeValue();
  out_ += "null";
}

void JsonText::OptionalString(const std::optional<std::string>& s) {
  if (s) return String(*s);
  Null();
}

void JsonText::OptionalInt(const std::optional<int64_t>& n) {
  if (n) return Int(*n);
  Null();
}

void JsonText::OptionalStrings(const std::optional<std::vector<std::string>>& list) {
  if (!list) return Null();
  BeginArray();
  for (const auto& s : *list) String(s);
  EndArray();
}

}  // namespace adapt::api
