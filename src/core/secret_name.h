// Secret names: environment variable names, since a sandbox sees a secret as the variable
// of its name. Header-only so that the request parsers (and their fuzz harness) need no
// more than this.
#pragma once

#include <string>

#include "base/status.h"

namespace adapt::core {

inline constexpr size_t kMaxSecretNameBytes = 128;
// How many secrets one sandbox may attach.
inline constexpr size_t kMaxSandboxSecrets = 64;

// InvalidArgument on `field` unless `name` is [A-Za-z_][A-Za-z0-9_]*, 1..128 bytes.
inline Status ValidateSecretName(const std::string& name, const std::string& field) {
  bool valid =
      !name.empty() && name.size() <= kMaxSecretNameBytes && !(name[0] >= '0' && name[0] <= '9');
  for (char c : name) {
    valid = valid && (c == '_' || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
                      (c >= '0' && c <= '9'));
  }
  if (!valid)
    return InvalidArgument(field, field +
                                      " must be a secret name: 1 to 128 letters, digits or "
                                      "underscores, not starting with a digit");
  return Status::Ok();
}

}  // namespace adapt::core
