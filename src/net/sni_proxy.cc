#include "net/sni_proxy.h"

#include <linux/netfilter_ipv4.h>
#include <netinet/in.h>

#include <memory>

#include "base/background_work.h"
#include "base/log.h"
#include "base/time.h"
#include "net/client_hello.h"
#include "net/session_eviction.h"

namespace adapt::net {

namespace asio = boost::asio;
using asio::ip::tcp;

namespace {

// conntrack's record of where a redirected connection was going, as an Asio socket option
// (so the getsockopt stays inside Asio).
struct OriginalDestination {
  sockaddr_in addr{};
  template <class P>
  int level(const P&) const {
    return SOL_IP;
  }
  template <class P>
  int name(const P&) const {
    return SO_ORIGINAL_DST;
  }
  template <class P>
  void* data(const P&) {
    return &addr;
  }
  template <class P>
  size_t size(const P&) const {
    return sizeof addr;
  }
  template <class P>
  void resize(const P&, size_t) {}
};

}  // namespace

class SniProxy::Session : public std::enable_shared_from_this<SniProxy::Session> {
 public:
  Session(SniProxy& proxy, tcp::socket client, ConnectionLimiter::Slot slot)
      : proxy_(proxy),
        client_(std::move(client)),
        server_(client_.get_executor()),
        timer_(client_.get_executor()),
        slot_(std::move(slot)) {}

  void Start() {
    boost::system::error_code ec;
    auto peer = client_.remote_endpoint(ec);
    OriginalDestination od;
    if (!ec) client_.get_option(od, ec);
    if (ec || od.addr.sin_family != AF_INET) return Refuse("its original destination is unknown");
    source_ = peer.address().to_string();
    destination_ = {asio::ip::address_v4(ntohl(od.addr.sin_addr.s_addr)), ntohs(od.addr.sin_port)};
    proxy_.Track(source_, weak_from_this());
    // Until its ClientHello is read, a full listener may close this session for a new one
    // (on the session's executor, where a ClientHello read meanwhile keeps it).
    CloseOnEviction(
        slot_, weak_from_this(), [](Session& s) { return s.client_.get_executor(); },
        [](Session& s) {
          if (s.slot_.evicted()) s.Close();
        });
    slot_.MarkIdle();
    timer_.expires_after(kHelloTimeout);
    timer_.async_wait([self = shared_from_this()](auto ec) {
      if (!ec) self->Refuse("no ClientHello within 10 s");
    });
    ReadHello();
  }

  // Closes the session from any thread (its address is released).
  void CloseSoon() {
    asio::post(client_.get_executor(), Guarded("closing a released sandbox's TLS session",
                                               [self = shared_from_this()] { self->Close(); }));
  }

 private:
  void ReadHello() {
    size_t have = hello_.size();
    hello_.resize(kMaxClientHelloBytes);
    client_.async_read_some(asio::buffer(hello_.data() + have, hello_.size() - have),
                            [self = shared_from_this(), have](auto ec, size_t n) {
                              self->hello_.resize(have + n);
                              if (ec) return self->Close();
                              ClientHello hello;
                              switch (self->reader_.Parse(self->hello_, &hello)) {
                                case HelloStatus::kNeedMore:
                                  if (self->hello_.size() >= kMaxClientHelloBytes)
                                    return self->Refuse("a ClientHello larger than 32 KiB");
                                  return self->ReadHello();
                                case HelloStatus::kInvalid:
                                  return self->Refuse(hello.error);
                                case HelloStatus::kOk:
                                  return self->Decide(hello);
                              }
                            });
  }

