// TempDir: a fresh private directory (under /tmp unless told) that is removed, with all it
// holds, when the TempDir goes; what tests make around the files they write.
#pragma once

#include <string>
#include <string_view>

namespace adapt::os {

class TempDir {
 public:
  // Makes <parent>/adapt-<name>.XXXXXX (0700). Throws std::system_error when it cannot: a
  // test fixture holding one then fails where it was made.
  explicit TempDir(std::string_view name, std::string_view parent = "/tmp");
  ~TempDir();  // best effort: what cannot be removed is left
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace adapt::os
