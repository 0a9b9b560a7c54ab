#include "core/registration_gate.h"

namespace adapt::core {

Status RequireRegistered(const Principal& who, const std::string& how_to_register) {
  if (who.registered) return Status::Ok();
  return Status(Code::kPermissionDenied, "this account is not registered yet: " + how_to_register);
}

}  // namespace adapt::core
