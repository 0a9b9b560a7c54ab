#include "net/ingress.h"

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <array>
#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>
#include <vector>

#include "base/background_work.h"
#include "base/log.h"
#include "base/org_counter.h"
#include "net/session_eviction.h"
#include "os/files.h"

namespace adapt::net {
namespace {

namespace asio = boost::asio;
namespace ssl = boost::asio::ssl;
using tcp = asio::ip::tcp;

// A request head past this is refused (431); read in kHeadChunk pieces, so a connection that
// has not begun costs little. The two kChunk pump buffers come only with a backend connection.
constexpr size_t kMaxHead = 32 * 1024;
constexpr size_t kHeadChunk = 4 * 1024;
constexpr size_t kChunk = 64 * 1024;

std::string Lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// The Host header's name, lower-case and without its port; empty when there is none.
std::string HostOf(const std::string& head) {
  size_t pos = head.find("\r\n");
  while (pos != std::string::npos && pos + 2 < head.size()) {
    size_t start = pos + 2;
    size_t end = head.find("\r\n", start);
    if (end == std::string::npos || end == start) break;
    std::string line = head.substr(start, end - start);
    auto colon = line.find(':');
    if (colon != std::string::npos && Lower(line.substr(0, colon)) == "host") {
      std::string v = line.substr(colon + 1);
      v.erase(0, v.find_first_not_of(" \t"));
      v.erase(v.find_last_not_of(" \t") + 1);
      if (!v.empty() && v[0] != '[') v = v.substr(0, v.find(':'));
      return Lower(v);
    }
    pos = end;
  }
  return "";
}

std::string ErrorReply(int code, const std::string& reason, const std::string& error_code,
                       const std::string& message) {
  std::string body = nlohmann::json{{"error", {{"code", error_code}, {"message", message}}}}.dump(
                         -1, ' ', false, nlohmann::json::error_handler_t::replace) +
                     "\n";
  return "HTTP/1.1 " + std::to_string(code) + " " + reason +
         "\r\nContent-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) +
         "\r\nConnection: close\r\n\r\n" + body;
}

class SessionBase {
 public:
  virtual ~SessionBase() = default;
  virtual void Close() = 0;
  // Its backend's sandbox stopped or went away: nothing more will come from it.
  virtual void BackendGone() = 0;
};

}  // namespace

class IngressServer::Impl {
 public:
  Impl(IngressOptions o, Router r)
      : options_(std::move(o)),
        route_(std::move(r)),
        tls_(ssl::context::tls_server),
        http_limiter_("ingress (HTTP)", options_.limits),
        https_limiter_("ingress (HTTPS)", options_.limits) {}

  Status Start() {
    if (!options_.cert_file.empty()) {
      if (!os::Exists(options_.cert_file) || !os::Exists(options_.key_file))
        RETURN_IF_ERROR(
            WriteSelfSignedCertificate(options_.domain, options_.cert_file, options_.key_file));
      boost::system::error_code ec;
      tls_.use_certificate_chain_file(options_.cert_file, ec);
      if (!ec) tls_.use_private_key_file(options_.key_file, ssl::context::pem, ec);
      if (ec) return Internal("loading the ingress certificate: " + ec.message());
      tls_.set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 |
                       ssl::context::no_sslv3 | ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1);
    }
    RETURN_IF_ERROR(Listen(http_, options_.http_port));
    if (!options_.cert_file.empty()) RETURN_IF_ERROR(Listen(https_, options_.https_port));
    Accept(false);
    if (https_.is_open()) Accept(true);
    for (int i = 0; i < options_.threads; ++i)
      threads_.emplace_back(GuardedRun("ingress I/O", ioc_));
    return Status::Ok();
  }

  void Stop() {
    asio::post(ioc_, Guarded("stopping the ingress listeners", [this] {
                 boost::system::error_code ec;
                 http_.close(ec);
                 https_.close(ec);
               }));
    Disconnect("");
    work_.reset();
    ioc_.stop();
    for (auto& t : threads_) t.join();
    threads_.clear();
    // Lookups not begun are dropped; one under way ends, and what it posts to the stopped
    // I/O threads never runs.
    lookups_.stop();
    lookups_.join();
  }

