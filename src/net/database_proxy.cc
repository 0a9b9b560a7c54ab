#include "net/database_proxy.h"

#include <array>
#include <memory>
#include <string_view>
#include <type_traits>
#include <vector>

#include "base/background_work.h"
#include "base/ignore_error.h"
#include "base/log.h"
#include "net/pg_backend_key.h"
#include "net/pg_startup.h"
#include "net/session_eviction.h"
#include "os/tcp_keepalive.h"

namespace adapt::net {

namespace asio = boost::asio;
using asio::ip::tcp;
using generic_socket = asio::generic::stream_protocol::socket;

class DatabaseProxy::Session : public std::enable_shared_from_this<DatabaseProxy::Session> {
 public:
  Session(DatabaseProxy& proxy, tcp::socket client, ConnectionLimiter::Slot slot,
          std::string source)
      : proxy_(proxy),
        client_(std::move(client)),
        server_(client_.get_executor()),
        resolver_(client_.get_executor()),
        timer_(client_.get_executor()),
        slot_(std::move(slot)),
        source_(std::move(source)),
        id_(++proxy_.sessions_started_) {}
  ~Session() {
    proxy_.sessions_.erase(id_);
    ForgetKey();
    if (counted_) proxy_.session_count_.Release(allowed_->database);
  }

  const std::string& source() const { return source_; }

  // Its sandbox was released (DatabaseProxy::Disconnect).
  void Disconnect() {
    if (closed_) return;
    spdlog::info("database proxy: closed {}'s session: the sandbox was released", source_);
    Close();
  }

  void Start() {
    proxy_.sessions_[id_] = weak_from_this();
    // A client that vanishes without a FIN (its sandbox's network gone) is noticed and closed.
    WarnIfError(os::EnableTcpKeepalive(client_.native_handle(), {}),
                "database proxy: keepalive on a client's connection");
    // Until its startup packet is read, a full listener may close this session for a new one
    // (on the session's executor, where a packet read meanwhile keeps it).
    CloseOnEviction(
        slot_, weak_from_this(), [](Session& s) { return s.client_.get_executor(); },
        [](Session& s) {
          if (s.slot_.evicted()) s.Close();
        });
    slot_.MarkIdle();
    // Runs on past the splice: the server holds a backend for the session while it waits for
    // the client's password.
    timer_.expires_after(proxy_.startup_timeout_);
    timer_.async_wait([self = shared_from_this()](auto ec) {
      if (ec || self->authenticated_) return;
      if (self->spliced_)
        spdlog::info("database proxy: closed {}: its login did not finish in time", self->source_);
      self->Close();
    });
    ReadStartup();
  }

 private:
  void ReadStartup() {
    size_t have = startup_.size();
    startup_.resize(kMaxStartupBytes);
    client_.async_read_some(asio::buffer(startup_.data() + have, startup_.size() - have),
                            [self = shared_from_this(), have](auto ec, size_t n) {
                              self->startup_.resize(have + n);
                              if (ec) return self->Close();
                              self->OnStartupBytes();
                            });
  }

  void OnStartupBytes() {
    StartupMessage m = ParseStartup(startup_);
    switch (m.kind) {
      case StartupKind::kNeedMore:
        if (startup_.size() >= kMaxStartupBytes) return Close();
        return ReadStartup();
      case StartupKind::kInvalid:
        return Refuse("08P01", m.error);
      case StartupKind::kCancel:
        return Cancel(m.cancel);
      case StartupKind::kSslRequest:
      case StartupKind::kGssEncRequest: {
        // No encryption inside the host: "N", then the client sends its StartupMessage.
        if (++encryption_requests_ > 2) return Close();
        startup_.erase(0, m.length);
        asio::async_write(client_, asio::buffer("N", 1),
                          [self = shared_from_this()](auto ec, size_t) {
                            if (ec) return self->Close();
                            if (!self->startup_.empty()) return self->OnStartupBytes();
                            self->ReadStartup();
                          });
        return;
      }
      case StartupKind::kStartup:
        return Decide(m);
    }
  }

  // Asks the proxy's lookup which database the peer may open, on a lookup thread (a store read
  // may wait), then goes on with `next` back on the I/O thread, unless the session was closed
  // meanwhile (its start-up timer, a Disconnect). Nothing is read from the client until then.
  template <typename Next>
  void LookUp(Next next) {
    slot_.MarkBusy();
    asio::post(proxy_.lookups_, Guarded("database proxy: looking up a peer's database",
                                        [self = shared_from_this(), next]() mutable {
                                          LookUpHere(std::move(self), std::move(next));
                                        }));
  }

