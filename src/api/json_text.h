// JsonText: JSON written straight into a string, for the API's hottest answers (the sandbox
// and its list, bench/README.md "api"). Building an nlohmann::json tree, dumping it and
// destroying it was half the CPU of GET /v1/sandboxes?limit=50. What it writes is byte for byte
// what nlohmann's dump(-1, ' ', false, replace) writes for the same values, which JsonResponse
// sends: the caller writes an object's keys in sorted order (nlohmann keeps them in a
// std::map), and a string with a byte that nlohmann escapes or checks as UTF-8 (below 0x20,
// or 0x80 and above) is handed to nlohmann itself, so those rules stay nlohmann's own.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace adapt::api {

class JsonText {
 public:
  std::string& out() { return out_; }
  std::string Take() { return std::move(out_); }

  // Containers. A key is written before a value inside an object; values inside an array.
  void BeginObject() { Open('{'); }
  void EndObject() { Close('}'); }
  void BeginArray() { Open('['); }
  void EndArray() { Close(']'); }
  void Key(std::string_view key);      // a literal key: no byte that needs escaping
  void TextKey(std::string_view key);  // any text, escaped as String escapes it

  void String(std::string_view s);
  void Int(int64_t n);
  void Bool(bool b);
  void Null();
  void OptionalString(const std::optional<std::string>& s);
  void OptionalInt(const std::optional<int64_t>& n);
  void OptionalStrings(const std::optional<std::vector<std::string>>& list);

 private:
  void Open(char c);
  void Close(char c);
  void BeforeValue();
  void BeforeKey();
  void Quoted(std::string_view s);

  std::string out_;
  bool first_ = true;       // no value yet in the innermost container
  bool after_key_ = false;  // a key was written; its value comes next
};

}  // namespace adapt::api