  uint16_t Port(bool tls) const { return tls ? https_port_ : http_port_; }

  void Register(const std::string& host, std::weak_ptr<SessionBase> s) {
    AddTo(sessions_, host, std::move(s));
  }

  void RegisterBackend(const std::string& address, std::weak_ptr<SessionBase> s) {
    AddTo(by_backend_, address, std::move(s));
  }

  void BackendGone(const std::string& address) {
    std::vector<std::shared_ptr<SessionBase>> gone;
    {
      std::lock_guard lock(mu_);
      auto it = by_backend_.find(address);
      if (it == by_backend_.end()) return;
      for (auto& w : it->second)
        if (auto s = w.lock()) gone.push_back(s);
      by_backend_.erase(it);
    }
    for (auto& s : gone) s->BackendGone();
  }

  // "" closes every session.
  void Disconnect(const std::string& host) {
    std::vector<std::shared_ptr<SessionBase>> doomed;
    {
      std::lock_guard lock(mu_);
      for (auto it = sessions_.begin(); it != sessions_.end();) {
        if (host.empty() || it->first == host) {
          for (auto& w : it->second)
            if (auto s = w.lock()) doomed.push_back(s);
          it = sessions_.erase(it);
        } else {
          ++it;
        }
      }
    }
    for (auto& s : doomed) s->Close();
  }

  // Looks `host` up on the lookup threads and calls `done` there with the answer: the
  // router reads adaptd's store, which may wait behind another's transaction, and the I/O
  // threads meanwhile pump every other connection's bytes.
  void RouteLater(std::string host, std::function<void(std::optional<IngressBackend>)> done) {
    asio::post(lookups_, Guarded("routing an ingress connection",
                                 [this, host = std::move(host), done = std::move(done)] {
                                   done(route_(host));
                                 }));
  }
  // A place among `owner`'s connections; null when it holds PerOwnerLimit already.
  std::shared_ptr<void> TakeOwnerPlace(const std::string& owner) {
    return owner_places_.TryTake(owner);
  }
  int per_owner() const { return IngressServer::PerOwnerLimit(options_.limits); }
  ssl::context& tls() { return tls_; }
  const IngressOptions& options() const { return options_; }

 private:
  Status Listen(tcp::acceptor& acceptor, uint16_t port) {
    boost::system::error_code ec;
    auto addr = asio::ip::make_address(options_.host, ec);
    if (ec) return InvalidArgument("ingress", "bad ingress address " + options_.host);
    tcp::endpoint ep(addr, port);
    acceptor.open(ep.protocol(), ec);
    if (!ec) acceptor.set_option(tcp::acceptor::reuse_address(true), ec);
    if (!ec) acceptor.bind(ep, ec);
    if (!ec) acceptor.listen(asio::socket_base::max_listen_connections, ec);
    if (ec)
      return Status(Code::kUnavailable, "ingress listening on " + options_.host + ":" +
                                            std::to_string(port) + ": " + ec.message());
    (&acceptor == &http_ ? http_port_ : https_port_) = acceptor.local_endpoint().port();
    return Status::Ok();
  }

  void Accept(bool tls);

  using SessionIndex = std::map<std::string, std::vector<std::weak_ptr<SessionBase>>>;
  // Adds `s` under `key`, forgetting the key's sessions that have ended.
  void AddTo(SessionIndex& index, const std::string& key, std::weak_ptr<SessionBase> s) {
    std::lock_guard lock(mu_);
    auto& list = index[key];
    list.erase(std::remove_if(list.begin(), list.end(), [](auto& w) { return w.expired(); }),
               list.end());
    list.push_back(std::move(s));
  }

