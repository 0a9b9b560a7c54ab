#include "image/manifest.h"

#include <nlohmann/json.hpp>

#include "base/json_parse.h"
#include "image/reference.h"

namespace adapt::image {
namespace {

using nlohmann::json;

// Registry text fit to appear in an error: a media type, os or architecture is named only
// when it is a short run of token characters (issue 14, 3.4: errors never carry what the
// registry wrote, which could be terminal escapes, markup or a lure for the reader).
constexpr size_t kMaxNamedToken = 80;
bool IsPrintableToken(const std::string& text) {
  bool printable = !text.empty() && text.size() <= kMaxNamedToken;
  for (char c : text) {
    bool token = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                 c == '.' || c == '+' || c == '-' || c == '_' || c == '/';
    printable = printable && token;
  }
  return printable;
}

std::string Named(const std::string& what, const std::string& text) {
  return IsPrintableToken(text) ? what + " '" + text + "'" : "an unprintable " + what;
}

Result<Descriptor> ParseDescriptor(const json& j, const std::string& what) {
  if (!j.is_object() || !j.contains("digest") || !j["digest"].is_string() || !j.contains("size") ||
      !j["size"].is_number_unsigned())
    return InvalidArgument("manifest", "the manifest's " + what + " has no digest or size");
  Descriptor d;
  d.digest = j["digest"];
  d.size = j["size"];
  // Not value(): it throws on a mediaType that is not a string (a registry's or an
  // archive's text), which would end the pull's worker thread and adaptd with it.
  if (j.contains("mediaType") && j["mediaType"].is_string()) d.media_type = j["mediaType"];
  if (!IsSha256Digest(d.digest))
    return InvalidArgument("manifest", "the manifest's " + what + " digest is not sha256");
  if (j.contains("platform") && j["platform"].is_object()) {
    const auto& p = j["platform"];
    auto field = [&](const char* key) {
      return p.contains(key) && p[key].is_string() ? p[key].get<std::string>() : std::string();
    };
    d.platform = field("os") + "/" + field("architecture");
    if (!field("variant").empty()) d.platform += "/" + field("variant");
  }
  return d;
}

}  // namespace

uint64_t Manifest::TotalLayerBytes() const {
  // Saturating: sizes are the registry's numbers, and two of 2^63 must not wrap to a total
  // under the image-build limit.
  uint64_t total = 0;
  for (const auto& l : layers) total = l.size > UINT64_MAX - total ? UINT64_MAX : total + l.size;
  return total;
}

Result<Manifest> ParseManifest(const std::string& body, const std::string& content_type) {
  auto parsed = ParseJson(body, "the manifest the registry sent");
  // ParseJson's message may name a member: the registry's text.
  if (!parsed.ok())
    return InvalidArgument("manifest",
                           "the manifest the registry sent is not valid JSON, or nests arrays and "
                           "objects too deep");
  json j = std::move(*parsed);
  if (!j.is_object())
    return InvalidArgument("manifest", "the registry sent a manifest that is not an object");
  std::string type = j.contains("mediaType") && j["mediaType"].is_string()
                         ? j["mediaType"].get<std::string>()
                         : "";
  if (type.empty()) type = content_type.substr(0, content_type.find(';'));
  Manifest m;
  if (type == kOciIndex || type == kDockerManifestList ||
      (type.empty() && j.contains("manifests"))) {
    m.is_index = true;
    if (!j.contains("manifests") || !j["manifests"].is_array())
      return InvalidArgument("manifest", "the image index has no manifests");
    for (const auto& e : j["manifests"]) {
      ASSIGN_OR_RETURN(Descriptor d, ParseDescriptor(e, "index entry"));
      m.manifests.push_back(d);
    }
    return m;
  }
  if (type != kOciManifest && type != kDockerManifest && !(type.empty() && j.contains("layers"))) {
    if (j.contains("schemaVersion") && j["schemaVersion"].is_number_integer() &&
        j["schemaVersion"].get<int64_t>() == 1)
      return Unsupported("image",
                         "Docker schema 1 manifests are not supported; push the image again with a "
                         "current client");
    return Unsupported("image", Named("manifest media type", type) + " is not supported");
  }
  if (!j.contains("config")) return InvalidArgument("manifest", "the manifest has no config");
  ASSIGN_OR_RETURN(m.config, ParseDescriptor(j["config"], "config"));
  // Checked before the config is fetched: it is read whole into memory and parsed.
  if (m.config.size > kMaxMetadataBytes)
    return Status(Code::kResourceExhausted,
                  "the manifest declares a config of " + std::to_string(m.config.size) +
                      " bytes, over the 4 MiB limit on image metadata",
                  "image");
  if (!j.contains("layers") || !j["layers"].is_array())
    return InvalidArgument("manifest", "the manifest has no layers");
  for (const auto& e : j["layers"]) {
    ASSIGN_OR_RETURN(Descriptor d, ParseDescriptor(e, "layer"));
    RETURN_IF_ERROR(LayerCompression(d.media_type).status());
    m.layers.push_back(d);
  }
  if (m.TotalLayerBytes() > kMaxImageBytes)
    return Status(Code::kResourceExhausted,
                  "the image's layers total " + std::to_string(m.TotalLayerBytes() >> 20) +
                      " MiB, over the 32 GiB image-build limit",
                  "image");
  return m;
}

Result<Descriptor> PickPlatform(const Manifest& index, const std::string& reference) {
  std::string offered;
  for (const auto& d : index.manifests) {
    if (d.platform == "linux/amd64" || d.platform.starts_with("linux/amd64/")) return d;
    if (d.platform.empty() || d.platform == "unknown/unknown") continue;  // attestations
    offered += (offered.empty() ? "" : ", ") +
               (IsPrintableToken(d.platform) ? d.platform : std::string("an unprintable one"));
  }
  return Unsupported("image", "image '" + reference +
                                  "' has no linux/amd64 variant for this host; it offers " +
                                  (offered.empty() ? std::string("no platforms") : offered));
}

Result<json> ParseImageConfig(const std::string& text, const std::string& what) {
  auto parsed = ParseJson(text, "the config of " + what);
  if (!parsed.ok())
    return InvalidArgument("image", "the config of " + what +
                                        " is not valid JSON, or nests arrays and objects too deep");
  json config = std::move(*parsed);
  if (!config.is_object())
    return InvalidArgument("image", "the config of " + what + " is not a JSON object");
  auto field = [&](const char* key, const char* dflt) {
    return config.contains(key) && config[key].is_string() ? config[key].get<std::string>()
                                                           : std::string(dflt);
  };
  std::string os_name = field("os", "linux"), arch = field("architecture", "amd64");
  if (os_name != "linux" || arch != "amd64")
    return Unsupported("image", what + " is for " + Named("platform", os_name + "/" + arch) +
                                    "; this host runs linux/amd64");
  return config;
}

Result<std::string> LayerCompression(const std::string& t) {
  if (t.ends_with("+gzip") || t.ends_with(".gzip") ||
      t == "application/vnd.docker.image.rootfs.diff.tar.gzip")
    return std::string("gzip");
  if (t.ends_with("+zstd")) return std::string("zstd");
  if (t == "application/vnd.oci.image.layer.v1.tar" || t.empty()) return std::string("");
  if (t.find("foreign") != std::string::npos || t.find("nondistributable") != std::string::npos)
    return Unsupported("image", "foreign (non-distributable) layers such as " +
                                    Named("media type", t) + " are not supported");
  return Unsupported("image", Named("layer media type", t) + " is not supported");
}

}  // namespace adapt::image
