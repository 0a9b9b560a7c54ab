// DecodeCache: what a column's text decoded to, kept for the next read of the same text. A
// sandbox row's config and result are JSON that every read parsed again: on the API's list
// that parse was the largest cost after the answer's own JSON (bench/README.md, "api"), for
// text that seldom changes. The key is the whole text (and whatever else the decoding
// depends on), so a hit is exactly what decoding would give; a decoding that throws keeps
// nothing. Bounded by kMaxBytes of keys: past it the cache starts over. Not thread-safe: the
// store's lock guards it. Private to src/store.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>

namespace adapt::store {

template <typename T>
class DecodeCache {
 public:
  static constexpr size_t kMaxBytes = 4 << 20;
  static constexpr size_t kMaxKeyBytes = 64 << 10;  // a larger text is decoded every time

  template <typename Decode>
  T Get(std::string_view key, Decode&& decode) {
    if (key.size() > kMaxKeyBytes) return decode();
    if (auto it = kept_.find(key); it != kept_.end()) return it->second;
    T value = decode();
    if (bytes_ + key.size() > kMaxBytes) {
      kept_.clear();
      bytes_ = 0;
    }
    kept_.emplace(std::string(key), value);
    bytes_ += key.size();
    return value;
  }

  size_t size() const { return kept_.size(); }

 private:
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::unordered_map<std::string, T, Hash, std::equal_to<>> kept_;
  size_t bytes_ = 0;
};

}  // namespace adapt::store