  IngressOptions options_;
  Router route_;
  asio::io_context ioc_;
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work_{
      asio::make_work_guard(ioc_)};
  ssl::context tls_;
  tcp::acceptor http_{ioc_};
  tcp::acceptor https_{ioc_};
  asio::steady_timer http_retry_{ioc_}, https_retry_{ioc_};
  uint16_t http_port_ = 0, https_port_ = 0;
  std::vector<std::thread> threads_;
  asio::thread_pool lookups_{2};
  OrgCounter owner_places_{static_cast<size_t>(IngressServer::PerOwnerLimit(options_.limits))};
  // Their slots may outlive them: sessions are destroyed with ioc_.
  ConnectionLimiter http_limiter_, https_limiter_;
  std::mutex mu_;
  SessionIndex sessions_;  // by host
  // By the backend address each was given to (the one that accepted it).
  SessionIndex by_backend_;
};

namespace {

// One client connection: read the request head, route it, then pump bytes both ways. All
// handlers run on the connection's strand (the TLS stream needs that).
template <class Stream>
class Session : public SessionBase, public std::enable_shared_from_this<Session<Stream>> {
 public:
  template <class... Args>
  Session(IngressServer::Impl& owner, ConnectionLimiter::Slot slot, Args&&... args)
      : owner_(owner),
        slot_(std::move(slot)),
        stream_(std::forward<Args>(args)...),
        backend_(stream_.get_executor()),
        timer_(stream_.get_executor()),
        connect_timer_(stream_.get_executor()) {}

  void Start() {
    // Until the head is complete, a full listener may close this session for a new one; the
    // close goes through the strand, where a head that arrived meanwhile keeps the session.
    CloseOnEviction(
        slot_, this->weak_from_this(), [](Session& s) { return s.stream_.get_executor(); },
        [](Session& s) {
          if (s.slot_.evicted()) s.Close();
        });
    slot_.MarkIdle();
    // The handshake and the head together: a client that trickles either is cut here.
    timer_.expires_after(owner_.options().header_timeout);
    timer_.async_wait([self = this->shared_from_this()](boost::system::error_code ec) {
      if (!ec && !self->pumping_) self->Close();
    });
    if constexpr (std::is_same_v<Stream, tcp::socket>) {
      ReadHead();
    } else {
      stream_.async_handshake(ssl::stream_base::server,
                              [self = this->shared_from_this()](boost::system::error_code ec) {
                                if (ec) return self->Close();
                                self->ReadHead();
                              });
    }
  }

  void Close() override {
    asio::post(stream_.get_executor(),
               Guarded("closing an ingress connection", [self = this->shared_from_this()] {
                 boost::system::error_code ec;
                 self->stream_.lowest_layer().close(ec);
                 self->backend_.close(ec);
                 self->hold_.reset();  // the backend's count drops now, not when the last
                                       // handler ends
                 self->owner_place_.reset();
                 self->closed_ = true;
                 self->timer_.cancel();
                 self->connect_timer_.cancel();
               }));
  }

  // A request whose answer has not begun gets a 502 rather than the idle timeout's silence
  // (a stopped sandbox's address stays, and nothing there answers or resets); one whose
  // answer has begun is cut.
  void BackendGone() override {
    asio::post(stream_.get_executor(),
               Guarded("ending an ingress connection", [self = this->shared_from_this()] {
                 if (self->closed_ || self->backend_gone_) return;
                 self->backend_gone_ = true;
                 boost::system::error_code ec;
                 // Reset, not closed: the sandbox's side keeps no half-closed connection.
                 self->backend_.set_option(asio::socket_base::linger(true, 0), ec);
                 self->backend_.close(ec);
                 self->hold_.reset();
                 if (self->answered_) return self->Close();
                 self->Reply(ErrorReply(502, "Bad Gateway", "unavailable",
                                        "the sandbox stopped before it answered the request"));
               }));
  }

