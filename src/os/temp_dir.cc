#include "os/temp_dir.h"

#include <errno.h>
#include <stdlib.h>

#include <system_error>

#include "base/ignore_error.h"
#include "os/files.h"

namespace adapt::os {

TempDir::TempDir(std::string_view name, std::string_view parent) {
  std::string pattern = std::string(parent) + "/adapt-" + std::string(name) + ".XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr)
    throw std::system_error(errno, std::generic_category(), "mkdtemp " + pattern);
  path_ = std::move(pattern);
}

TempDir::~TempDir() { IgnoreError(RemoveTree(path_), "removing a temporary directory"); }

}  // namespace adapt::os
