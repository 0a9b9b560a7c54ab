// ImagePolicy: which images sandbox creation accepts (seed 000's trusted sources, issue 17).
// The assistant surface (MCP) accepts the environment aliases and images from trusted
// sources; with developer_public_images on, a developer sandbox also takes any image. The
// REST API accepts any image (seed 001) unless the operator applies the assistant's rule to
// it too (--image-policy assistant). The edge says which surface asks; the check is here,
// once. Immutable after construction: thread-safe.
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "core/field_names.h"

namespace adapt::core {

// Who is creating: the REST API (and the CLI over it) or the assistant (MCP tools).
enum class RequestSurface { kApi, kAssistant };

// One trusted source, as the operator writes it:
//   "registry.example.com/*"   every repository of a registry
//   "docker.io/library/*"      the repositories under a prefix ("ghcr.io/acme/*")
//   "mathworks/matlab"         one repository, any tag or digest
// A first component without '.' or ':' (and not "localhost") is a Docker Hub path, as
// docker reads references; docker.io, index.docker.io and registry-1.docker.io are one host.
struct TrustedSource {
  std::string registry;    // normalized: "docker.io", "ghcr.io", "127.0.0.1:5000"
  std::string repository;  // "library" (with prefix) or "mathworks/matlab"; "" with prefix
  bool prefix = false;     // true: repository is a prefix ("/*")

  bool Matches(const std::string& registry, const std::string& repository) const;
  std::string ToString() const;
};

// InvalidArgument naming `field` when `text` is not a source as above.
Result<TrustedSource> ParseTrustedSource(const std::string& text,
                                         const std::string& field = "trustedImageSources");

struct ImagePolicyConfig {
  // Sources the assistant's restricted sandboxes may use (besides the aliases).
  std::vector<std::string> trusted_sources = {"docker.io/library/*"};
  // Seed 000: a developer sandbox created by the assistant also accepts any public image.
  bool developer_public_images = false;
  // "open" (seed 001: REST accepts any image) or "assistant" (REST follows MCP's rule).
  std::string api_policy = "open";
};

class ImagePolicy {
 public:
  // The default policy: Docker Hub's official images, no public images, REST open.
  ImagePolicy();
  // `also_trusted` are references the operator chose elsewhere (the aliases' images, the
  // default image): their repositories are trusted as exact sources. InvalidArgument
  // naming the setting when a source or the api policy is malformed.
  static Result<ImagePolicy> Make(const ImagePolicyConfig& config,
                                  const std::vector<std::string>& also_trusted = {});

  // Whether a sandbox of `profile` created through `surface` may use `reference` (an image
  // reference, never an alias: the caller accepts those first). PermissionDenied naming
  // `names("image")` and the rule that refuses it; InvalidArgument when the reference
  // cannot be parsed and the policy applies.
  Status Check(const std::string& reference, const std::string& profile, RequestSurface surface,
               const FieldNames& names = {}) const;

  // Whether the REST API may pull `reference` (POST /v1/images). Under the "assistant" api
  // policy only what some sandbox could be created from: a trusted source, or any image when
  // developer_public_images is on (a developer sandbox may use it; creates still judge each
  // use by its reference). PermissionDenied naming `field` and the rule otherwise.
  Status CheckPull(const std::string& reference, const std::string& field = "reference") const;
  // Whether the REST API may import an archive: an imported image is no trusted source, so
  // under the "assistant" api policy no sandbox could use it. PermissionDenied otherwise.
  Status CheckImport() const;

  // Whether `reference` comes from a trusted source.
  bool Trusted(const std::string& reference) const;

  // The sources as configured (normalized), for the environment listings.
  std::vector<std::string> SourceNames() const;
  bool developer_public_images() const { return developer_public_images_; }
  const std::string& api_policy() const { return api_policy_; }

 private:
  std::vector<TrustedSource> sources_;
  std::vector<TrustedSource> also_trusted_;
  bool developer_public_images_ = false;
  std::string api_policy_ = "open";
};

}  // namespace adapt::core