  // On a lookup thread.
  template <typename Next>
  static void LookUpHere(std::shared_ptr<Session> self, Next next) {
    std::optional<DatabaseGrant> grant;
    // Caught here, so that the session always goes back: it must end on the I/O thread.
    RunGuarded("database proxy: looking up a peer's database",
               [&] { grant = self->proxy_.lookup_(self->source_); });
    auto executor = self->client_.get_executor();
    asio::post(executor, Guarded("database proxy: going on after a lookup",
                                 [self = std::move(self), grant = std::move(grant), next]() {
                                   if (self->closed_) return;
                                   self->allowed_ = grant;
                                   next(*self);
                                 }));
  }

  void Decide(const StartupMessage& m) {
    LookUp([user = m.user, database = m.database](Session& self) { self.Admit(user, database); });
  }

  void Admit(const std::string& user, const std::string& database) {
    if (!allowed_)
      return Refuse("28000",
                    "this address may not use a database (only sandboxes created with "
                    "\"database\": true reach their organization's)");
    const std::string& name = allowed_->database;
    if (user != name || database != name)
      return Refuse(
          "28000", "this sandbox may only open database \"" + name + "\" as user \"" + name + "\"");
    switch (proxy_.session_count_.Admit(name, allowed_->connection_limit)) {
      case DatabaseSessionCount::Admission::kAdmitted:
        break;
      case DatabaseSessionCount::Admission::kDatabaseFull:
        return Refuse("53300", "too many connections to database \"" + name + "\": its limit is " +
                                   std::to_string(allowed_->connection_limit));
      case DatabaseSessionCount::Admission::kServerFull:
        // The tenant learns nothing of the server's size or of the other organizations.
        return Refuse("53300", "too many connections on this server, try again");
    }
    counted_ = true;
    Reach();
  }

  // Connects to the server (its Unix socket, or an external server's addresses in turn).
  void Reach() {
    const DatabaseUpstream& upstream = proxy_.upstream_;
    if (!upstream.socket_path.empty())
      return Connect({asio::local::stream_protocol::endpoint(upstream.socket_path)});
    resolver_.async_resolve(upstream.host, std::to_string(upstream.port),
                            [self = shared_from_this()](auto ec, tcp::resolver::results_type r) {
                              if (ec) return self->Unavailable("resolving: " + ec.message());
                              std::vector<asio::generic::stream_protocol::endpoint> endpoints;
                              for (const auto& entry : r) endpoints.emplace_back(entry.endpoint());
                              self->Connect(std::move(endpoints));
                            });
  }

  // Tries `endpoints` in turn; the first that answers gets the StartupMessage, then the bytes
  // flow both ways.
  void Connect(std::vector<asio::generic::stream_protocol::endpoint> endpoints, size_t i = 0) {
    if (closed_) return;
    if (i >= endpoints.size()) return Unavailable("no address answered");
    boost::system::error_code ignored;
    if (server_.is_open()) server_.close(ignored);
    const auto endpoint = endpoints[i];
    server_.async_connect(endpoint, [self = shared_from_this(), endpoints = std::move(endpoints),
                                     i](auto ec) mutable {
      if (ec) {
        if (i + 1 < endpoints.size()) return self->Connect(std::move(endpoints), i + 1);
        return self->Unavailable(ec.message());
      }
      if (self->cancel_) return self->SendCancel();
      if (self->proxy_.upstream_.socket_path.empty()) {
        // Small request/response messages: no Nagle delay on either hop.
        boost::system::error_code ignored;
        self->server_.set_option(tcp::no_delay(true), ignored);
        self->client_.set_option(tcp::no_delay(true), ignored);
      }
      asio::async_write(self->server_, asio::buffer(self->startup_), [self](auto ec, size_t) {
        if (ec) return self->Close();
        self->spliced_ = true;
        self->startup_.clear();
        self->Pump(self->client_, self->server_, self->up_);
        self->Pump(self->server_, self->client_, self->down_);
      });
    });
  }

  // The server did not answer: the client gets PostgreSQL's "cannot connect now", the log the
  // reason (no address: an external server's host is the operator's business, not the tenant's).
  void Unavailable(const std::string& why) {
    spdlog::warn("database proxy: the server did not answer {}: {}", source_, why);
    if (cancel_) return Close();  // a cancel is answered by nothing, as PostgreSQL's
    Refuse("57P03", "the database is not available");
  }

  // A CancelRequest: passed on only when it names a live session of this peer's own database;
  // otherwise the connection closes with no answer, as PostgreSQL's own does.
  void Cancel(const BackendKey& key) {
    LookUp([key](Session& self) { self.CancelIfItsOwn(key); });
  }

