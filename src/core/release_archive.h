// The check a deployed app's release passes before it is kept: the tar the agent made of
// source_path may hold nothing that would land outside the directory it is extracted into.
#pragma once

#include <functional>
#include <string>

namespace adapt::core {

// Reads the whole tar from `read` (up to n bytes per call; 0 at the end, -1 on error) and
// returns why its first unsafe entry is unsafe: an absolute name or one with "..", a symlink
// pointing outside the root (absolute, or climbing out with ".."), a hard link to a name
// outside it, or a malformed archive. "" when every entry stays inside.
std::string FirstEscapingEntry(const std::function<long(char*, size_t)>& read);

}  // namespace adapt::core
