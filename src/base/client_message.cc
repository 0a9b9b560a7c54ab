#include "base/client_message.h"

#include "base/ids.h"
#include "base/log.h"

namespace adapt {

std::string ClientMessage(const Status& status, const char* where) {
  if (status.code() != Code::kInternal) return status.message();
  std::string reference = NewId("err");
  spdlog::error("internal error {} in a {}: {}", reference, where, status.message());
  return "adaptd failed to complete the request (reference " + reference +
         "); its log has the details";
}

}  // namespace adapt