 private:
  void ReadHead() {
    stream_.async_read_some(asio::buffer(head_buf_), [self = this->shared_from_this()](
                                                         boost::system::error_code ec, size_t n) {
      if (ec) return self->Close();
      self->head_.append(self->head_buf_.data(), n);
      if (self->head_.find("\r\n\r\n") == std::string::npos) {
        if (self->head_.size() > kMaxHead)
          return self->Reply(ErrorReply(431, "Request Header Fields Too Large", "invalid_argument",
                                        "the request head is too large"));
        return self->ReadHead();
      }
      self->Dispatch();
    });
  }

  void Dispatch() {
    slot_.MarkBusy();
    host_ = HostOf(head_);
    if (host_.empty()) return Routed(std::nullopt);
    owner_.RouteLater(host_,
                      [self = this->shared_from_this()](std::optional<IngressBackend> backend) {
                        asio::post(self->stream_.get_executor(),
                                   Guarded("routing an ingress connection",
                                           [self, backend = std::move(backend)]() mutable {
                                             if (!self->closed_) self->Routed(std::move(backend));
                                           }));
                      });
  }

  void Routed(std::optional<IngressBackend> backend) {
    if (!backend)
      return Reply(ErrorReply(404, "Not Found", "not_found",
                              "no endpoint named '" + host_.substr(0, 255) + "'"));
    if (backend->address.empty())
      return Reply(ErrorReply(503, "Service Unavailable", "unavailable",
                              "nothing is serving '" + host_.substr(0, 255) + "' now"));
    if (!backend->owner.empty()) {
      owner_place_ = owner_.TakeOwnerPlace(backend->owner);
      if (!owner_place_)
        return Reply(ErrorReply(429, "Too Many Requests", "resource_exhausted",
                                "the organization's endpoints and apps hold " +
                                    std::to_string(owner_.per_owner()) +
                                    " connections, the most they may; try again later"));
    }
    owner_.Register(host_, this->shared_from_this());
    backends_.push_back({backend->address, backend->port, {}, backend->acquire, {}});
    for (auto& b : backend->fallbacks) backends_.push_back({b.address, b.port, {}, b.acquire, {}});
    Connect(0);
  }

  // Tries backends_[i], then the next one when it refuses.
  void Connect(size_t i) {
    hold_.reset();
    if (backends_[i].acquire) hold_ = backends_[i].acquire();
    boost::system::error_code ec;
    tcp::endpoint ep(asio::ip::make_address(backends_[i].address, ec), backends_[i].port);
    if (ec) return Reply(ErrorReply(502, "Bad Gateway", "unavailable", "bad backend address"));
    // Closing the socket ends the pending connect with operation_aborted; the connect's
    // handler, on this strand too, sees connect_timed_out_.
    connect_timed_out_ = false;
    connect_timer_.expires_after(owner_.options().connect_timeout);
    connect_timer_.async_wait([self = this->shared_from_this()](boost::system::error_code ec) {
      if (ec || self->closed_) return;
      self->connect_timed_out_ = true;
      boost::system::error_code ignored;
      self->backend_.close(ignored);
    });
    backend_.async_connect(ep, [self = this->shared_from_this(), i](boost::system::error_code ec) {
      self->connect_timer_.cancel();
      // The timer may have closed the socket even as the connect completed.
      bool timed_out = self->connect_timed_out_;
      if (timed_out) ec = asio::error::timed_out;
      if (ec && i + 1 < self->backends_.size() && !self->closed_) {
        boost::system::error_code ignored;
        self->backend_.close(ignored);
        return self->Connect(i + 1);
      }
      if (timed_out)
        return self->Reply(
            ErrorReply(504, "Gateway Timeout", "unavailable",
                       "the sandbox did not accept the connection within " +
                           std::to_string(self->owner_.options().connect_timeout.count()) + " ms"));
      if (ec)
        return self->Reply(
            ErrorReply(502, "Bad Gateway", "unavailable",
                       "the sandbox did not accept the connection: " + ec.message()));
      self->owner_.RegisterBackend(self->backends_[i].address, self);
      asio::async_write(self->backend_, asio::buffer(self->head_),
                        [self](boost::system::error_code ec, size_t) {
                          if (ec && self->backend_gone_) return;  // BackendGone answers
                          if (ec) return self->Close();
                          self->head_.clear();
                          self->head_.shrink_to_fit();
                          self->up_ = std::make_unique<std::array<char, kChunk>>();
                          self->down_ = std::make_unique<std::array<char, kChunk>>();
                          self->pumping_ = true;
                          self->last_active_ = std::chrono::steady_clock::now();
                          self->WatchIdle();
                          self->ClientToBackend();
                          self->BackendToClient();
                        });
    });
  }

