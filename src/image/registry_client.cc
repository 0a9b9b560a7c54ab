#include "image/registry_client.h"

#include <curl/curl.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <thread>

#include "base/json_parse.h"
#include "base/text.h"
#include "image/digest.h"
#include "os/socket.h"

namespace adapt::image {
namespace {

constexpr int kAttempts = 4;
constexpr int kMaxRedirects = 5;

const char* kManifestAccept =
    "application/vnd.oci.image.index.v1+json, "
    "application/vnd.docker.distribution.manifest.list.v2+json, "
    "application/vnd.oci.image.manifest.v1+json, "
    "application/vnd.docker.distribution.manifest.v2+json";

struct CurlDeleter {
  void operator()(CURL* c) const { curl_easy_cleanup(c); }
};
struct SlistDeleter {
  void operator()(curl_slist* s) const { curl_slist_free_all(s); }
};

struct Transfer {
  const std::function<bool(const char*, size_t)>* sink = nullptr;
  std::string* body = nullptr;
  std::map<std::string, std::string> headers;  // lower-case names, last response only
  bool overflow = false;
  // Where the request goes, as its URL names it, and why a connection was refused.
  const RegistryDestinations* destinations = nullptr;
  std::string host;
  int port = 0;
  Status refused;
};

// libcurl's hook between resolving and connecting: the one place that sees the address a
// request (a redirect's, the token realm's) would reach, whatever name led there.
curl_socket_t OnOpenSocket(void* user, curlsocktype, curl_sockaddr* a) {
  auto* t = static_cast<Transfer*>(user);
  Status st = t->destinations->Check(t->host, t->port, &a->addr);
  if (!st.ok()) {
    t->refused = st;
    return CURL_SOCKET_BAD;
  }
  int fd = os::NewSocket(a->family, a->socktype, a->protocol);
  return fd < 0 ? CURL_SOCKET_BAD : fd;
}

struct UrlDeleter {
  void operator()(CURLU* u) const { curl_url_cleanup(u); }
};

// The scheme, host and port of `url` (the port the scheme implies when none is given).
struct Origin {
  std::string scheme, host;
  int port = 0;
  bool operator==(const Origin&) const = default;
};
std::optional<Origin> OriginOf(const std::string& url) {
  std::unique_ptr<CURLU, UrlDeleter> u(curl_url());
  if (!u || curl_url_set(u.get(), CURLUPART_URL, url.c_str(), 0) != CURLUE_OK) return std::nullopt;
  Origin o;
  auto part = [&](CURLUPart which, unsigned flags, std::string& out) {
    char* v = nullptr;
    if (curl_url_get(u.get(), which, &v, flags) != CURLUE_OK) return false;
    out = v;
    curl_free(v);
    return true;
  };
  std::string port;
  if (!part(CURLUPART_SCHEME, 0, o.scheme) || !part(CURLUPART_HOST, 0, o.host) ||
      !part(CURLUPART_PORT, CURLU_DEFAULT_PORT, port))
    return std::nullopt;
  o.port = std::atoi(port.c_str());
  return o;
}

size_t OnBody(char* data, size_t size, size_t n, void* user) {
  auto* t = static_cast<Transfer*>(user);
  size_t len = size * n;
  if (*t->sink) return (*t->sink)(data, len) ? len : 0;
  if (t->body->size() + len > kMaxMetadataBytes) {
    t->overflow = true;
    return 0;
  }
  t->body->append(data, len);
  return len;
}

size_t OnHeader(char* data, size_t size, size_t n, void* user) {
  auto* t = static_cast<Transfer*>(user);
  std::string line(data, size * n);
  if (line.starts_with("HTTP/")) t->headers.clear();  // a redirect's headers are not ours
  auto colon = line.find(':');
  if (colon != std::string::npos) {
    std::string name = line.substr(0, colon);
    for (auto& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    std::string value = line.substr(colon + 1);
    auto b = value.find_first_not_of(" \t");
    auto e = value.find_last_not_of(" \t\r\n");
    t->headers[name] = b == std::string::npos ? "" : value.substr(b, e - b + 1);
  }
  return size * n;
}

std::map<std::string, std::string> ParseChallenge(const std::string& header, std::string& scheme) {
  std::map<std::string, std::string> out;
  auto sp = header.find(' ');
  scheme = header.substr(0, sp);
  for (auto& c : scheme) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  size_t i = sp == std::string::npos ? header.size() : sp + 1;
  while (i < header.size()) {
    while (i < header.size() && (header[i] == ' ' || header[i] == ',')) ++i;
    auto eq = header.find('=', i);
    if (eq == std::string::npos) break;
    std::string key = header.substr(i, eq - i);
    std::string value;
    i = eq + 1;
    if (i < header.size() && header[i] == '"') {
      auto end = header.find('"', i + 1);
      if (end == std::string::npos) end = header.size();
      value = header.substr(i + 1, end - i - 1);
      i = end + 1;
    } else {
      auto end = header.find(',', i);
      if (end == std::string::npos) end = header.size();
      value = header.substr(i, end - i);
      i = end;
    }
    out[key] = value;
  }
  return out;
}

std::string Escape(const std::string& s) {
  char* e = curl_easy_escape(nullptr, s.c_str(), static_cast<int>(s.size()));
  std::string out = e ? e : "";
  curl_free(e);
  return out;
}

bool Retryable(long status) { return status == 429 || status >= 500; }

}  // namespace

RegistryClient::RegistryClient(ImageReference ref, Credentials creds,
                               const RegistryDestinations& destinations)
    : ref_(std::move(ref)), creds_(std::move(creds)), destinations_(destinations) {
  static const bool init = [] { return curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK; }();
  (void)init;
}

Result<RegistryClient::Response> RegistryClient::SendOnce(const std::string& url,
                                                          const std::string& accept,
                                                          const Sink& sink, bool with_auth,
                                                          std::string& redirect) {
  redirect.clear();
  auto origin = OriginOf(url);
  if (!origin)
    return Status(Code::kUnavailable,
                  "registry " + ref_.registry + " sent a malformed address to follow");
  std::unique_ptr<CURL, CurlDeleter> curl(curl_easy_init());
  if (!curl) return Internal("curl_easy_init failed");
  Response r;
  Transfer t{&sink, &r.body, {}, false, &destinations_, origin->host, origin->port, Status::Ok()};
  std::unique_ptr<curl_slist, SlistDeleter> headers;
  auto add = [&](const std::string& h) {
    headers.reset(curl_slist_append(headers.release(), h.c_str()));
  };
  if (!accept.empty()) add("Accept: " + accept);
  if (with_auth && authorization_.starts_with("Bearer ")) add("Authorization: " + authorization_);
  CURL* c = curl.get();
  curl_easy_setopt(c, CURLOPT_URL, url.c_str());
  if (headers) curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers.get());
  if (with_auth && authorization_ == "Basic") {
    curl_easy_setopt(c, CURLOPT_HTTPAUTH, CURLAUTH_BASIC);
    curl_easy_setopt(c, CURLOPT_USERNAME, creds_.username.c_str());
    curl_easy_setopt(c, CURLOPT_PASSWORD, creds_.password.c_str());
  }
  // Redirects are followed by Send, which checks each one's origin for credentials.
  curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
  curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(c, CURLOPT_OPENSOCKETFUNCTION, OnOpenSocket);
  curl_easy_setopt(c, CURLOPT_OPENSOCKETDATA, &t);
  curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, 15L);
  // What is left of the transfer's deadline: a registry sending slowly but steadily is cut off.
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      deadline_ - std::chrono::steady_clock::now());
  if (left.count() <= 0) return TooSlow();
  curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, static_cast<long>(left.count()));
  // A stalled transfer (under 1 KiB/s for 60 s) is abandoned rather than waited on forever.
  curl_easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, 1024L);
  curl_easy_setopt(c, CURLOPT_LOW_SPEED_TIME, 60L);
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(c, CURLOPT_USERAGENT, "adapt/0.1");
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, OnBody);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &t);
  curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, OnHeader);
  curl_easy_setopt(c, CURLOPT_HEADERDATA, &t);
  // Error bodies must not reach a blob sink: only a 200 streams there.
  Sink gated;
  if (sink) {
    gated = [&](const char* d, size_t n) {
      long code = 0;
      curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
      if (code != 200) {
        if (r.body.size() < 64 * 1024) r.body.append(d, n);
        return true;
      }
      return sink(d, n);
    };
    t.sink = &gated;
  }
  CURLcode rc = curl_easy_perform(c);
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r.status);
  if (!t.refused.ok()) return t.refused;
  if (t.overflow)
    // Not the URL: after a redirect it is the registry's text.
    return InvalidArgument("image",
                           "the manifest registry " + ref_.registry + " sent is over 4 MiB");
  if (rc == CURLE_WRITE_ERROR && r.status == 200)
    return Status(Code::kInvalidArgument, "aborted", "sink");
  // curl's clock may fire its timeout a little before ours reaches the deadline: a timeout
  // that near it is the deadline's (the low-speed abort, the other timeout, needs 60 s).
  if (rc == CURLE_OPERATION_TIMEDOUT &&
      std::chrono::steady_clock::now() + std::chrono::milliseconds(100) >= deadline_)
    return TooSlow();
  if (rc != CURLE_OK)
    return Status(Code::kUnavailable,
                  "registry " + ref_.registry + " is unreachable (" + curl_easy_strerror(rc) + ")");
  r.content_type = t.headers["content-type"];
  r.www_authenticate = t.headers["www-authenticate"];
  char* location = nullptr;
  if (r.status >= 300 && r.status < 400 &&
      curl_easy_getinfo(c, CURLINFO_REDIRECT_URL, &location) == CURLE_OK && location)
    redirect = location;
  return r;
}

