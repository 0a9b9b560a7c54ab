#include "cli/config.h"

#include <curl/curl.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

#include "base/loopback_host.h"

namespace adapt::cli {
namespace {

std::string EnvOrEmpty(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr ? value : "";
}

// The file's contents, or nullopt when it cannot be opened (absent or unreadable).
std::optional<std::string> ReadWholeFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream contents;
  contents << in.rdbuf();
  if (in.bad()) return std::nullopt;
  return contents.str();
}

std::string TrimWhitespace(std::string text) {
  const char* kSpace = " \t\r\n";
  text.erase(text.find_last_not_of(kSpace) + 1);
  text.erase(0, text.find_first_not_of(kSpace));
  return text;
}

// Reads one optional string member; a member of another type is a mistake worth reporting.
Status ReadStringMember(const nlohmann::json& object, const char* name, std::string& out) {
  auto it = object.find(name);
  if (it == object.end() || it->is_null()) return Status::Ok();
  if (!it->is_string()) return InvalidArgument(name, std::string(name) + " must be a string");
  out = it->get<std::string>();
  return Status::Ok();
}

// Fills the still-empty fields of `config` from the config file, when there is one.
Status ApplyConfigFile(ClientConfig& config) {
  const std::string path = ConfigFilePath();
  if (path.empty()) return Status::Ok();
  std::error_code ignored;
  if (!std::filesystem::exists(path, ignored)) return Status::Ok();  // the common case
  std::optional<std::string> text = ReadWholeFile(path);
  if (!text) return Internal("reading config file " + path + ": cannot read");
  nlohmann::json parsed = nlohmann::json::parse(*text, nullptr, false);
  if (!parsed.is_object()) {
    return InvalidArgument("", "reading config file " + path + ": not a JSON object");
  }
  std::string url, api_key;
  Status status = ReadStringMember(parsed, "url", url);
  if (status.ok()) status = ReadStringMember(parsed, "apiKey", api_key);
  RETURN_IF_ERROR(status.WithContext("reading config file " + path));
  if (config.url.empty()) config.url = url;
  if (config.api_key.empty()) config.api_key = api_key;
  return Status::Ok();
}

}  // namespace

std::string ConfigFilePath() {
  std::string base = EnvOrEmpty("XDG_CONFIG_HOME");
  if (base.empty()) {
    const std::string home = EnvOrEmpty("HOME");
    if (home.empty()) return "";
    base = home + "/.config";
  }
  return base + "/adapt/config.json";
}

namespace {

// The host `url` names, as libcurl reads it, without IPv6 brackets ("" when unreadable).
std::string HostOf(const std::string& url) {
  std::unique_ptr<CURLU, decltype(&curl_url_cleanup)> u(curl_url(), &curl_url_cleanup);
  char* host = nullptr;
  if (!u || curl_url_set(u.get(), CURLUPART_URL, url.c_str(), 0) != CURLUE_OK ||
      curl_url_get(u.get(), CURLUPART_HOST, &host, 0) != CURLUE_OK)
    return "";
  std::string out = host;
  curl_free(host);
  if (out.size() > 2 && out.front() == '[' && out.back() == ']')
    out = out.substr(1, out.size() - 2);
  return out;
}

}  // namespace

Result<ClientConfig> ResolveClientConfig(const ConfigFlags& flags) {
  ClientConfig config;
  config.url = !flags.url.empty() ? flags.url : EnvOrEmpty("ADAPT_URL");
  config.api_key = !flags.api_key.empty() ? flags.api_key : EnvOrEmpty("ADAPT_API_KEY");
  if (config.url.empty() || config.api_key.empty()) RETURN_IF_ERROR(ApplyConfigFile(config));

  if (config.url.empty()) config.url = ClientConfig().url;
  while (config.url.size() > 1 && config.url.back() == '/') config.url.pop_back();
  // The local adaptd's admin key goes only to a local adaptd: with ADAPT_URL naming another
  // host, it would be sent there.
  if (config.api_key.empty() && IsLoopbackHost(HostOf(config.url))) {
    std::string state_dir = EnvOrEmpty("ADAPT_STATE_DIR");
    if (state_dir.empty()) state_dir = "/var/lib/adapt";
    // An unreadable admin key is normal for non-root users; they fall through to no key.
    if (auto key = ReadWholeFile(state_dir + "/admin.key")) config.api_key = TrimWhitespace(*key);
  }
  return config;
}

}  // namespace adapt::cli
