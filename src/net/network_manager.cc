#include "net/network_manager.h"

#include "base/ignore_error.h"
#include "base/log.h"
#include "base/time.h"
#include "net/conntrack.h"
#include "net/links.h"
#include "net/nftables.h"
#include "net/ruleset.h"
#include "os/files.h"
#include "os/process.h"

namespace adapt::net {
namespace {

SandboxNet FromRecord(const store::NetworkRecord& r) {
  SandboxNet sb;
  sb.sandbox_id = r.sandbox_id;
  sb.slot = r.slot;
  sb.address = r.address;
  sb.host_address = r.host_address;
  sb.address6 = r.address6;
  sb.host_address6 = r.host_address6;
  const store::NetworkPolicyRecord& from = r.policy;
  EgressPolicy& p = sb.policy;
  p.egress = from.egress;
  p.dns = from.dns;
  for (const auto& a : from.allow) p.allow.push_back({a.protocol, a.address, a.port});
  for (const auto& h : from.hostnames) p.hostnames.push_back({h.hostname, h.port});
  p.dns_upstream = from.dns_upstream;
  p.dns_all_names = from.dns_all_names;
  return sb;
}

store::NetworkPolicyRecord PolicyRecord(const EgressPolicy& p) {
  store::NetworkPolicyRecord out;
  out.egress = p.egress;
  out.dns = p.dns;
  for (const auto& a : p.allow) out.allow.push_back({a.protocol, a.address, a.port});
  for (const auto& h : p.hostnames) out.hostnames.push_back({h.hostname, h.port});
  out.dns_upstream = p.dns_upstream;
  out.dns_all_names = p.dns_all_names;
  return out;
}

store::NetworkRecord ToRecord(const SandboxNet& sb, int64_t created_at) {
  store::NetworkRecord r;
  r.sandbox_id = sb.sandbox_id;
  r.slot = sb.slot;
  r.address = sb.address;
  r.host_address = sb.host_address;
  r.address6 = sb.address6;
  r.host_address6 = sb.host_address6;
  r.policy = PolicyRecord(sb.policy);
  r.created_at = created_at;
  return r;
}

std::string ResolvConf(const SandboxNet& sb) {
  // Hostname rules: the DNS proxy, on the sandbox's gateway.
  if (!sb.policy.hostnames.empty())
    return "# adapt's DNS proxy (network.hostnames)\nnameserver " + sb.host_address +
           "\noptions ndots:0\n";
  if (sb.policy.dns.empty()) return "# DNS is disabled for this sandbox (network.dns)\n";
  return "nameserver " + sb.policy.dns + "\noptions ndots:0\n";
}

}  // namespace

NetworkManager::NetworkManager(store::NetworkStore& store, NetworkOptions options)
    : store_(store), options_(std::move(options)), proxies_(options_.proxy_limits) {}

Status NetworkManager::Init() {
  ASSIGN_OR_RETURN(AddressPool pool, AddressPool::Parse(options_.pool));
  pool_ = pool;
  proxies_.table().SetSandboxPool(pool);
  auto dns = ParseIp(options_.dns);
  if (!options_.dns.empty() && !dns)
    return InvalidArgument(
        "dns", "the default resolver '" + options_.dns + "' must be an IPv4 or IPv6 address");
  // The pool must be adapt's alone: a host route into it means a network the sandboxes
  // would shadow (or reach). adapt's own /30 routes (ad<hex> devices) are fine.
  ASSIGN_OR_RETURN(auto routes, HostRoutes());
  for (const auto& [dest, dev] : routes) {
    bool ours = dev.size() == 10 && dev.rfind("ad", 0) == 0 && pool_->Overlaps(dest);
    if (!ours && pool_->Overlaps(dest))
      return InvalidArgument("networkPool", "the network pool " + pool_->cidr() +
                                                " overlaps the host's route to " + dest +
                                                (dev.empty() ? "" : " (dev " + dev + ")") +
                                                "; choose another --network-pool");
  }
  RETURN_IF_ERROR(os::MakeDirs(options_.state_dir + "/net", 0700));
  if (!options_.pool6.empty()) {
    ASSIGN_OR_RETURN(AddressPool6 pool6, AddressPool6::Parse(options_.pool6, *pool_));
    pool6_ = pool6;
  }
  RETURN_IF_ERROR(EnableForwarding(pool6_.has_value())
                      .WithContext("enabling IP forwarding for sandbox networks"));
  return proxies_.Start().WithContext("starting the TLS hostname proxies");
}

void NetworkManager::Register(const SandboxNet& sb) {
  if (sb.policy.hostnames.empty()) {
    proxies_.Forget(sb.address);
    return;
  }
  proxies_.table().Put({sb.sandbox_id, sb.address, sb.policy.hostnames, sb.policy.dns_upstream,
                        sb.policy.dns_all_names});
}

std::string NetworkManager::ResolvConfPath(const std::string& id) const {
  return options_.state_dir + "/net/" + id + "/resolv.conf";
}

Result<Attachment> NetworkManager::Attach(const std::string& id,
                                          const store::NetworkConfig& network) {
  std::lock_guard lock(mu_);
  if (!pool_) return Internal("the network manager was not initialised");
  ASSIGN_OR_RETURN(EgressPolicy policy, PolicyFor(network, options_.dns));
  ASSIGN_OR_RETURN(auto records, store_.ListNetworks());
  SandboxNet sb;
  bool recorded = false;
  std::set<int64_t> used;
  for (const auto& r : records) {
    used.insert(r.slot);
    if (r.sandbox_id == id) {
      sb = FromRecord(r);
      recorded = true;
    }
  }
  if (!recorded) {
    int64_t slot = 0;
    while (used.count(slot)) ++slot;
    if (slot >= pool_->slots())
      return Status(Code::kUnavailable, "the sandbox network pool " + pool_->cidr() + " is full");
    sb.sandbox_id = id;
    sb.slot = slot;
    sb.address = pool_->SandboxAddress(slot);
    sb.host_address = pool_->HostAddress(slot);
    if (pool6_) {
      sb.address6 = pool6_->Embed(sb.address);
      sb.host_address6 = pool6_->Embed(sb.host_address);
    }
    sb.policy = policy;
    RETURN_IF_ERROR(store_.PutNetwork(ToRecord(sb, NowMillis())));
  }
  LinkPlan plan{NetnsName(options_.name, id),
                HostInterface(sb.address),
                sb.host_address,
                sb.address,
                sb.host_address6,
                sb.address6};
  Status st = os::MakeDirs(options_.state_dir + "/net/" + id, 0700);
  if (st.ok()) st = os::WriteFileAtomic(ResolvConfPath(id), ResolvConf(sb), 0644);
  Result<bool> made = st.ok() ? CreateLinks(plan) : Result<bool>(st);
  st = made.status();
  // Attach runs before runsc starts in the namespace (a new sandbox, or a start after a stop):
  // links that were there may have lost their addresses to the runsc that used them.
  if (st.ok() && !*made) st = ReaddressSandboxSide(plan);
  if (st.ok()) {
    // A re-attach replaces the chain rather than adding its rules twice. A sandbox without
    // a record never had one (the record goes after its chain), so its attach asks nothing.
    if (recorded && ListNft("chain inet " + options_.name + " " + id).ok())
      IgnoreError(RunNft(RemoveSandboxRules(Scope(), sb)), "adding the rules below reports errors");
    st = RunNft(SandboxRules(Scope(), sb));
  }
  if (st.ok()) Register(sb);
  if (!st.ok()) {
    // Undoing a failed set-up, whose error is the one reported; the reconciler removes what
    // is left, but a record that stays would hold the address.
    IgnoreError(RemoveLinks(plan.netns, plan.host_if), "undoing a failed network set-up");
    IgnoreError(os::RemoveTree(options_.state_dir + "/net/" + id), "undoing a failed set-up");
    if (Status del = store_.DeleteNetwork(id); !del.ok())
      spdlog::warn("sandbox {}: the network record stays after a failed set-up: {}", id,
                   del.message());
    return st.WithContext("setting up the sandbox's network");
  }
  return Attachment{NetnsPath(plan.netns), ResolvConfPath(id), sb.address, sb.address6};
}

Status NetworkManager::RemoveRecorded(const store::NetworkRecord& r) {
  SandboxNet sb = FromRecord(r);
  proxies_.Forget(sb.address);
  // The chain may already be gone (a rebuilt table); that is not an error.
  if (ListNft("chain inet " + options_.name + " " + sb.sandbox_id).ok())
    RETURN_IF_ERROR(RunNft(RemoveSandboxRules(Scope(), sb)));
  RETURN_IF_ERROR(RemoveLinks(NetnsName(options_.name, r.sandbox_id), HostInterface(sb.address)));
  // Before the record goes (the address is free from then on): a failure here is retried
  // with the removal, and the address is not handed out meanwhile.
  RETURN_IF_ERROR(ForgetConnections(sb.address, sb.address6));
  RETURN_IF_ERROR(os::RemoveTree(options_.state_dir + "/net/" + r.sandbox_id));
  return store_.DeleteNetwork(r.sandbox_id);
}

Status NetworkManager::Detach(const std::string& id) {
  std::lock_guard lock(mu_);
  ASSIGN_OR_RETURN(auto records, store_.ListNetworks());
  for (const auto& r : records)
    if (r.sandbox_id == id) return RemoveRecorded(r).WithContext("removing the sandbox's network");
  // Nothing recorded: only leftovers of a set-up that never got recorded could remain.
  IgnoreError(RemoveLinks(NetnsName(options_.name, id), ""), "leftovers only, if any");
  return Status::Ok();
}

Status NetworkManager::Restore(const std::set<std::string>& live) {
  std::lock_guard lock(mu_);
  if (!pool_) return Internal("the network manager was not initialised");
  ASSIGN_OR_RETURN(auto records, store_.ListNetworks());
  std::vector<SandboxNet> keep;
  std::set<std::string> kept_ifs, kept_ns;
  for (const auto& r : records) {
    if (!live.count(r.sandbox_id)) continue;
    SandboxNet sb = FromRecord(r);
    Status st = CreateLinks({NetnsName(options_.name, sb.sandbox_id), HostInterface(sb.address),
                             sb.host_address, sb.address, sb.host_address6, sb.address6})
                    .status();
    if (!st.ok())
      spdlog::warn("sandbox {}: re-making its network: {}", sb.sandbox_id, st.message());
    kept_ifs.insert(HostInterface(sb.address));
    kept_ns.insert(NetnsName(options_.name, sb.sandbox_id));
    keep.push_back(sb);
    Register(sb);
  }
  // One transaction: the old table (whatever a crash left) is replaced by the recorded one.
  RETURN_IF_ERROR(RunNft(FullRuleset(Scope(), keep)).WithContext("loading adapt's rules"));
  for (const auto& r : records) {
    if (live.count(r.sandbox_id)) continue;
    spdlog::info("sandbox {}: removing its network", r.sandbox_id);
    Status st = RemoveRecorded(r);
    if (!st.ok()) spdlog::warn("sandbox {}: removing its network: {}", r.sandbox_id, st.message());
  }
  // Leftovers of set-ups a crash interrupted: this adaptd's namespaces and the host ends
  // of veths whose address is in this pool.
  const std::string prefix = options_.name + "-sbx_";
  for (const auto& ns : os::ListDir("/run/netns")) {
    if (ns.rfind(prefix, 0) == 0 && !kept_ns.count(ns))
      IgnoreError(RemoveLinks(ns, ""), "a leftover; the next reconciliation tries again");
  }
  std::set<std::string> ours;
  for (int64_t slot = 0; slot < pool_->slots(); ++slot)
    ours.insert(HostInterface(pool_->SandboxAddress(slot)));
  for (const auto& link : os::ListDir("/sys/class/net")) {
    if (ours.count(link) && !kept_ifs.count(link))
      IgnoreError(RemoveLinks("", link), "a leftover; the next reconciliation tries again");
  }
  return Status::Ok();
}

std::optional<std::string> NetworkManager::AddressOf(const std::string& id) {
  auto records = store_.ListNetworks();
  if (!records.ok()) return std::nullopt;
  for (const auto& r : *records)
    if (r.sandbox_id == id) return r.address;
  return std::nullopt;
}

Status NetworkManager::UpdatePolicy(const std::string& id, const store::NetworkConfig& network) {
  std::lock_guard lock(mu_);
  if (!pool_) return Internal("the network manager was not initialised");
  ASSIGN_OR_RETURN(EgressPolicy policy, PolicyFor(network, options_.dns));
  ASSIGN_OR_RETURN(auto records, store_.ListNetworks());
  for (const auto& r : records) {
    if (r.sandbox_id != id) continue;
    SandboxNet old = FromRecord(r), sb = old;
    sb.policy = policy;
    // The same policy (a pooled sandbox claimed with the default one) needs no nft run.
    store::NetworkPolicyRecord stored = PolicyRecord(policy);
    if (stored == r.policy) return Status::Ok();
    RETURN_IF_ERROR(store_.UpdateNetworkPolicy(id, stored));
    // One nft run: the old chain goes and the new one comes in a single transaction.
    RETURN_IF_ERROR(RunNft(RemoveSandboxRules(Scope(), old) + SandboxRules(Scope(), sb))
                        .WithContext("replacing the sandbox's egress rules"));
    Register(sb);
    return Status::Ok();
  }
  return NotFound("sandbox " + id + " has no network");
}

}  // namespace adapt::net