  void Decide(const ClientHello& hello) {
    slot_.MarkBusy();
    if (hello.encrypted) return Refuse("an encrypted ClientHello (ECH) is not supported");
    std::string why =
        proxy_.table_.Check(source_, hello.server_name, destination_.address().to_string(),
                            destination_.port(), NowMillis());
    if (!why.empty()) return Refuse(why);
    // The proxy connects from the host: a name that resolves to one of the host's own
    // addresses would reach the host's services, which no sandbox may.
    if (proxy_.host_.Contains(destination_.address().to_string()))
      return Refuse(destination_.address().to_string() + " is an address of the host");
    sni_ = hello.server_name;
    timer_.expires_after(kConnectTimeout);
    timer_.async_wait([self = shared_from_this()](auto ec) {
      if (!ec) self->Refuse("the destination did not accept within 10 s");
    });
    auto sandbox = proxy_.table_.Find(source_);
    if (!sandbox) return Refuse("the sandbox has no hostname rules");
    if (!proxy_.owner_of_) return Connect();
    // A lookup that throws is logged; its session is refused at the connect deadline.
    asio::post(proxy_.lookups_, Guarded("looking up a TLS session's organization",
                                        [self = shared_from_this(), id = sandbox->sandbox_id] {
                                          self->LookUpOwner(id);
                                        }));
  }

  // On the lookup thread: the sandbox's organization, then Admit on the session's executor.
  void LookUpOwner(const std::string& sandbox_id) {
    std::optional<std::string> owner = proxy_.owner_of_(sandbox_id);
    asio::post(client_.get_executor(),
               Guarded("admitting a TLS session",
                       [self = shared_from_this(), owner] { self->Admit(owner); }));
  }

  // Takes a place among the organization's sessions (none for a sandbox without one yet: a
  // warm pool member, which runs nothing of a tenant's).
  void Admit(const std::optional<std::string>& owner) {
    if (closed_) return;
    if (!owner) return Refuse("its sandbox's organization could not be read");
    if (!owner->empty()) {
      owner_place_ = proxy_.owner_places_.TryTake(*owner);
      if (!owner_place_)
        return Refuse("its organization holds " + std::to_string(proxy_.owner_places_.per_org()) +
                      " connections through the proxy already");
    }
    Connect();
  }

  void Connect() {
    server_.async_connect(destination_, [self = shared_from_this()](auto ec) {
      if (ec) return self->Refuse("connecting to the destination: " + ec.message());
      self->timer_.cancel();
      asio::async_write(self->server_, asio::buffer(self->hello_), [self](auto ec, size_t) {
        if (ec) return self->Close();
        self->hello_.clear();
        self->hello_.shrink_to_fit();
        self->reader_ = ClientHelloReader();  // its copy of the hello, kept no longer
        self->last_active_ = std::chrono::steady_clock::now();
        self->WatchIdle();
        self->Pump(self->client_, self->server_, self->up_, 0);
        self->Pump(self->server_, self->client_, self->down_, 1);
      });
    });
  }

  // Closes the spliced connection once nothing has moved either way for the idle timeout.
  void WatchIdle() {
    timer_.expires_at(last_active_ + proxy_.idle_timeout_);
    timer_.async_wait([self = shared_from_this()](auto ec) {
      if (ec || self->closed_) return;
      if (std::chrono::steady_clock::now() - self->last_active_ >= self->proxy_.idle_timeout_)
        return self->Close();
      self->WatchIdle();
    });
  }

  // Copies `from` to `to` until EOF, then half-closes `to`; the session ends when both
  // directions have (or at the first error).
  void Pump(tcp::socket& from, tcp::socket& to, std::array<uint8_t, kPumpBuffer>& buf, int dir) {
    from.async_read_some(asio::buffer(buf),
                         [self = shared_from_this(), &from, &to, &buf, dir](auto ec, size_t n) {
                           self->last_active_ = std::chrono::steady_clock::now();
                           if (ec) {
                             if (ec != asio::error::eof) return self->Close();
                             boost::system::error_code ignored;
                             to.shutdown(tcp::socket::shutdown_send, ignored);
                             if (++self->finished_ == 2) self->Close();
                             return;
                           }
                           asio::async_write(to, asio::buffer(buf.data(), n),
                                             [self, &from, &to, &buf, dir](auto ec, size_t) {
                                               if (ec) return self->Close();
                                               self->Pump(from, to, buf, dir);
                                             });
                         });
  }

