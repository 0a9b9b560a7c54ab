#include "core/image_policy.h"

#include <cctype>

#include "image/reference.h"

namespace adapt::core {
namespace {

std::string Lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// Docker Hub answers to three names; references parse to registry-1.docker.io.
std::string NormalizeRegistry(const std::string& registry) {
  std::string r = Lower(registry);
  if (r == "registry-1.docker.io" || r == "index.docker.io") return "docker.io";
  return r;
}

bool IsRegistryComponent(const std::string& c) {
  return c.find('.') != std::string::npos || c.find(':') != std::string::npos || c == "localhost";
}

bool IsPathComponent(const std::string& c) {
  if (c.empty()) return false;
  for (char ch : c) {
    bool ok =
        (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '.' || ch == '_' || ch == '-';
    if (!ok) return false;
  }
  return true;
}

std::string Joined(const std::vector<std::string>& list) {
  std::string out;
  for (const auto& s : list) out += (out.empty() ? "" : ", ") + s;
  return out;
}

}  // namespace

bool TrustedSource::Matches(const std::string& reg, const std::string& repo) const {
  if (NormalizeRegistry(reg) != registry) return false;
  if (!prefix) return repo == repository;
  return repository.empty() || repo.starts_with(repository + "/");
}

std::string TrustedSource::ToString() const {
  if (!prefix) return registry + "/" + repository;
  return registry + "/" + (repository.empty() ? "" : repository + "/") + "*";
}

Result<TrustedSource> ParseTrustedSource(const std::string& text, const std::string& field) {
  auto bad = [&] {
    return InvalidArgument(field, field + " '" + text.substr(0, 128) +
                                      "' must be REGISTRY/*, [REGISTRY/]PREFIX/* or "
                                      "[REGISTRY/]REPOSITORY (no tag, no digest)");
  };
  if (text.empty() || text.size() > 255) return bad();
  std::vector<std::string> parts;
  for (size_t i = 0; i <= text.size();) {
    size_t slash = text.find('/', i);
    if (slash == std::string::npos) slash = text.size();
    parts.push_back(text.substr(i, slash - i));
    i = slash + 1;
  }
  TrustedSource s;
  if (parts.back() == "*") {
    s.prefix = true;
    parts.pop_back();
  }
  if (parts.empty()) return bad();
  if (parts.size() > 1 && IsRegistryComponent(parts.front())) {
    s.registry = NormalizeRegistry(parts.front());
    parts.erase(parts.begin());
  } else if (parts.size() == 1 && s.prefix && IsRegistryComponent(parts.front())) {
    s.registry = NormalizeRegistry(parts.front());  // "registry.example.com/*"
    parts.clear();
  } else {
    s.registry = "docker.io";
    // docker's reading: a one-component Hub repository is an official image.
    if (parts.size() == 1 && !s.prefix) parts.insert(parts.begin(), "library");
  }
  for (const auto& p : parts) {
    if (!IsPathComponent(p)) return bad();
    s.repository += (s.repository.empty() ? "" : "/") + p;
  }
  if (!s.prefix && s.repository.empty()) return bad();
  return s;
}

ImagePolicy::ImagePolicy() : sources_{{"docker.io", "library", true}} {}

Result<ImagePolicy> ImagePolicy::Make(const ImagePolicyConfig& config,
                                      const std::vector<std::string>& also_trusted) {
  ImagePolicy p;
  p.sources_.clear();
  for (const auto& text : config.trusted_sources) {
    ASSIGN_OR_RETURN(TrustedSource s, ParseTrustedSource(text));
    p.sources_.push_back(s);
  }
  for (const auto& ref : also_trusted) {
    auto parsed = image::ParseReference(ref);
    if (!parsed.ok() || ref.starts_with("import:")) continue;
    std::string registry = NormalizeRegistry(parsed->registry), repository = parsed->repository;
    if (registry == "docker.io" && repository.find('/') == std::string::npos)
      repository = "library/" + repository;
    p.also_trusted_.push_back({registry, repository, false});
  }
  if (config.api_policy != "open" && config.api_policy != "assistant")
    return InvalidArgument("imagePolicy", "imagePolicy must be \"assistant\" or \"open\"");
  p.developer_public_images_ = config.developer_public_images;
  p.api_policy_ = config.api_policy;
  return p;
}

bool ImagePolicy::Trusted(const std::string& reference) const {
  // "import:<id>" would parse as Docker Hub's library/import.
  if (reference.starts_with("import:")) return false;
  auto ref = image::ParseReference(reference);
  if (!ref.ok()) return false;
  std::string repository = ref->repository;
  // "docker.io/python" is docker's library/python too.
  if (NormalizeRegistry(ref->registry) == "docker.io" && repository.find('/') == std::string::npos)
    repository = "library/" + repository;
  for (const auto* list : {&sources_, &also_trusted_})
    for (const auto& s : *list)
      if (s.Matches(ref->registry, repository)) return true;
  return false;
}

Status ImagePolicy::Check(const std::string& reference, const std::string& profile,
                          RequestSurface surface, const FieldNames& names) const {
  if (surface == RequestSurface::kApi && api_policy_ == "open") return Status::Ok();
  std::string field = names("image");
  bool imported = reference.starts_with("import:");
  if (!imported) {
    RETURN_IF_ERROR(image::ParseReference(reference, field).status());
    if (Trusted(reference)) return Status::Ok();
    if (profile == "developer" && developer_public_images_) return Status::Ok();
  }
  std::string rule = "sandboxes accept environment aliases and images from trusted sources only (" +
                     Joined(SourceNames()) + ")";
  std::string what = imported ? "an imported image" : "image '" + reference + "'";
  std::string why;
  if (imported)
    why = "an imported image is not from a trusted source";
  else if (profile == "developer")
    why = "developer_public_images is off on this host";
  else if (developer_public_images_)
    why = names("security_profile") + " developer also accepts any public image";
  std::string where = surface == RequestSurface::kApi ? " (image policy \"assistant\")" : "";
  return Status(Code::kPermissionDenied,
                what + " is refused by the trusted image sources rule" + where + ": " +
                    (profile == "developer" ? "developer " : "restricted ") + rule +
                    (why.empty() ? "" : "; " + why),
                field);
}

Status ImagePolicy::CheckPull(const std::string& reference, const std::string& field) const {
  if (api_policy_ == "open") return Status::Ok();
  RETURN_IF_ERROR(image::ParseReference(reference, field).status());
  if (Trusted(reference) || developer_public_images_) return Status::Ok();
  return Status(Code::kPermissionDenied,
                "image '" + reference +
                    "' is refused by the trusted image sources rule (image policy "
                    "\"assistant\"): images are pulled from trusted sources only (" +
                    Joined(SourceNames()) + "); developer_public_images is off on this host",
                field);
}

Status ImagePolicy::CheckImport() const {
  if (api_policy_ == "open") return Status::Ok();
  return Status(Code::kPermissionDenied,
                "imports are refused by the trusted image sources rule (image policy "
                "\"assistant\"): an imported image is not from a trusted source, so no sandbox "
                "could be created from it",
                "");
}

std::vector<std::string> ImagePolicy::SourceNames() const {
  std::vector<std::string> out;
  for (const auto& s : sources_) out.push_back(s.ToString());
  return out;
}

}  // namespace adapt::core
