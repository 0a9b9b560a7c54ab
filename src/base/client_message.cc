#include "base/client_message.h"

#include "base/ids.h"
#include "base/log.h"

namespace adapt {

namespace {

// `status`'s client sentence with a new reference; the message is logged under it.
std::string ReferencedClientSentence(const Status& status, const char* where) {
  std::string reference = NewId("err");
  spdlog::warn("failure {} in a {}: {}", reference, where, status.message());
  return status.client_message() + " (reference " + reference + ")";
}

}  // namespace

std::string RecordMessage(const Status& status, const char* where) {
  if (status.client_message().empty()) return status.message();
  return ReferencedClientSentence(status, where);
}

std::string ClientMessage(const Status& status, const char* where) {
  bool internal = status.code() == Code::kInternal;
  if (!internal && status.client_message().empty()) return status.message();
  if (!internal) return ReferencedClientSentence(status, where);
  std::string reference = NewId("err");
  spdlog::error("internal error {} in a {}: {}", reference, where, status.message());
  return "adaptd failed to complete the request (reference " + reference +
         "); its log has the details";
}

}  // namespace adapt