  void CancelIfItsOwn(const BackendKey& key) {
    if (!allowed_ || !proxy_.MayCancel(key, allowed_->database)) {
      spdlog::info(
          "database proxy: dropped a cancel request from {} (pid {}): no session of its "
          "database has that key",
          source_, key.pid);
      return Close();
    }
    startup_.resize(16);  // the request itself; a client sends nothing after it
    cancel_ = true;
    Reach();
  }

  void SendCancel() {
    asio::async_write(server_, asio::buffer(startup_),
                      [self = shared_from_this()](auto ec, size_t) {
                        if (ec) return self->Close();
                        // libpq waits for the close to know the server has the request: close on
                        // the server's (the start-up timer bounds the wait).
                        self->server_.async_read_some(asio::buffer(self->down_),
                                                      [self](auto, size_t) { self->Close(); });
                      });
  }

  // The server's bytes while the session starts: its BackendKeyData makes it cancellable, and
  // its ReadyForQuery (or an error) ends the login and the start-up timer with it.
  void Scan(const uint8_t* data, size_t n) {
    if (authenticated_) return;
    scanner_.Feed(std::string_view(reinterpret_cast<const char*>(data), n));
    if (scanner_.state() == BackendKeyScanner::State::kScanning) return;
    authenticated_ = true;
    timer_.cancel();
    if (auto key = scanner_.key(); key && proxy_.Remember(*key, allowed_->database, id_))
      remembered_ = key;
  }

  void ForgetKey() {
    if (remembered_) proxy_.Forget(*remembered_, id_);
    remembered_.reset();
  }

  // Copies `from` to `to` until EOF, then half-closes `to`; the session ends when both
  // directions have (or at the first error).
  template <class From, class To>
  void Pump(From& from, To& to, std::array<uint8_t, kPumpBuffer>& buf) {
    from.async_read_some(asio::buffer(buf), [self = shared_from_this(), &from, &to, &buf](
                                                auto ec, size_t n) {
      if (ec) {
        if (ec != asio::error::eof) return self->Close();
        // The server's side ended: so did its backend, and the key with it.
        if constexpr (std::is_same_v<From, generic_socket>) self->ForgetKey();
        boost::system::error_code ignored;
        to.shutdown(asio::socket_base::shutdown_send, ignored);
        if (++self->finished_ == 2) self->Close();
        return;
      }
      if constexpr (std::is_same_v<From, generic_socket>) self->Scan(buf.data(), n);
      asio::async_write(to, asio::buffer(buf.data(), n), [self, &from, &to, &buf](auto ec, size_t) {
        if (ec) return self->Close();
        self->Pump(from, to, buf);
      });
    });
  }

  void Refuse(const std::string& code, const std::string& why) {
    if (closed_) return;
    spdlog::info("database proxy: refused {}: {}", source_, why);
    auto message = std::make_shared<std::string>(PgErrorResponse(code, why));
    asio::async_write(client_, asio::buffer(*message),
                      [self = shared_from_this(), message](auto, size_t) { self->Close(); });
  }

  void Close() {
    ForgetKey();
    if (counted_) proxy_.session_count_.Release(allowed_->database);
    counted_ = false;
    if (closed_) return;
    closed_ = true;
    boost::system::error_code ignored;
    timer_.cancel();
    client_.close(ignored);
    server_.close(ignored);
  }

