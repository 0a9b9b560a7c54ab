// Test support for the image tests: a registry on a loopback port that answers each request
// with what the test's handler says (one thread per connection, one request per connection),
// and the OCI image a test serves from it. Included by the image *_test.cc files.
#pragma once

#include <archive.h>
#include <archive_entry.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "image/digest.h"
#include "image/manifest.h"

namespace adapt::image::test_support {

struct FakeRequest {
  std::string method, path;
  std::map<std::string, std::string> headers;  // lower-case names
};

struct FakeReply {
  int status = 200;
  std::string body = {};
  std::map<std::string, std::string> headers = {};
  // Sends the body a byte at a time with this pause in between (a registry dripping).
  std::chrono::milliseconds drip{0};
};

class FakeRegistry {
 public:
  using Handler = std::function<FakeReply(const FakeRequest&)>;

  explicit FakeRegistry(Handler handler) : handler_(std::move(handler)) {
    listener_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    ::bind(listener_, reinterpret_cast<sockaddr*>(&addr), len);
    ::listen(listener_, 64);
    ::getsockname(listener_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    acceptor_ = std::thread([this] { Accept(); });
  }

  // The handler must have let every request end by now (a test releases what it holds).
  ~FakeRegistry() { Stop(); }

  // Stops accepting and waits for the requests in progress to end: what requests() says
  // afterwards is final. Idempotent.
  void Stop() {
    if (stopping_.exchange(true)) return;
    ::shutdown(listener_, SHUT_RDWR);
    acceptor_.join();
    ::close(listener_);
    std::vector<std::thread> connections;
    {
      std::lock_guard lock(mu_);
      connections.swap(connections_);
    }
    for (auto& t : connections) t.join();
  }

  std::string host() const { return "127.0.0.1:" + std::to_string(port_); }
  int port() const { return port_; }

  // The requests seen so far, as "METHOD PATH".
  std::vector<std::string> requests() {
    std::lock_guard lock(mu_);
    return requests_;
  }
  std::vector<FakeRequest> full_requests() {
    std::lock_guard lock(mu_);
    return full_;
  }

 private:
  void Accept() {
    while (true) {
      int fd = ::accept(listener_, nullptr, nullptr);
      if (fd < 0 && stopping_) return;
      if (fd < 0) continue;  // a client that gave up before it was accepted (ECONNABORTED)
      std::lock_guard lock(mu_);
      connections_.emplace_back([this, fd] { Serve(fd); });
    }
  }

  void Serve(int fd) {
    timeval timeout{10, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
    std::string head;
    char c;
    while (!head.ends_with("\r\n\r\n") && ::recv(fd, &c, 1, 0) == 1) head += c;
    FakeRequest req;
    auto sp1 = head.find(' '), sp2 = head.find(' ', sp1 + 1);
    if (sp1 == std::string::npos || sp2 == std::string::npos) {
      ::close(fd);
      return;
    }
    req.method = head.substr(0, sp1);
    req.path = head.substr(sp1 + 1, sp2 - sp1 - 1);
    for (size_t i = head.find("\r\n"); i != std::string::npos && i + 2 < head.size();) {
      size_t end = head.find("\r\n", i + 2);
      std::string line = head.substr(i + 2, end - i - 2);
      auto colon = line.find(':');
      if (colon != std::string::npos) {
        std::string name = line.substr(0, colon);
        for (auto& ch : name) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
        req.headers[name] = line.substr(line.find_first_not_of(' ', colon + 1));
      }
      i = end;
    }
    {
      std::lock_guard lock(mu_);
      requests_.push_back(req.method + " " + req.path);
      full_.push_back(req);
    }
    FakeReply reply = handler_(req);
    std::string out = "HTTP/1.1 " + std::to_string(reply.status) +
                      " X\r\nContent-Length: " + std::to_string(reply.body.size()) +
                      "\r\nConnection: close\r\n";
    for (const auto& [name, value] : reply.headers) out += name + ": " + value + "\r\n";
    out += "\r\n";
    bool ok = Send(fd, out);
    if (reply.drip.count() == 0) {
      ok = ok && Send(fd, req.method == "HEAD" ? "" : reply.body);
    } else {
      for (size_t i = 0; ok && i < reply.body.size(); ++i) {
        std::this_thread::sleep_for(reply.drip);
        ok = Send(fd, reply.body.substr(i, 1));
      }
    }
    ::close(fd);
  }

  static bool Send(int fd, const std::string& data) {
    size_t sent = 0;
    while (sent < data.size()) {
      ssize_t n = ::send(fd, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
      if (n <= 0) return false;
      sent += static_cast<size_t>(n);
    }
    return true;
  }

  Handler handler_;
  std::atomic<bool> stopping_ = false;
  int listener_ = -1;
  int port_ = 0;
  std::thread acceptor_;
  std::mutex mu_;
  std::vector<std::thread> connections_;
  std::vector<std::string> requests_;
  std::vector<FakeRequest> full_;
};

// A plain tar of regular files, name -> content.
inline std::string PlainTar(const std::vector<std::pair<std::string, std::string>>& files) {
  std::vector<char> buf(8 << 20);
  size_t used = 0;
  archive* a = archive_write_new();
  archive_write_set_format_pax_restricted(a);
  archive_write_open_memory(a, buf.data(), buf.size(), &used);
  for (const auto& [name, content] : files) {
    archive_entry* e = archive_entry_new();
    archive_entry_set_pathname(e, name.c_str());
    archive_entry_set_filetype(e, AE_IFREG);
    archive_entry_set_perm(e, 0644);
    archive_entry_set_size(e, static_cast<la_int64_t>(content.size()));
    archive_write_header(a, e);
    archive_write_data(a, content.data(), content.size());
    archive_entry_free(e);
  }
  archive_write_close(a);
  archive_write_free(a);
  return std::string(buf.data(), used);
}

// `data` compressed with gzip at `level` (levels give different blobs of the same content).
inline std::string Gzip(const std::string& data, int level) {
  std::vector<char> buf(data.size() + (1 << 20));
  size_t used = 0;
  archive* a = archive_write_new();
  archive_write_add_filter_gzip(a);
  archive_write_set_filter_option(a, "gzip", "compression-level", std::to_string(level).c_str());
  archive_write_set_format_raw(a);
  archive_write_open_memory(a, buf.data(), buf.size(), &used);
  archive_entry* e = archive_entry_new();
  archive_entry_set_filetype(e, AE_IFREG);
  archive_write_header(a, e);
  archive_write_data(a, data.data(), data.size());
  archive_entry_free(e);
  archive_write_close(a);
  archive_write_free(a);
  return std::string(buf.data(), used);
}

// An image of plain-tar layers as a registry serves it: the manifest (tag "1") and its blobs.
// Given `diff_ids`, the layers are compressed blobs of those tars (media type gzip).
struct FakeImage {
  std::string manifest;
  std::string config;
  std::vector<std::string> layers;
  std::map<std::string, std::string> blobs;  // digest -> bytes
  bool compressed = false;

  explicit FakeImage(std::vector<std::string> layer_tars,
                     std::vector<std::string> compressed_diff_ids = {})
      : layers(std::move(layer_tars)), compressed(!compressed_diff_ids.empty()) {
    nlohmann::json diff_ids = nlohmann::json::array();
    for (const auto& d : compressed_diff_ids) diff_ids.push_back(d);
    if (!compressed)
      for (const auto& l : layers) diff_ids.push_back(Sha256Of(l));
    config = nlohmann::json{{"os", "linux"},
                            {"architecture", "amd64"},
                            {"rootfs", {{"type", "layers"}, {"diff_ids", diff_ids}}}}
                 .dump();
    SetManifest(config.size());
  }

  // The manifest, declaring `config_size` for the config.
  void SetManifest(uint64_t config_size) {
    nlohmann::json m = {{"schemaVersion", 2},
                        {"mediaType", kOciManifest},
                        {"config",
                         {{"mediaType", "application/vnd.oci.image.config.v1+json"},
                          {"digest", Sha256Of(config)},
                          {"size", config_size}}},
                        {"layers", nlohmann::json::array()}};
    blobs.clear();
    blobs[Sha256Of(config)] = config;
    for (const auto& l : layers) {
      m["layers"].push_back(
          {{"mediaType", compressed ? "application/vnd.oci.image.layer.v1.tar+gzip"
                                    : "application/vnd.oci.image.layer.v1.tar"},
           {"digest", Sha256Of(l)},
           {"size", l.size()}});
      blobs[Sha256Of(l)] = l;
    }
    manifest = m.dump();
  }

  // Answers /v2/<any repository>/manifests/1 and /blobs/<digest>; 404 otherwise.
  FakeReply Answer(const FakeRequest& req) const {
    FakeReply reply;
    if (req.path.ends_with("/manifests/1")) {
      reply.body = manifest;
      reply.headers["Content-Type"] = kOciManifest;
      return reply;
    }
    auto at = req.path.find("/blobs/");
    if (at != std::string::npos) {
      auto it = blobs.find(req.path.substr(at + 7));
      if (it != blobs.end()) {
        reply.body = it->second;
        return reply;
      }
    }
    reply.status = 404;
    return reply;
  }
};

}  // namespace adapt::image::test_support
