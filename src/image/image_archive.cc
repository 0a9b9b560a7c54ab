#include "image/image_archive.h"

#include <nlohmann/json.hpp>

#include "base/json_parse.h"
#include "base/text.h"
#include "image/digest.h"
#include "image/reference.h"
#include "os/files.h"

namespace adapt::image {
namespace {

using nlohmann::json;

constexpr const char* kRefName = "org.opencontainers.image.ref.name";
constexpr const char* kContainerdName = "io.containerd.image.name";  // docker save's full name
constexpr const char* kOciLayer = "application/vnd.oci.image.layer.v1.tar";
constexpr const char* kOciConfig = "application/vnd.oci.image.config.v1+json";

Status Bad(const std::string& why) {
  return InvalidArgument("archive", "the image archive is not usable: " + why);
}

Result<std::string> ReadSmall(const StagedFile& f, const std::string& what) {
  if (f.size > kMaxMetadataBytes)
    return Bad(what + " is " + std::to_string(f.size >> 20) + " MiB, over the 4 MiB limit");
  return os::ReadFile(f.path);
}

Result<json> ReadJson(const StagedFile& f, const std::string& what) {
  ASSIGN_OR_RETURN(std::string text, ReadSmall(f, what));
  auto j = ParseJson(text, what);
  if (!j.ok()) return Bad(j.status().message());
  return j;
}

std::string Join(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + PrintableAscii(n);
  return out.empty() ? "no named images" : out;
}

// The staged blob a descriptor names, verified against its digest and size.
Result<const StagedFile*> OciBlob(const StagedArchive& a, const Descriptor& d,
                                  const std::string& what) {
  std::string path = "blobs/sha256/" + d.digest.substr(7);
  const StagedFile* f = a.Find(path);
  if (!f) return Bad(what + " " + d.digest + " is missing (no " + path + ")");
  if (f->digest != d.digest)
    return Bad(what + " " + path + " does not match its digest (its content is " + f->digest + ")");
  if (f->size != d.size)
    return Bad(what + " " + d.digest + " is " + std::to_string(f->size) + " bytes, not the " +
               std::to_string(d.size) + " its descriptor says");
  return f;
}

Result<ArchiveImage> ReadOci(const StagedArchive& a, const std::string& name) {
  ArchiveImage img;
  img.format = "oci";
  ASSIGN_OR_RETURN(json index_json, ReadJson(*a.Find("index.json"), "index.json"));
  if (!index_json.is_object() || !index_json.contains("manifests") ||
      !index_json["manifests"].is_array())
    return Bad("index.json has no manifests list");
  auto parsed = ParseManifest(
      index_json.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace), kOciIndex);
  if (!parsed.ok()) return Bad("index.json: " + parsed.status().message());
  // Candidates: the entries with the name asked for (all when none was asked for).
  std::vector<Descriptor> candidates;
  std::vector<std::string> names;
  for (size_t i = 0; i < parsed->manifests.size(); ++i) {
    const json& e = index_json["manifests"][i];
    std::string ref_name, full_name;
    if (e.contains("annotations") && e["annotations"].is_object()) {
      const json& ann = e["annotations"];
      if (ann.contains(kRefName) && ann[kRefName].is_string()) ref_name = ann[kRefName];
      if (ann.contains(kContainerdName) && ann[kContainerdName].is_string())
        full_name = ann[kContainerdName];
    }
    std::string shown = full_name.empty() ? ref_name : full_name;
    if (!shown.empty()) names.push_back(shown);
    if (name.empty() || (!ref_name.empty() && ref_name == name) ||
        (!full_name.empty() && full_name == name)) {
      candidates.push_back(parsed->manifests[i]);
      img.name = name.empty() ? shown : name;
    }
  }
  if (candidates.empty()) {
    if (name.empty()) return Bad("index.json lists no image");
    return Bad("it has no image named '" + name + "'; it holds " + Join(names));
  }
  Descriptor chosen = candidates[0];
  if (candidates.size() > 1) {
    Manifest several;
    several.is_index = true;
    several.manifests = candidates;
    auto pick = PickPlatform(several, "in the archive");
    if (!pick.ok() || !name.empty())
      return Bad("it holds " + std::to_string(candidates.size()) + " images; choose one by name (" +
                 Join(names) + ")");
    chosen = *pick;
  }
  ASSIGN_OR_RETURN(const StagedFile* mf, OciBlob(a, chosen, "manifest"));
  ASSIGN_OR_RETURN(std::string text, ReadSmall(*mf, "the manifest"));
  auto m = ParseManifest(text, chosen.media_type);
  if (!m.ok()) return Bad("manifest " + chosen.digest + ": " + m.status().message());
  std::string what =
      img.name.empty() ? "the archive's image" : "image '" + PrintableAscii(img.name) + "'";
  if (m->is_index) {
    img.blob_files[chosen.digest] = mf->path;
    ASSIGN_OR_RETURN(chosen, PickPlatform(*m, img.name.empty() ? "in the archive" : img.name));
    ASSIGN_OR_RETURN(mf, OciBlob(a, chosen, "manifest"));
    ASSIGN_OR_RETURN(text, ReadSmall(*mf, "the manifest"));
    m = ParseManifest(text, chosen.media_type);
    if (!m.ok()) return Bad("manifest " + chosen.digest + ": " + m.status().message());
    if (m->is_index) return Bad("it nests an index in an index");
  }
  img.manifest = text;
  img.manifest_digest = chosen.digest;
  ASSIGN_OR_RETURN(const StagedFile* cf, OciBlob(a, m->config, "config"));
  ASSIGN_OR_RETURN(std::string config_text, ReadSmall(*cf, "the config"));
  ASSIGN_OR_RETURN(img.config, ParseImageConfig(config_text, what));
  img.config_digest = m->config.digest;
  img.blob_files[m->config.digest] = cf->path;
  for (const auto& layer : m->layers) {
    ASSIGN_OR_RETURN(const StagedFile* lf, OciBlob(a, layer, "layer"));
    img.blob_files[layer.digest] = lf->path;
    img.layers.push_back(layer);
  }
  return img;
}

Result<ArchiveImage> ReadDocker(const StagedArchive& a, const std::string& name) {
  ArchiveImage img;
  img.format = "docker";
  ASSIGN_OR_RETURN(json list, ReadJson(*a.Find("manifest.json"), "manifest.json"));
  if (!list.is_array() || list.empty()) return Bad("manifest.json lists no image");
  std::vector<const json*> candidates;
  std::vector<std::string> names;
  for (const auto& e : list) {
    if (!e.is_object()) return Bad("manifest.json has an entry that is not an object");
    bool match = name.empty();
    if (e.contains("RepoTags") && e["RepoTags"].is_array()) {
      for (const auto& t : e["RepoTags"]) {
        if (!t.is_string()) continue;
        names.push_back(t);
        if (t == name) match = true;
      }
    }
    if (match) candidates.push_back(&e);
  }
  if (candidates.empty())
    return Bad("it has no image named '" + name + "'; it holds " + Join(names));
  if (candidates.size() > 1)
    return Bad("it holds " + std::to_string(candidates.size()) + " images; choose one by name (" +
               Join(names) + ")");
  const json& e = *candidates[0];
  if (!name.empty()) {
    img.name = name;
  } else if (e.contains("RepoTags") && e["RepoTags"].is_array() && !e["RepoTags"].empty() &&
             e["RepoTags"][0].is_string()) {
    img.name = e["RepoTags"][0];
  }
  std::string what =
      img.name.empty() ? "the archive's image" : "image '" + PrintableAscii(img.name) + "'";
  if (!e.contains("Config") || !e["Config"].is_string())
    return Bad("manifest.json names no Config for " + what);
  std::string config_path = e["Config"];
  const StagedFile* cf = a.Find(config_path);
  if (!cf) return Bad("the config " + config_path + " named by manifest.json is missing");
  ASSIGN_OR_RETURN(std::string config_text, ReadSmall(*cf, "the config"));
  ASSIGN_OR_RETURN(img.config, ParseImageConfig(config_text, what));
  img.config_digest = cf->digest;
  img.blob_files[cf->digest] = cf->path;
  // Docker names the config by its digest; a config that was changed no longer matches.
  std::string base = config_path.substr(config_path.rfind('/') + 1);
  if (base.size() == 64 + 5 && base.ends_with(".json") &&
      "sha256:" + base.substr(0, 64) != cf->digest)
    return Bad("the config " + config_path + " does not match its digest (its content is " +
               cf->digest + ")");
  if (!e.contains("Layers") || !e["Layers"].is_array())
    return Bad("manifest.json names no Layers for " + what);
  const json& rootfs = img.config.value("rootfs", json::object());
  json diff_ids = rootfs.is_object() ? rootfs.value("diff_ids", json::array()) : json::array();
  if (!diff_ids.is_array() || diff_ids.size() != e["Layers"].size())
    return Bad("manifest.json lists " + std::to_string(e["Layers"].size()) +
               " layers but the config's rootfs.diff_ids lists " +
               std::to_string(diff_ids.is_array() ? diff_ids.size() : 0));
  json manifest = {
      {"schemaVersion", 2},
      {"mediaType", kOciManifest},
      {"config", {{"mediaType", kOciConfig}, {"digest", cf->digest}, {"size", cf->size}}},
      {"layers", json::array()}};
  uint64_t total = 0;
  for (size_t i = 0; i < diff_ids.size(); ++i) {
    const json& p = e["Layers"][i];
    if (!p.is_string()) return Bad("manifest.json has a layer path that is not a string");
    const StagedFile* lf = a.Find(p.get<std::string>());
    std::string shown = PrintableAscii(p.get<std::string>());
    if (!lf) return Bad("layer " + shown + " named by manifest.json is missing");
    // Docker's layers are plain tars, so each one's sha256 is its diff id.
    if (!diff_ids[i].is_string() || lf->digest != diff_ids[i].get<std::string>())
      return Bad("layer " + shown + " does not match the config's diff id " +
                 (diff_ids[i].is_string() ? diff_ids[i].get<std::string>() : "?") +
                 " (its content is " + lf->digest + ")");
    Descriptor d{kOciLayer, lf->digest, lf->size, ""};
    img.layers.push_back(d);
    img.blob_files[d.digest] = lf->path;
    manifest["layers"].push_back(
        {{"mediaType", kOciLayer}, {"digest", d.digest}, {"size", d.size}});
    total += d.size;
  }
  if (total > kMaxImageBytes)
    return Status(Code::kResourceExhausted,
                  "the image's layers total " + std::to_string(total >> 20) +
                      " MiB, over the 32 GiB image-build limit",
                  "archive");
  img.manifest = manifest.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  img.manifest_digest = Sha256Of(img.manifest);
  return img;
}

}  // namespace

Result<ArchiveImage> ReadImageArchive(const StagedArchive& archive, const std::string& name) {
  // Docker 25's `docker save` writes both; the OCI layout has a digest for every blob.
  if (archive.Find("index.json")) return ReadOci(archive, name);
  if (archive.Find("manifest.json")) return ReadDocker(archive, name);
  return Bad("it holds neither an OCI image layout (index.json) nor a docker save manifest.json");
}

}  // namespace adapt::image