Result<RegistryClient::Response> RegistryClient::Send(const std::string& url,
                                                      const std::string& accept, const Sink& sink,
                                                      bool with_auth) {
  auto first = OriginOf(url);
  std::string current = url, next;
  for (int hop = 0;; ++hop) {
    // Credentials go to the origin asked first only, never to where it redirects.
    bool same_origin = first && OriginOf(current) == first;
    ASSIGN_OR_RETURN(Response r, SendOnce(current, accept, sink, with_auth && same_origin, next));
    if (next.empty()) return r;
    if (hop == kMaxRedirects)
      return Status(Code::kUnavailable, "registry " + ref_.registry + " redirected more than " +
                                            std::to_string(kMaxRedirects) + " times");
    current = next;
  }
}

Status RegistryClient::Authenticate(const std::string& challenge) {
  std::string scheme;
  auto params = ParseChallenge(challenge, scheme);
  if (scheme == "basic") {
    if (creds_.empty())
      return Status(Code::kUnauthenticated,
                    "registry " + ref_.registry + " requires credentials for " + ref_.repository);
    authorization_ = "Basic";
    return Status::Ok();
  }
  if (scheme != "bearer" || params["realm"].empty())
    return Status(Code::kUnauthenticated,
                  "registry " + ref_.registry + " asked for an unsupported authentication");
  std::string scope =
      params.count("scope") ? params["scope"] : "repository:" + ref_.repository + ":pull";
  std::string url = params["realm"];
  url += (url.find('?') == std::string::npos ? "?" : "&");
  url += "service=" + Escape(params["service"]) + "&scope=" + Escape(scope);
  std::string saved = authorization_;
  authorization_ = creds_.empty() ? "" : "Basic";
  auto r = Send(url, "application/json", {}, true);
  authorization_ = saved;
  if (!r.ok()) return r.status();
  if (r->status == 401 || r->status == 403)
    return Status(Code::kUnauthenticated,
                  "registry " + ref_.registry + " refused " +
                      (creds_.empty() ? "anonymous access" : "the credentials") + " to " +
                      ref_.repository);
  if (r->status != 200)
    return Status(Code::kUnavailable, "the token service of registry " + ref_.registry +
                                          " answered HTTP " + std::to_string(r->status));
  // Bounded like every other text a registry writes (the body is at most 4 MiB already).
  auto answer = ParseJson(r->body, "the token service's answer");
  std::string token;
  for (const char* key : {"token", "access_token"}) {
    if (!token.empty() || !answer.ok() || !answer->is_object()) break;
    auto it = answer->find(key);
    if (it != answer->end() && it->is_string()) token = it->get<std::string>();
  }
  // It becomes a request header: a line break in it would add headers of the registry's choice.
  if (token.empty() || HasControlCharacter(token))
    return Status(Code::kUnavailable,
                  "the token service of registry " + ref_.registry + " sent no usable token");
  authorization_ = "Bearer " + token;
  return Status::Ok();
}

