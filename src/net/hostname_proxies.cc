#include "net/hostname_proxies.h"

// clang-format off
#include <utility>  // before Asio: its awaitable.hpp uses std::exchange
#include <boost/asio.hpp>
// clang-format on
#include <optional>
#include <thread>

#include "base/background_work.h"
#include "net/dns_proxy.h"

namespace adapt::net {

namespace asio = boost::asio;

struct HostnameProxies::Impl {
  explicit Impl(SniProxyLimits limits) : sni(io, table, host, limits) {}
  asio::io_context io;
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work{
      asio::make_work_guard(io)};
  HostnameTable table;
  HostAddressWatch host{io};
  DnsProxy dns{io, table, host};
  SniProxy sni;
  std::thread thread;
  bool started = false;
};

HostnameProxies::HostnameProxies(SniProxyLimits limits) : impl_(std::make_unique<Impl>(limits)) {}

HostnameProxies::~HostnameProxies() { Stop(); }

Status HostnameProxies::Start() {
  RETURN_IF_ERROR(impl_->host.Start());
  RETURN_IF_ERROR(impl_->dns.Start());
  RETURN_IF_ERROR(impl_->sni.Start());
  impl_->thread = std::thread(GuardedRun("hostname proxies' I/O", impl_->io));
  impl_->started = true;
  return Status::Ok();
}

void HostnameProxies::Stop() {
  if (!impl_->started) return;
  impl_->started = false;
  asio::post(impl_->io, Guarded("stopping the hostname proxies", [this] {
               impl_->dns.Stop();
               impl_->sni.Stop();
               impl_->host.Stop();
             }));
  impl_->work.reset();
  impl_->io.stop();
  impl_->thread.join();
}

uint16_t HostnameProxies::dns_port() const { return impl_->dns.port(); }
uint16_t HostnameProxies::sni_port() const { return impl_->sni.port(); }
HostnameTable& HostnameProxies::table() { return impl_->table; }

void HostnameProxies::set_owner_of(SniProxy::OwnerOf owner_of) {
  impl_->sni.set_owner_of(std::move(owner_of));
}

void HostnameProxies::Forget(const std::string& address) {
  impl_->table.Remove(address);
  impl_->sni.CloseFrom(address);
}

}  // namespace adapt::net
