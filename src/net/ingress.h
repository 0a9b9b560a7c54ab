// The ingress listener: HTTP and HTTPS (terminated here with adapt's certificate) on
// adaptd's ingress ports, routed by the Host header to a sandbox's address and port. After
// the request head it is a byte pump in both directions, so streamed bodies and WebSocket
// upgrades pass unchanged. An unknown or removed host is a 404 at once.
//
// Bounded: one organization's routes (endpoints and apps) hold at most a quarter of
// `limits.max_total` connections over both listeners, so that a tenant whose backend accepts
// and never answers cannot fill the ingress for everyone (429 past it). Each listener holds at
// most `limits` connections (in all and per client address;
// one beyond is closed as it is accepted, unless the listener is full and a connection still
// waits for its head: the one waiting longest is closed instead), the request head (after the
// TLS handshake) must
// arrive within `header_timeout` of the connection's start, and a connection passed to a
// sandbox is closed after `idle_timeout` without a byte either way.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/connection_limiter.h"
#include "base/status.h"

namespace adapt::net {

struct IngressBackend {
  std::string address;  // empty: the host is known but nothing serves it now (a 503)
  uint16_t port = 0;
  // Tried in order when the backend refuses the connection or does not accept it within
  // IngressOptions::connect_timeout (a deployed app's other replicas).
  std::vector<IngressBackend> fallbacks;
  // Called as the connection is given to this backend; what it returns is held until the
  // connection closes (a deployed app counts its replicas' open connections so). May be empty.
  std::function<std::shared_ptr<void>()> acquire;
  // The organization the route is of: its connections count against
  // IngressServer::PerOwnerLimit. Empty: not counted (a static site's, counted by the site
  // server).
  std::string owner;
};

struct IngressOptions {
  std::string host = "127.0.0.1";
  uint16_t http_port = 0;  // 0: any free port
  uint16_t https_port = 0;
  std::string cert_file;  // PEM; generated (self-signed) with key_file when missing
  std::string key_file;
  std::string domain;  // the certificate names *.domain
  int threads = 2;
  ConnectionLimits limits;  // per listener (HTTP and HTTPS each)
  std::chrono::seconds header_timeout{10};
  std::chrono::seconds idle_timeout{900};
  // A backend that has not accepted the connection by then (its sandbox drops the SYN, or
  // its listen queue is full) is given up: the next fallback is tried, or the client gets a
  // 504. Sandboxes are on this host, where a connect takes well under a millisecond.
  std::chrono::milliseconds connect_timeout{3000};
};

class IngressServer {
 public:
  // `route` maps a lower-case host name (no port) to where it goes, nullopt: no such route.
  using Router = std::function<std::optional<IngressBackend>(const std::string& host)>;
  IngressServer(IngressOptions options, Router route);
  ~IngressServer();
  Status Start();
  void Stop();
  uint16_t http_port() const;
  uint16_t https_port() const;
  // Closes the open connections routed to `host` (its endpoint was removed).
  void Disconnect(const std::string& host);
  // Ends the connections given to a backend at `address` (its sandbox stopped, was deleted or
  // died): a request whose answer has not begun is answered 502, one being answered is cut.
  // Without it they waited for the idle timeout: a stopped sandbox keeps its address, and
  // nothing there answers or resets.
  void BackendGone(const std::string& address);
  // The connections one owner's routes may hold at once (0: no cap).
  static int PerOwnerLimit(const ConnectionLimits& limits) { return PerOrganizationLimit(limits); }

  class Impl;  // public so that the connection sessions (ingress.cc) can name it

 private:
  std::unique_ptr<Impl> impl_;
};

// Writes a self-signed certificate for `domain` and *.`domain` and its key (PEM).
Status WriteSelfSignedCertificate(const std::string& domain, const std::string& cert_file,
                                  const std::string& key_file);

}  // namespace adapt::net