  void Reply(std::string text) {
    reply_ = std::move(text);
    asio::async_write(
        stream_, asio::buffer(reply_),
        [self = this->shared_from_this()](boost::system::error_code, size_t) { self->Close(); });
  }

  // Closes the connection once nothing has moved either way for the idle timeout.
  void WatchIdle() {
    const auto idle = owner_.options().idle_timeout;
    timer_.expires_at(last_active_ + idle);
    timer_.async_wait([self = this->shared_from_this(), idle](boost::system::error_code ec) {
      if (ec || self->closed_) return;
      if (std::chrono::steady_clock::now() - self->last_active_ >= idle) return self->Close();
      self->WatchIdle();
    });
  }

  void ClientToBackend() {
    stream_.async_read_some(asio::buffer(*up_), [self = this->shared_from_this()](
                                                    boost::system::error_code ec, size_t n) {
      self->last_active_ = std::chrono::steady_clock::now();
      if (ec) {
        // The client finished sending; the response may still be on its way.
        boost::system::error_code ignored;
        self->backend_.shutdown(tcp::socket::shutdown_send, ignored);
        return;
      }
      asio::async_write(self->backend_, asio::buffer(self->up_->data(), n),
                        [self](boost::system::error_code ec, size_t) {
                          if (ec && self->backend_gone_) return;  // BackendGone answers
                          if (ec) return self->Close();
                          self->ClientToBackend();
                        });
    });
  }

  void BackendToClient() {
    backend_.async_read_some(asio::buffer(*down_), [self = this->shared_from_this()](
                                                       boost::system::error_code ec, size_t n) {
      self->last_active_ = std::chrono::steady_clock::now();
      if (ec && self->backend_gone_) return;  // BackendGone answers
      if (ec) return self->Close();
      self->answered_ = true;
      asio::async_write(self->stream_, asio::buffer(self->down_->data(), n),
                        [self](boost::system::error_code ec, size_t) {
                          if (ec) return self->Close();
                          self->BackendToClient();
                        });
    });
  }

  IngressServer::Impl& owner_;
  ConnectionLimiter::Slot slot_;
  Stream stream_;
  tcp::socket backend_;
  asio::steady_timer timer_;          // the head's deadline, then the idle timeout
  asio::steady_timer connect_timer_;  // the current backend's connect deadline
  bool connect_timed_out_ = false;
  std::chrono::steady_clock::time_point last_active_;
  bool pumping_ = false;
  bool closed_ = false;
  bool answered_ = false;      // a byte of the backend's answer went to the client
  bool backend_gone_ = false;  // BackendGone: its 502 or close is under way
  std::array<char, kHeadChunk> head_buf_{};
  std::unique_ptr<std::array<char, kChunk>> up_, down_;  // client to backend, and back
  std::string head_, host_, reply_;
  std::vector<IngressBackend> backends_;
  std::shared_ptr<void> hold_;         // the backend's count of open connections, while this is one
  std::shared_ptr<void> owner_place_;  // among its route's organization's, while this lives
};

}  // namespace