Result<RegistryClient::Response> RegistryClient::SendWithAuth(const std::string& url,
                                                              const std::string& accept,
                                                              const Sink& sink,
                                                              const std::function<void()>& reset) {
  Status last;
  bool authed = false;
  for (int attempt = 0; attempt < kAttempts; ++attempt) {
    if (attempt > 0)
      std::this_thread::sleep_for(std::chrono::milliseconds(backoff_ms_ << (attempt - 1)));
    if (Expired()) return TooSlow();
    if (reset) reset();
    auto r = Send(url, accept, sink, true);
    if (!r.ok()) {
      if (r.status().code() != Code::kUnavailable || Expired()) return r.status();
      last = r.status();
      continue;
    }
    if (r->status == 401 && !authed && !r->www_authenticate.empty()) {
      RETURN_IF_ERROR(Authenticate(r->www_authenticate));
      authed = true;
      --attempt;  // answering the challenge is not a failed attempt
      continue;
    }
    if (Retryable(r->status)) {
      last = Status(Code::kUnavailable,
                    "registry " + ref_.registry + " answered HTTP " + std::to_string(r->status));
      continue;
    }
    return r;
  }
  return last.WithContext("after " + std::to_string(kAttempts) + " attempts");
}

Status RegistryClient::ErrorFor(const Response& r, const std::string& what) const {
  // The registry's own words stay out of the error: a registry (or whatever a reference
  // names) must not get text of its choosing into adaptd's answers.
  std::string msg =
      "registry " + ref_.registry + " answered HTTP " + std::to_string(r.status) + " for " + what;
  if (r.status == 404) return Status(Code::kNotFound, msg, "image");
  if (r.status == 401 || r.status == 403) return Status(Code::kUnauthenticated, msg, "image");
  return Status(Code::kUnavailable, msg, "image");
}

