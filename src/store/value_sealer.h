// ValueSealer: how a store keeps values secret at rest (sandboxes' environments, which hold
// the values of the secrets they captured). The daemon gives the store one made from its
// master key (core/secret_cipher.h); the store never sees a key.
#pragma once

#include <functional>
#include <string>

#include "base/status.h"

namespace adapt::store {

struct ValueSealer {
  // `org_id` chooses the key; `aad` binds the sealed text to its place (a sealed value moved
  // elsewhere does not open).
  std::function<Result<std::string>(const std::string& org_id, const std::string& aad,
                                    const std::string& plain)>
      seal;
  // An error when `sealed` was not made by `seal` with that organization and aad.
  std::function<Result<std::string>(const std::string& org_id, const std::string& aad,
                                    const std::string& sealed)>
      open;
};

}  // namespace adapt::store