void IngressServer::Impl::Accept(bool tls) {
  tcp::acceptor& acceptor = tls ? https_ : http_;
  acceptor.async_accept(asio::make_strand(ioc_), [this, tls](boost::system::error_code ec,
                                                             tcp::socket socket) {
    if (ec == asio::error::operation_aborted) return;
    if (ec) {
      // EMFILE and the like persist for a while; retrying at once would spin.
      auto& retry = tls ? https_retry_ : http_retry_;
      retry.expires_after(std::chrono::milliseconds(100));
      retry.async_wait([this, tls](boost::system::error_code wait_ec) {
        if (!wait_ec) Accept(tls);
      });
      return;
    }
    boost::system::error_code peer_ec;
    auto peer = socket.remote_endpoint(peer_ec);
    auto slot = peer_ec ? std::nullopt
                        : (tls ? https_limiter_ : http_limiter_).Admit(peer.address().to_string());
    // Re-armed after the admission, so that connections are admitted in the order they were
    // accepted (a full listener closes the one waiting longest), and before the session is
    // built, so that a session that throws as it starts does not end the listening.
    Accept(tls);
    if (slot && tls) {
      std::make_shared<Session<ssl::stream<tcp::socket>>>(*this, std::move(*slot),
                                                          std::move(socket), tls_)
          ->Start();
    } else if (slot) {
      std::make_shared<Session<tcp::socket>>(*this, std::move(*slot), std::move(socket))->Start();
    } else {
      boost::system::error_code ignored;
      socket.close(ignored);
    }
  });
}

IngressServer::IngressServer(IngressOptions options, Router route)
    : impl_(std::make_unique<Impl>(std::move(options), std::move(route))) {}
IngressServer::~IngressServer() { Stop(); }
Status IngressServer::Start() { return impl_->Start(); }
void IngressServer::Stop() {
  if (impl_) {
    impl_->Stop();
    impl_.reset();
  }
}
uint16_t IngressServer::http_port() const { return impl_ ? impl_->Port(false) : 0; }
uint16_t IngressServer::https_port() const { return impl_ ? impl_->Port(true) : 0; }
void IngressServer::Disconnect(const std::string& host) {
  if (impl_ && !host.empty()) impl_->Disconnect(host);
}
void IngressServer::BackendGone(const std::string& address) {
  if (impl_ && !address.empty()) impl_->BackendGone(address);
}

Status WriteSelfSignedCertificate(const std::string& domain, const std::string& cert_file,
                                  const std::string& key_file) {
  EVP_PKEY* key = EVP_RSA_gen(2048);
  X509* x = X509_new();
  auto done = [&](Status st) {
    X509_free(x);
    EVP_PKEY_free(key);
    return st;
  };
  if (!key || !x) return done(Internal("cannot generate the ingress key"));
  X509_set_version(x, 2);
  ASN1_INTEGER_set(X509_get_serialNumber(x), static_cast<long>(std::time(nullptr)));
  X509_gmtime_adj(X509_getm_notBefore(x), -3600);
  X509_gmtime_adj(X509_getm_notAfter(x), 60L * 60 * 24 * 825);
  X509_set_pubkey(x, key);
  X509_NAME* name = X509_get_subject_name(x);
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>(domain.c_str()), -1, -1, 0);
  X509_set_issuer_name(x, name);
  std::string san = "DNS:" + domain + ",DNS:*." + domain;
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, x, x, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, NID_subject_alt_name, san.c_str());
  if (!ext) return done(Internal("cannot name the ingress certificate"));
  X509_add_ext(x, ext, -1);
  X509_EXTENSION_free(ext);
  if (X509_sign(x, key, EVP_sha256()) == 0) return done(Internal("cannot sign the certificate"));
  auto pem = [](auto write) -> std::string {
    BIO* bio = BIO_new(BIO_s_mem());
    write(bio);
    char* data = nullptr;
    long n = BIO_get_mem_data(bio, &data);
    std::string out(data, static_cast<size_t>(n));
    BIO_free(bio);
    return out;
  };
  std::string key_pem =
      pem([&](BIO* b) { PEM_write_bio_PrivateKey(b, key, nullptr, nullptr, 0, nullptr, nullptr); });
  std::string cert_pem = pem([&](BIO* b) { PEM_write_bio_X509(b, x); });
  Status st = os::WriteFileAtomic(key_file, key_pem, 0600);
  if (st.ok()) st = os::WriteFileAtomic(cert_file, cert_pem, 0644);
  return done(st);
}

}  // namespace adapt::net