void RegistryClient::StartTransfer(uint64_t max_bytes) {
  uint64_t rate = transfer_bytes_per_second_;
  auto for_bytes = std::chrono::seconds(max_bytes / rate) +
                   std::chrono::milliseconds((max_bytes % rate) * 1000 / rate);
  transfer_allowed_ =
      transfer_base_ + std::chrono::duration_cast<std::chrono::milliseconds>(for_bytes);
  deadline_ = std::chrono::steady_clock::now() + transfer_allowed_;
}

Status RegistryClient::TooSlow() const {
  return Status(Code::kUnavailable,
                "registry " + ref_.registry + " did not finish a transfer within the " +
                    std::to_string(transfer_allowed_.count() / 1000) +
                    " s it was allowed (a minute, plus a second for each MiB it declares)",
                "image");
}

Result<FetchedManifest> RegistryClient::GetManifest(const std::string& tag_or_digest) {
  StartTransfer(kMaxMetadataBytes);
  std::string url = ref_.BaseUrl() + "/v2/" + ref_.repository + "/manifests/" + tag_or_digest;
  ASSIGN_OR_RETURN(Response r, SendWithAuth(url, kManifestAccept, {}, {}));
  if (r.status != 200) return ErrorFor(r, "manifest " + ref_.repository + ":" + tag_or_digest);
  FetchedManifest m{r.body, r.content_type, Sha256Of(r.body)};
  if (IsSha256Digest(tag_or_digest) && m.digest != tag_or_digest)
    return InvalidArgument("image", "the manifest registry " + ref_.registry + " sent for " +
                                        tag_or_digest + " has digest " + m.digest);
  return m;
}

Status RegistryClient::GetBlob(const Descriptor& blob, const std::string& path,
                               const std::function<void(uint64_t)>& progress) {
  StartTransfer(blob.size);
  std::string url = ref_.BaseUrl() + "/v2/" + ref_.repository + "/blobs/" + blob.digest;
  std::unique_ptr<FILE, int (*)(FILE*)> file(nullptr, fclose);
  std::unique_ptr<Sha256> hash;
  uint64_t written = 0;
  bool too_big = false, write_failed = false;
  const bool keep = !path.empty();  // else VerifyBlob: hashed, never written
  auto reset = [&] {
    if (keep) file.reset(fopen(path.c_str(), "wbe"));
    hash = std::make_unique<Sha256>();
    written = 0;
  };
  Sink sink = [&](const char* d, size_t n) {
    if (keep && !file) return write_failed = true, false;
    if (written + n > blob.size) return too_big = true, false;
    if (keep && fwrite(d, 1, n, file.get()) != n) return write_failed = true, false;
    hash->Update(d, n);
    written += n;
    if (progress) progress(written);
    return true;
  };
  auto r = SendWithAuth(url, "", sink, reset);
  bool flushed = !keep || (file && fflush(file.get()) == 0 && fsync(fileno(file.get())) == 0);
  file.reset();
  auto fail = [&](Status st) {
    if (keep) std::remove(path.c_str());
    return st;
  };
  if (too_big)
    return fail(InvalidArgument("image", "blob " + blob.digest + " from registry " + ref_.registry +
                                             " is larger than the " + std::to_string(blob.size) +
                                             " bytes its manifest declares"));
  if (write_failed || (r.ok() && r->status == 200 && !flushed))
    return fail(Internal("writing blob " + blob.digest + " to " + path + " failed"));
  if (!r.ok()) return fail(r.status());
  if (r->status != 200) return fail(ErrorFor(*r, "blob " + blob.digest));
  std::string got = hash->Digest();
  if (got != blob.digest || written != blob.size)
    return fail(InvalidArgument("image", "blob " + blob.digest + " from registry " + ref_.registry +
                                             " failed verification (received " +
                                             std::to_string(written) + " bytes with digest " + got +
                                             ")"));
  return Status::Ok();
}

Status RegistryClient::VerifyBlob(const Descriptor& blob,
                                  const std::function<void(uint64_t)>& progress) {
  return GetBlob(blob, "", progress);
}

}  // namespace adapt::image
