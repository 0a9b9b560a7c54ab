// RegistryClient: the OCI Distribution API over libcurl, for one repository. Anonymous
// access, bearer tokens from a WWW-Authenticate challenge (with the basic credentials when
// given), basic auth, redirects to blob storage (followed here, up to 5; credentials are not
// forwarded to another origin) and retries with backoff on transport errors, 429 and 5xx.
// Every connection, a redirect's and the token realm's included, is checked against
// RegistryDestinations before it is opened. Each transfer has a deadline (set_transfer_time).
// Errors name the registry and the HTTP status, never what the registry's answer said.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>

#include "base/status.h"
#include "image/manifest.h"
#include "image/reference.h"
#include "image/registry_destination.h"

namespace adapt::image {

struct Credentials {
  std::string username;
  std::string password;
  bool empty() const { return username.empty() && password.empty(); }
};

struct FetchedManifest {
  std::string body;
  std::string content_type;
  std::string digest;  // sha256 of body
};

class RegistryClient {
 public:
  // `destinations` outlives the client.
  RegistryClient(ImageReference ref, Credentials creds, const RegistryDestinations& destinations);

  // By tag or digest; a manifest fetched by digest is verified against it.
  Result<FetchedManifest> GetManifest(const std::string& tag_or_digest);

  // Streams the blob into `path` (created or truncated; "" keeps nothing, see VerifyBlob), hashing
  // as it goes; a digest or size mismatch removes `path` and is an error. `progress` gets bytes
  // written so far.
  Status GetBlob(const Descriptor& blob, const std::string& path,
                 const std::function<void(uint64_t)>& progress = {});

  // Fetches the blob and checks its digest and size like GetBlob, keeping nothing: proof
  // that the registry serves these bytes to these credentials (a HEAD would only prove that
  // the registry says so, and the registry may be the one asking).
  Status VerifyBlob(const Descriptor& blob, const std::function<void(uint64_t)>& progress = {});

  // Backoff between attempts, in milliseconds (tests shorten it).
  void set_backoff_ms(int ms) { backoff_ms_ = ms; }

  // A transfer (a manifest or a blob, with its attempts, redirects and token request) must
  // end within `base` plus a second for each `bytes_per_second` it may carry (a blob's
  // declared size, a manifest's 4 MiB cap), or it fails as too slow: curl's low-speed floor
  // alone (1 KiB/s) lets a registry dripping just above it hold a pull of a 32 GiB blob for
  // days. Defaults: 60 s and 1 MiB/s, so 32 GiB get 9 h 7 min (tests shorten them).
  void set_transfer_time(std::chrono::milliseconds base, uint64_t bytes_per_second) {
    transfer_base_ = base;
    transfer_bytes_per_second_ = bytes_per_second == 0 ? 1 : bytes_per_second;
  }

 private:
  struct Response {
    long status = 0;
    std::string content_type;
    std::string www_authenticate;
    std::string body;  // error bodies and manifests; blobs go to the sink
  };
  using Sink = std::function<bool(const char*, size_t)>;
  Result<Response> Send(const std::string& url, const std::string& accept, const Sink& sink,
                        bool with_auth);
  // One request to `url`, no redirect followed; `redirect` gets a 3xx's absolute Location.
  Result<Response> SendOnce(const std::string& url, const std::string& accept, const Sink& sink,
                            bool with_auth, std::string& redirect);
  Result<Response> SendWithAuth(const std::string& url, const std::string& accept, const Sink& sink,
                                const std::function<void()>& reset);
  Status Authenticate(const std::string& challenge);
  Status ErrorFor(const Response& r, const std::string& what) const;
  // Starts the deadline of a transfer of at most `max_bytes`.
  void StartTransfer(uint64_t max_bytes);
  bool Expired() const { return std::chrono::steady_clock::now() >= deadline_; }
  Status TooSlow() const;

  ImageReference ref_;
  Credentials creds_;
  const RegistryDestinations& destinations_;
  std::string authorization_;  // "Bearer ..." or "Basic ..." once a challenge was answered
  int backoff_ms_ = 500;
  std::chrono::milliseconds transfer_base_{60'000};
  uint64_t transfer_bytes_per_second_ = 1 << 20;
  std::chrono::milliseconds transfer_allowed_{0};
  std::chrono::steady_clock::time_point deadline_ = std::chrono::steady_clock::time_point::max();
};

}  // namespace adapt::image
