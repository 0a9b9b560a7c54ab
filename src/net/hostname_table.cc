#include "net/hostname_table.h"

#include <algorithm>

namespace adapt::net {

void HostnameTable::SetSandboxPool(AddressPool pool) {
  std::lock_guard lock(mu_);
  pool_ = std::move(pool);
}

bool HostnameTable::InSandboxPool(const std::string& address) const {
  std::lock_guard lock(mu_);
  return pool_ && pool_->Overlaps(address);
}

void HostnameTable::Put(ProxiedSandbox sandbox) {
  std::lock_guard lock(mu_);
  Entry& e = by_address_[sandbox.address];
  if (e.sandbox.sandbox_id != sandbox.sandbox_id) e.answers.clear();  // a reused address
  e.sandbox = std::move(sandbox);
}

void HostnameTable::Remove(const std::string& address) {
  std::lock_guard lock(mu_);
  by_address_.erase(address);
}

std::optional<ProxiedSandbox> HostnameTable::Find(const std::string& address) const {
  std::lock_guard lock(mu_);
  auto it = by_address_.find(address);
  if (it == by_address_.end()) return std::nullopt;
  return it->second.sandbox;
}

bool HostnameTable::Lists(const std::string& address, const std::string& name) const {
  std::lock_guard lock(mu_);
  auto it = by_address_.find(address);
  if (it == by_address_.end()) return false;
  const auto& rules = it->second.sandbox.rules;
  return std::any_of(rules.begin(), rules.end(), [&](const auto& r) { return r.hostname == name; });
}

void HostnameTable::Record(const std::string& address, const std::string& name,
                           const std::vector<DnsAddress>& answers, int64_t now_ms) {
  std::lock_guard lock(mu_);
  auto it = by_address_.find(address);
  if (it == by_address_.end()) return;
  auto& ips = it->second.answers[name];
  for (auto i = ips.begin(); i != ips.end();) i = i->second <= now_ms ? ips.erase(i) : std::next(i);
  for (const auto& a : answers) {
    int64_t until = now_ms + std::max<int64_t>(int64_t{a.ttl} * 1000, kMinAnswerMillis);
    ips[a.ip.text] = std::max(ips[a.ip.text], until);
  }
  while (ips.size() > kMaxAddressesPerName) {
    auto oldest = std::min_element(
        ips.begin(), ips.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
    ips.erase(oldest);
  }
}

std::string HostnameTable::Check(const std::string& source, const std::string& sni,
                                 const std::string& destination, int port, int64_t now_ms) const {
  std::lock_guard lock(mu_);
  auto it = by_address_.find(source);
  if (it == by_address_.end()) return "the source is no sandbox with hostname rules";
  if (sni.empty()) return "the ClientHello names no server (SNI)";
  const auto& rules = it->second.sandbox.rules;
  bool listed = std::any_of(rules.begin(), rules.end(),
                            [&](const auto& r) { return r.hostname == sni && r.port == port; });
  if (!listed)
    return "'" + sni + "' on port " + std::to_string(port) + " is not in network.hostnames";
  auto ips = it->second.answers.find(sni);
  if (ips == it->second.answers.end())
    return "the sandbox's DNS proxy never resolved '" + sni + "'";
  auto ip = ips->second.find(destination);
  if (ip == ips->second.end() || ip->second <= now_ms)
    return destination + " is not an address the sandbox's DNS proxy returned for '" + sni + "'";
  auto parsed = ParseIp(destination);
  if (!parsed || IsBlockedDestination(*parsed))
    return destination + " is a private or reserved address";
  if (pool_ && pool_->Overlaps(parsed->text)) return destination + " is a sandbox's address";
  return "";
}

}  // namespace adapt::net
