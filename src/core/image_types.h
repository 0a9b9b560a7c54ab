// The typed requests and views of ImageService (/v1/images). Field names are the core's own;
// api/image_routes.cc maps them to and from REST's JSON.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace adapt::core {

// Registry credentials for one pull: a password given inline, or the name of an
// organization secret holding it (exactly one of the two). Never stored or shown.
struct RegistryCredentials {
  std::string username;
  std::optional<std::string> password;
  std::optional<std::string> password_secret;
};

struct PullImage {
  std::string reference;  // "registry.example.com/app:1"
  std::optional<RegistryCredentials> credentials;
};

// A sandbox's filesystem saved as an image (a commit): its name and tag ("latest" when
// none) are how the organization's image list shows it ("name:tag"), unique there.
struct CommitImage {
  std::string name;
  std::optional<std::string> tag;
};

struct ImageProgress {
  uint64_t bytes = 0;
  uint64_t total_bytes = 0;
};

// A pull or import seen as an operation: "Running", "Completed" or "Failed".
struct ImagePhase {
  std::string id;
  std::string phase;
};

struct ImageView {
  std::string id;
  std::string source;                    // "pull", "import" or "commit"
  std::optional<std::string> reference;  // an import's archive name, a commit's "name:tag"
  std::string status;                    // "pulling", "importing", "committing", "ready", "failed"
  int64_t created_at = 0;                // ms since the epoch
  std::optional<std::string> digest, platform, error;
  std::optional<int64_t> size;  // bytes
  ImageProgress progress;
  ImagePhase operation;
  // Filled only by the verbs that show one image (Get, Import).
  bool detailed = false;
  // The image config's `config` object as JSON text: the image author's document, passed
  // through unread. Empty when there is none (yet).
  std::string config_json;
  std::vector<std::string> sandboxes;  // live sandboxes using it
};

// GET /v1/operations/{id} for a pull or import.
struct ImageOperation {
  std::string id;
  std::string kind;   // "image.pull", "image.import" or "image.commit"
  std::string phase;  // "Running", "Completed", "Failed"
  ImageProgress progress;
  std::string image_id;
  std::optional<std::string> error;
};

}  // namespace adapt::core