  void Refuse(const std::string& why) {
    if (closed_) return;
    spdlog::info("TLS hostname proxy: refused {} -> {}:{}: {}", source_,
                 destination_.address().to_string(), destination_.port(), why);
    Close();
  }

  void Close() {
    if (closed_) return;
    closed_ = true;
    boost::system::error_code ignored;
    timer_.cancel();
    client_.close(ignored);
    server_.close(ignored);
  }

  SniProxy& proxy_;
  tcp::socket client_;
  tcp::socket server_;
  asio::steady_timer timer_;
  std::string source_, sni_;
  tcp::endpoint destination_;
  std::vector<uint8_t> hello_;
  ClientHelloReader reader_;
  std::array<uint8_t, kPumpBuffer> up_{}, down_{};
  ConnectionLimiter::Slot slot_;
  std::shared_ptr<void> owner_place_;  // among its organization's sessions, once spliced
  std::chrono::steady_clock::time_point last_active_;
  int finished_ = 0;
  bool closed_ = false;
};

SniProxy::SniProxy(asio::io_context& io, HostnameTable& table, const HostAddressWatch& host,
                   SniProxyLimits limits)
    : table_(table),
      host_(host),
      idle_timeout_(limits.idle_timeout),
      acceptor_(io),
      accept_retry_(io.get_executor(), "TLS hostname proxy"),
      limiter_("TLS hostname proxy", limits.connections),
      owner_places_(static_cast<size_t>(PerOrganizationLimit(limits.connections))) {}

SniProxy::~SniProxy() {
  // A lookup under way ends (what it posts to the stopped I/O thread never runs); those not
  // begun are dropped.
  lookups_.stop();
  lookups_.join();
}

Status SniProxy::Start(uint16_t port) {
  boost::system::error_code ec;
  acceptor_.open(tcp::v4(), ec);
  if (!ec) acceptor_.set_option(tcp::acceptor::reuse_address(true), ec);
  if (!ec) acceptor_.bind({asio::ip::address_v4::any(), port}, ec);
  if (!ec) acceptor_.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) return Internal("listening for the TLS hostname proxy: " + ec.message());
  port_ = acceptor_.local_endpoint().port();
  Accept();
  return Status::Ok();
}

void SniProxy::Stop() {
  boost::system::error_code ec;
  acceptor_.close(ec);
}

void SniProxy::Track(const std::string& source, std::weak_ptr<Session> session) {
  std::lock_guard lock(mu_);
  auto& list = by_source_[source];
  std::erase_if(list, [](const auto& w) { return w.expired(); });
  list.push_back(std::move(session));
}

void SniProxy::CloseFrom(const std::string& address) {
  std::vector<std::shared_ptr<Session>> doomed;
  {
    std::lock_guard lock(mu_);
    auto it = by_source_.find(address);
    if (it == by_source_.end()) return;
    for (auto& w : it->second)
      if (auto s = w.lock()) doomed.push_back(std::move(s));
    by_source_.erase(it);
  }
  for (auto& s : doomed) s->CloseSoon();
}

void SniProxy::Accept() {
  acceptor_.async_accept([this](auto ec, tcp::socket socket) {
    if (ec == asio::error::operation_aborted || !acceptor_.is_open()) return;
    if (ec) return accept_retry_.After(ec, [this] { Accept(); });
    // Re-armed first: a session that throws as it starts must not end the listening.
    Accept();
    // Per sandbox: by the source address, which the firewall ties to its interface.
    boost::system::error_code peer_ec;
    auto peer = socket.remote_endpoint(peer_ec);
    auto slot = peer_ec ? std::nullopt : limiter_.Admit(peer.address().to_string());
    if (slot) {
      std::make_shared<Session>(*this, std::move(socket), std::move(*slot))->Start();
    } else {
      boost::system::error_code ignored;
      socket.close(ignored);
    }
  });
}

}  // namespace adapt::net
