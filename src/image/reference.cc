#include "image/reference.h"

#include <regex>

#include "base/loopback_host.h"

namespace adapt::image {
namespace {

// The grammar of github.com/distribution/reference, simplified to what matters here.
const std::regex kComponent("[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*");
const std::regex kTag("[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}");
const std::regex kHost("[A-Za-z0-9.-]+(?::[0-9]{1,5})?|\\[[0-9a-fA-F:]+\\](?::[0-9]{1,5})?");

bool IsLoopback(const std::string& registry) {
  std::string host = registry;
  if (host.starts_with("[")) {
    host = host.substr(0, host.find(']') + 1);
  } else if (auto colon = host.rfind(':'); colon != std::string::npos) {
    host = host.substr(0, colon);
  }
  return IsLoopbackHost(host);
}

}  // namespace

bool IsSha256Digest(const std::string& d) {
  if (d.size() != 71 || !d.starts_with("sha256:")) return false;
  for (size_t i = 7; i < d.size(); ++i) {
    char c = d[i];
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

std::string ImageReference::BaseUrl() const {
  return (IsLoopback(registry) ? "http://" : "https://") + registry;
}

std::string ImageReference::ToString() const {
  std::string out = registry + "/" + repository;
  if (!tag.empty() && (digest.empty() || tag != "latest")) out += ":" + tag;
  if (!digest.empty()) out += "@" + digest;
  return out;
}

Result<ImageReference> ParseReference(const std::string& text, const std::string& field) {
  auto bad = [&](const std::string& why) {
    return InvalidArgument(field, field + " '" + text + "' is not a valid image reference: " + why);
  };
  if (text.empty() || text.size() > 512) return bad("it must be 1 to 512 characters");
  ImageReference ref;
  std::string rest = text;
  if (auto at = rest.find('@'); at != std::string::npos) {
    ref.digest = rest.substr(at + 1);
    rest = rest.substr(0, at);
    if (!IsSha256Digest(ref.digest)) return bad("the digest must be sha256: and 64 hex digits");
  }
  // A tag follows the last ':' that comes after the last '/'.
  auto slash = rest.rfind('/');
  auto colon = rest.rfind(':');
  if (colon != std::string::npos && (slash == std::string::npos || colon > slash)) {
    ref.tag = rest.substr(colon + 1);
    rest = rest.substr(0, colon);
    if (ref.tag.empty() || ref.tag.size() > 128) return bad("the tag must be 1 to 128 characters");
    if (!std::regex_match(ref.tag, kTag)) return bad("the tag has characters a tag cannot have");
  }
  if (ref.tag.empty() && ref.digest.empty()) ref.tag = "latest";
  auto first_slash = rest.find('/');
  std::string first = rest.substr(0, first_slash);
  if (first_slash != std::string::npos && (first.find_first_of(".:") != std::string::npos ||
                                           first == "localhost" || first.starts_with("["))) {
    ref.registry = first;
    ref.repository = rest.substr(first_slash + 1);
    if (!std::regex_match(ref.registry, kHost)) return bad("the registry host is malformed");
  } else {
    ref.registry = "registry-1.docker.io";
    ref.repository = first_slash == std::string::npos ? "library/" + rest : rest;
  }
  if (ref.registry == "docker.io" || ref.registry == "index.docker.io")
    ref.registry = "registry-1.docker.io";
  if (ref.repository.empty() || ref.repository.size() > 255)
    return bad("the repository name is missing or too long");
  size_t start = 0;
  while (true) {
    auto end = ref.repository.find('/', start);
    std::string comp = ref.repository.substr(start, end == std::string::npos ? end : end - start);
    if (!std::regex_match(comp, kComponent))
      return bad("repository components are lowercase letters, digits and separators");
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return ref;
}

}  // namespace adapt::image
