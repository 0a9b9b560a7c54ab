#include "base/client_message.h"

#include <mutex>

#include "base/ids.h"
#include "base/log.h"

namespace adapt {

namespace {

std::mutex host_directories_mu;
std::vector<std::string>& HostDirectories() {
  static auto* directories = new std::vector<std::string>();
  return *directories;
}

bool NamesAHostDirectory(const std::string& message) {
  std::lock_guard lock(host_directories_mu);
  for (const auto& dir : HostDirectories())
    if (message.find(dir) != std::string::npos) return true;
  return false;
}

// `status`'s client sentence with a new reference; the message is logged under it.
std::string ReferencedClientSentence(const Status& status, const char* where) {
  std::string reference = NewId("err");
  spdlog::warn("failure {} in a {}: {}", reference, where, status.message());
  return status.client_message() + " (reference " + reference + ")";
}

}  // namespace

void SetHostDirectoriesForMessages(std::vector<std::string> directories) {
  // Without its trailing slash a directory's own name matches too; "" or "/" would match all.
  std::erase_if(directories, [](std::string& dir) {
    while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
    return dir.size() <= 1;
  });
  std::lock_guard lock(host_directories_mu);
  HostDirectories() = std::move(directories);
}

std::string RecordMessage(const Status& status, const char* where) {
  if (!status.client_message().empty()) return ReferencedClientSentence(status, where);
  if (!NamesAHostDirectory(status.message())) return status.message();
  std::string reference = NewId("err");
  spdlog::warn("failure {} in a {}: {}", reference, where, status.message());
  return "adaptd failed to complete this work (reference " + reference +
         "); its log has the details";
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