  DatabaseProxy& proxy_;
  tcp::socket client_;
  generic_socket server_;
  tcp::resolver resolver_;
  asio::steady_timer timer_;
  ConnectionLimiter::Slot slot_;
  std::string source_;
  const uint64_t id_;
  std::optional<DatabaseGrant> allowed_;
  BackendKeyScanner scanner_;
  std::optional<BackendKey> remembered_;
  std::string startup_;
  std::array<uint8_t, kPumpBuffer> up_{}, down_{};
  int encryption_requests_ = 0;
  int finished_ = 0;
  bool spliced_ = false;
  bool authenticated_ = false;  // the server ended the login: ReadyForQuery or an error
  bool counted_ = false;        // holds one of the proxy's sessions (DatabaseSessionCount)
  bool closed_ = false;
  bool cancel_ = false;  // this connection carries a CancelRequest, not a session
};

DatabaseProxy::DatabaseProxy(DatabaseLookup lookup, DatabaseUpstream upstream,
                             ConnectionLimits limits, std::optional<AddressPool> sandbox_pool,
                             std::chrono::milliseconds startup_timeout)
    : lookup_(std::move(lookup)),
      upstream_(std::move(upstream)),
      sandbox_pool_(std::move(sandbox_pool)),
      startup_timeout_(startup_timeout),
      session_count_(upstream_.session_limit),
      acceptor_(io_),
      accept_retry_(io_.get_executor(), "database proxy"),
      limiter_("database proxy", limits) {}

DatabaseProxy::~DatabaseProxy() { Stop(); }

void DatabaseProxy::SetSessionLimit(int64_t limit) {
  asio::post(io_, Guarded("setting the database proxy's session limit", [this, limit] {
               if (session_count_.server_limit() == limit) return;
               spdlog::info("database proxy: at most {} sessions to the server in all", limit);
               session_count_.set_server_limit(limit);
             }));
}

Status DatabaseProxy::Start(const std::string& host, uint16_t port) {
  boost::system::error_code ec;
  auto address = asio::ip::make_address(host, ec);
  if (ec) return InvalidArgument("database_listen", "'" + host + "' is not an IP address");
  for (uint16_t try_port : {port, uint16_t{0}}) {
    ec.clear();
    if (acceptor_.is_open()) acceptor_.close(ec);
    acceptor_.open(address.is_v4() ? tcp::v4() : tcp::v6(), ec);
    if (!ec) acceptor_.set_option(tcp::acceptor::reuse_address(true), ec);
    if (!ec) acceptor_.bind({address, try_port}, ec);
    if (!ec) acceptor_.listen(asio::socket_base::max_listen_connections, ec);
    if (!ec) break;
    if (try_port == 0 || ec != asio::error::address_in_use)
      return Internal("listening for the database proxy: " + ec.message());
    spdlog::warn("database proxy: port {} is in use; listening on a free port instead", port);
  }
  port_ = acceptor_.local_endpoint().port();
  Accept();
  thread_ = std::thread(GuardedRun("database proxy I/O", io_));
  return Status::Ok();
}

void DatabaseProxy::Stop() {
  asio::post(io_, Guarded("stopping the database proxy", [this] {
               boost::system::error_code ec;
               acceptor_.close(ec);
             }));
  io_.stop();
  if (thread_.joinable()) thread_.join();
  // A lookup under way ends first (its session then goes to the stopped io_, where it is
  // destroyed with it); those not begun are dropped.
  lookups_.stop();
  lookups_.join();
}

void DatabaseProxy::Disconnect(const std::string& address) {
  asio::post(io_, Guarded("closing a sandbox's database sessions", [this, address] {
               std::vector<std::shared_ptr<Session>> doomed;
               for (const auto& [id, weak] : sessions_)
                 if (auto s = weak.lock(); s && s->source() == address) doomed.push_back(s);
               for (auto& s : doomed) s->Disconnect();
             }));
}

bool DatabaseProxy::Remember(const BackendKey& key, const std::string& database, uint64_t session) {
  if (cancel_targets_.size() >= kMaxCancelKeys && !cancel_targets_.contains(key.pid)) {
    spdlog::warn("database proxy: {} sessions hold cancel keys; a new one cannot be cancelled",
                 kMaxCancelKeys);
    return false;
  }
  // A pid is one live backend: an entry already there is a session whose close has not yet
  // reached the proxy, and its Forget leaves this one alone.
  cancel_targets_[key.pid] = CancelTarget{key.secret, database, session};
  return true;
}

void DatabaseProxy::Forget(const BackendKey& key, uint64_t session) {
  auto it = cancel_targets_.find(key.pid);
  if (it != cancel_targets_.end() && it->second.session == session) cancel_targets_.erase(it);
}

bool DatabaseProxy::MayCancel(const BackendKey& key, const std::string& database) const {
  auto it = cancel_targets_.find(key.pid);
  return it != cancel_targets_.end() && it->second.secret == key.secret &&
         it->second.database == database;
}

void DatabaseProxy::Accept() {
  acceptor_.async_accept([this](auto ec, tcp::socket socket) {
    if (ec == asio::error::operation_aborted || !acceptor_.is_open()) return;
    if (ec) return accept_retry_.After(ec, [this] { Accept(); });
    // Re-armed first: a session that throws as it starts must not end the listening.
    Accept();
    boost::system::error_code peer_ec;
    auto peer = socket.remote_endpoint(peer_ec);
    std::string source = peer_ec ? "" : peer.address().to_string();
    if (peer.address().is_v6() && peer.address().to_v6().is_v4_mapped())
      source = asio::ip::make_address_v4(asio::ip::v4_mapped, peer.address().to_v6()).to_string();
    // Before anything else: no other address may cost the proxy a store read or a slot.
    if (sandbox_pool_ && !sandbox_pool_->SandboxSlot(source)) source.clear();
    auto slot = source.empty() ? std::nullopt : limiter_.Admit(source);
    if (slot) {
      std::make_shared<Session>(*this, std::move(socket), std::move(*slot), source)->Start();
    } else {
      boost::system::error_code ignored;
      socket.close(ignored);
    }
  });
}

}  // namespace adapt::net
