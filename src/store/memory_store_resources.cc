// MemoryStore: networks, endpoints, OAuth, images, volumes, warm pool members, secrets and
// operations (objects, storage tokens and sites: memory_store_objects.cc).
#include <algorithm>
#include <map>
#include <set>
#include <vector>

#include "store/memory_store.h"
#include "store/memory_store_find.h"
#include "store/sandbox_limit_check.h"

namespace adapt::store {

Status MemoryStore::PutNetwork(const NetworkRecord& n) {
  std::lock_guard lock(mu_);
  if (auto fault = WriteFaultLocked()) return *fault;
  for (const auto& [id, other] : networks_)
    if (id == n.sandbox_id || other.slot == n.slot)
      return Conflict("network slot " + std::to_string(n.slot) + " or sandbox " + n.sandbox_id +
                      " is taken");
  networks_[n.sandbox_id] = n;
  return Status::Ok();
}

Result<std::vector<NetworkRecord>> MemoryStore::ListNetworks() {
  std::lock_guard lock(mu_);
  std::vector<NetworkRecord> out;
  for (const auto& [_, n] : networks_) out.push_back(n);
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.slot < b.slot; });
  return out;
}

Result<NetworkRecord> MemoryStore::GetNetworkBySlot(int64_t slot) {
  std::lock_guard lock(mu_);
  for (const auto& [_, n] : networks_)
    if (n.slot == slot) return n;
  return NotFound("network slot " + std::to_string(slot) + " is free");
}

Status MemoryStore::DeleteNetwork(const std::string& sandbox_id) {
  std::lock_guard lock(mu_);
  if (auto fault = WriteFaultLocked()) return *fault;
  networks_.erase(sandbox_id);
  return Status::Ok();
}

Status MemoryStore::UpdateNetworkPolicy(const std::string& sandbox_id,
                                        const NetworkPolicyRecord& policy) {
  std::lock_guard lock(mu_);
  if (auto fault = WriteFaultLocked()) return *fault;
  auto it = networks_.find(sandbox_id);
  if (it == networks_.end()) return NotFound("sandbox " + sandbox_id + " has no network");
  it->second.policy = policy;
  return Status::Ok();
}

Status MemoryStore::PutEndpoint(const EndpointRecord& e, std::optional<int64_t> max_endpoints) {
  std::lock_guard lock(mu_);
  if (auto fault = WriteFaultLocked()) return *fault;
  std::string status;
  for (const auto& s : sandboxes_)
    if (s.id == e.sandbox_id && s.org_id == e.org_id) status = s.status;
  RETURN_IF_ERROR(CheckEndpointTarget(e.sandbox_id, status));
  if (max_endpoints)
    RETURN_IF_ERROR(CheckEndpointLimit(
        *max_endpoints,
        std::count_if(endpoints_.begin(), endpoints_.end(),
                      [&](const EndpointRecord& o) { return o.org_id == e.org_id; })));
  for (const auto& other : endpoints_)
    if (other.id == e.id || other.hostname == e.hostname)
      return Internal("saving endpoint: " + e.hostname + " is taken");
  endpoints_.push_back(e);
  endpoints_.back().seq = next_seq_++;
  return Status::Ok();
}

Result<std::vector<EndpointRecord>> MemoryStore::ListEndpoints(const std::string& org_id,
                                                               const std::string& sandbox_id) {
  std::lock_guard lock(mu_);
  std::vector<EndpointRecord> out;
  for (const auto& e : endpoints_)
    if (e.org_id == org_id && (sandbox_id.empty() || e.sandbox_id == sandbox_id)) out.push_back(e);
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.seq < b.seq; });
  return out;
}

Result<EndpointRecord> MemoryStore::FindEndpointByHostname(const std::string& hostname) {
  std::lock_guard lock(mu_);
  for (const auto& e : endpoints_)
    if (e.hostname == hostname) return e;
  return NotFound("no endpoint named " + hostname);
}

Status MemoryStore::DeleteEndpoint(const std::string& org_id, const std::string& id) {
  std::lock_guard lock(mu_);
  if (auto fault = WriteFaultLocked()) return *fault;
  if (std::erase_if(endpoints_, [&](const auto& e) { return e.id == id && e.org_id == org_id; }) ==
      0)
    return NotFound("endpoint " + id + " not found");
  return Status::Ok();
}

Result<std::vector<std::string>> MemoryStore::DeleteEndpointsOfSandbox(
    const std::string& sandbox_id) {
  std::lock_guard lock(mu_);
  if (auto fault = WriteFaultLocked()) return *fault;
  std::vector<std::string> hosts;
  for (const auto& e : endpoints_)
    if (e.sandbox_id == sandbox_id) hosts.push_back(e.hostname);
  std::erase_if(endpoints_, [&](const auto& e) { return e.sandbox_id == sandbox_id; });
  return hosts;
}

Status MemoryStore::CreateOAuthClient(const OAuthClientRecord& c) {
  std::lock_guard lock(mu_);
  if (auto fault = WriteFaultLocked()) return *fault;
  if (FindIf(oauth_clients_, [&](const auto& o) { return o.id == c.id; }))
    return Internal("registering OAuth client: id " + c.id + " is taken");
  oauth_clients_.push_back(c);
  return Status::Ok();
}

Result<OAuthClientRecord> MemoryStore::GetOAuthClient(const std::string& id) {
  std::lock_guard lock(mu_);
  if (auto* c = FindIf(oauth_clients_, [&](const auto& o) { return o.id == id; })) return *c;
  return NotFound("unknown OAuth client " + id);
}

Result<int64_t> MemoryStore::PruneOAuthClients(int64_t registered_before, int64_t now) {
  std::lock_guard lock(mu_);
  if (auto fault = WriteFaultLocked()) return *fault;
  std::erase_if(oauth_grants_, [&](const auto& kv) { return kv.second.expires_at <= now; });
  std::erase_if(oauth_clients_, [&](const OAuthClientRecord& c) {
    return c.created_at < registered_before &&
           std::none_of(oauth_grants_.begin(), oauth_grants_.end(),
                        [&](const auto& kv) { return kv.second.client_id == c.id; });
  });
  return static_cast<int64_t>(oauth_clients_.size());
}

Status MemoryStore::PutOAuthGrant(const OAuthGrantRecord& g, size_t max_clients_of_org) {
  std::lock_guard lock(mu_);
  if (auto fault = WriteFaultLocked()) return *fault;
  // Expired grants are useless: dropped while here, as SQLite does.
  std::erase_if(oauth_grants_, [&](const auto& kv) { return kv.second.expires_at < g.created_at; });
  if (!FindIf(oauth_clients_, [&](const auto& c) { return c.id == g.client_id; }))
    return Internal("storing OAuth grant: client " + g.client_id + " does not exist");
  if (!oauth_grants_.emplace(g.hash, g).second)
    return Internal("storing OAuth grant: the hash is taken");
  if (max_clients_of_org == 0) return Status::Ok();
  std::map<std::string, int64_t> latest;  // the organization's other clients: newest grant
  for (const auto& [_, o] : oauth_grants_)
    if (o.org_id == g.org_id && o.client_id != g.client_id)
      latest[o.client_id] = std::max(latest[o.client_id], o.created_at);
  std::vector<std::pair<int64_t, std::string>> order;
  for (const auto& [client, at] : latest) order.push_back({-at, client});
  std::sort(order.begin(), order.end());  // newest first, then by id, as SQLite orders them
  std::set<std::string> dropped;
  for (size_t i = max_clients_of_org - 1; i < order.size(); ++i) dropped.insert(order[i].second);
  std::erase_if(oauth_grants_, [&](const auto& kv) {
    return kv.second.org_id == g.org_id && dropped.count(kv.second.client_id);
  });
  return Status::Ok();
}

Result<OAuthGrantRecord> MemoryStore::FindOAuthGrant(const std::string& hash,
                                                     const std::string& kind, int64_t now) {
  std::lock_guard lock(mu_);
  auto it = oauth_grants_.find(hash);
  if (it == oauth_grants_.end() || it->second.kind != kind || it->second.expires_at <= now)
    return NotFound("unknown or expired OAuth " + kind);
  return it->second;
}

Result<OAuthGrantRecord> MemoryStore::TakeOAuthGrant(const std::string& hash,
                                                     const std::string& kind, int64_t now) {
  std::lock_guard lock(mu_);
  if (auto fault = WriteFaultLocked()) return *fault;
  auto it = oauth_grants_.find(hash);
  if (it == oauth_grants_.end() || it->second.kind != kind || it->second.expires_at <= now)
    return NotFound("unknown or expired OAuth " + kind);
  OAuthGrantRecord g = it->second;
  oauth_grants_.erase(it);
  return g;
}

Status MemoryStore::PutImage(const ImageRecord& r) {
  std::lock_guard lock(mu_);
  if (auto fault = WriteFaultLocked()) return *fault;
  if (auto* stored = FindIf(images_, [&](const auto& i) { return i.id == r.id; })) {
    // As SQLite's upsert: the id, organization, reference and creation time stay.
    ImageRecord next = r;
    next.org_id = stored->org_id;
    next.reference = stored->reference;
    next.created_at = stored->created_at;
    next.seq = stored->seq;
    *stored = std::move(next);
  } else {
    images_.push_back(r);
    images_.back().seq = next_seq_++;
  }
  return Status::Ok();
}

Status MemoryStore::InsertImageWithinCaps(const ImageRecord& r, int max_images,
                                          int max_in_progress) {
  std::lock_guard lock(mu_);
  if (auto fault = WriteFaultLocked()) return *fault;
  int images = 0, in_progress = 0;
  for (const auto& i : images_) {
    if (i.org_id != r.org_id) continue;
    ++images;
    if (i.status == "pulling" || i.status == "importing") ++in_progress;
  }
  if (max_images > 0 && images >= max_images)
    return Status(Code::kResourceExhausted, "the organization already has " +
                                                std::to_string(max_images) +
                                                " images, the most it may have; delete one first");
  const bool starts_work = r.status == "pulling" || r.status == "importing";
  if (starts_work && max_in_progress > 0 && in_progress >= max_in_progress)
    return Status(Code::kResourceExhausted,
                  std::to_string(max_in_progress) +
                      " image pulls or imports of the organization are already in progress, "
                      "the most it may have; retry when one has ended");
  if (FindIf(images_, [&](const auto& i) { return i.id == r.id; }))
    return Internal("saving image: id " + r.id + " is taken");
  images_.push_back(r);
  images_.back().seq = next_seq_++;
  return Status::Ok();
}

Result<ImageRecord> MemoryStore::GetImage(const std::string& org_id, const std::string& id) {
  std::lock_guard lock(mu_);
  if (auto* i = FindIf(images_, [&](const auto& i) { return i.id == id && i.org_id == org_id; }))
    return *i;
  return NotFound("image " + id + " not found");
}

Result<std::vector<ImageRecord>> MemoryStore::ListImages(const std::string& org_id) {
  std::lock_guard lock(mu_);
  std::vector<ImageRecord> out;
  for (const auto& i : images_)
    if (org_id.empty() || i.org_id == org_id) out.push_back(i);
  return out;
}

Status MemoryStore::DeleteImage(const std::string& org_id, const std::string& id) {
  std::lock_guard lock(mu_);
  if (auto fault = WriteFaultLocked()) return *fault;
  if (std::erase_if(images_, [&](const auto& i) { return i.id == id && i.org_id == org_id; }) == 0)
    return NotFound("image " + id + " not found");
  return Status::Ok();
}

Status MemoryStore::PutVolume(const VolumeRecord& v, std::optional<int64_t> max_gib) {
  std::lock_guard lock(mu_);
  if (auto fault = WriteFaultLocked()) return *fault;
  if (FindIf(volumes_, [&](const auto& o) {
        return o.org_id == v.org_id && o.name == v.name && o.id != v.id;
      }))
    return Conflict("storage '" + v.name + "' already exists");
  if (auto* stored = FindIf(volumes_, [&](const auto& o) { return o.id == v.id; })) {
    stored->status = v.status;
    stored->key_identifier = v.key_identifier;
  } else {
    RETURN_IF_ERROR(RefuseIfOrgDeletingLocked(v.org_id));
    if (max_gib) {
      int64_t used = 0;
      for (const auto& o : volumes_)
        if (o.org_id == v.org_id) used += o.size_mib;
      RETURN_IF_ERROR(CheckStorageLimit(*max_gib, used, v.size_mib));
    }
    volumes_.push_back(v);
    volumes_.back().seq = next_seq_++;
  }
  return Status::Ok();
}

Result<VolumeRecord> MemoryStore::GetVolumeByName(const std::string& org_id,
                                                  const std::string& name) {
  std::lock_guard lock(mu_);
  if (auto* v =
          FindIf(volumes_, [&](const auto& v) { return v.org_id == org_id && v.name == name; }))
    return *v;
  return NotFound("storage '" + name + "' not found");
}

Result<std::vector<VolumeRecord>> MemoryStore::ListVolumes(const std::string& org_id) {
  std::lock_guard lock(mu_);
  std::vector<VolumeRecord> out;
  for (const auto& v : volumes_)
    if (org_id.empty() || v.org_id == org_id) out.push_back(v);
  return out;
}

std::vector<SandboxRecord> MemoryStore::AttachmentsLocked(const std::string& org_id,
                                                          const std::string& name) {
  std::vector<SandboxRecord> out;
  for (const auto& s : sandboxes_) {
    if (s.org_id != org_id || s.status == "completed" || s.status == "failed" ||
        s.status == "deleted")
      continue;
    if (s.config.storage != name) continue;
    // The fields SQLite's attachment query reads.
    SandboxRecord r;
    r.id = s.id;
    r.org_id = org_id;
    r.status = s.status;
    r.created_at = s.created_at;
    out.push_back(std::move(r));
  }
  return out;
}

Result<std::vector<SandboxRecord>> MemoryStore::ListVolumeAttachments(const std::string& org_id,
                                                                      const std::string& name) {
  std::lock_guard lock(mu_);
  return AttachmentsLocked(org_id, name);
}

Status MemoryStore::BeginDeleteVolume(const std::string& org_id, const std::string& id) {
  std::lock_guard lock(mu_);
  if (auto fault = WriteFaultLocked()) return *fault;
  auto* v = FindIf(volumes_, [&](const auto& v) { return v.id == id && v.org_id == org_id; });
  if (!v) return NotFound("storage " + id + " not found");
  if (v->status == "deleting") return Status::Ok();
  if (v->status != "ready") return Conflict("storage '" + v->name + "' is " + v->status);
  auto users = AttachmentsLocked(org_id, v->name);
  if (!users.empty()) {
    std::string ids;
    for (const auto& u : users) ids += (ids.empty() ? "" : ", ") + u.id;
    return Conflict("storage '" + v->name + "' is in use by sandbox " + ids +
                    "; delete those sandboxes first");
  }
  v->status = "deleting";
  return Status::Ok();
}

Status MemoryStore::DeleteVolume(const std::string& id) {
  std::lock_guard lock(mu_);
  if (auto fault = WriteFaultLocked()) return *fault;
  std::erase_if(volumes_, [&](const auto& v) { return v.id == id; });
  return Status::Ok();
}

Status MemoryStore::PutPoolMember(const PoolMemberRecord& member) {
  std::lock_guard lock(mu_);
  if (auto fault = WriteFaultLocked()) return *fault;
  std::erase_if(pool_, [&](const auto& m) { return m.id == member.id; });
  pool_.push_back(member);
  return Status::Ok();
}

Result<std::vector<PoolMemberRecord>> MemoryStore::ListPoolMembers() {
  std::lock_guard lock(mu_);
  std::vector<PoolMemberRecord> out = pool_;
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    return a.created_at != b.created_at ? a.created_at < b.created_at : a.id < b.id;
  });
  return out;
}

Status MemoryStore::DeletePoolMember(const std::string& id) {
  std::lock_guard lock(mu_);
  if (auto fault = WriteFaultLocked()) return *fault;
  std::erase_if(pool_, [&](const auto& m) { return m.id == id; });
  return Status::Ok();
}

Result<std::optional<PoolMemberRecord>> MemoryStore::ClaimPoolMember(const std::string& pool_key) {
  std::lock_guard lock(mu_);
  if (auto fault = WriteFaultLocked()) return *fault;
  auto best = pool_.end();
  for (auto it = pool_.begin(); it != pool_.end(); ++it) {
    if (it->pool_key != pool_key || it->state != "ready") continue;
    if (best == pool_.end() || it->created_at < best->created_at ||
        (it->created_at == best->created_at && it->id < best->id))
      best = it;
  }
  if (best == pool_.end()) return std::optional<PoolMemberRecord>();
  PoolMemberRecord m = *best;
  pool_.erase(best);
  return std::optional<PoolMemberRecord>(m);
}

Result<SecretRecord> MemoryStore::PutSecret(const SecretRecord& s) {
  std::lock_guard lock(mu_);
  if (auto fault = WriteFaultLocked()) return *fault;
  auto it = secrets_.find({s.org_id, s.name});
  if (it == secrets_.end()) {
    SecretRecord row = s;
    row.version = 1;
    row.seq = next_seq_++;
    secrets_[{s.org_id, s.name}] = row;
    return row;
  }
  it->second.version += 1;
  it->second.ciphertext = s.ciphertext;
  it->second.updated_at = s.updated_at;
  return it->second;
}

Result<SecretRecord> MemoryStore::GetSecret(const std::string& org_id, const std::string& name) {
  std::lock_guard lock(mu_);
  auto it = secrets_.find({org_id, name});
  if (it == secrets_.end()) return NotFound("secret '" + name + "' not found");
  return it->second;
}

Result<std::vector<SecretRecord>> MemoryStore::ListSecrets(const std::string& org_id) {
  std::lock_guard lock(mu_);
  std::vector<SecretRecord> out;
  for (const auto& [k, s] : secrets_)
    if (k.first == org_id) out.push_back(s);
  // Creation order, as SQLite's (the map is by name).
  std::sort(out.begin(), out.end(),
            [](const SecretRecord& a, const SecretRecord& b) { return a.seq < b.seq; });
  return out;
}

Status MemoryStore::DeleteSecret(const std::string& org_id, const std::string& name) {
  std::lock_guard lock(mu_);
  if (auto fault = WriteFaultLocked()) return *fault;
  if (secrets_.erase({org_id, name}) == 0) return NotFound("secret '" + name + "' not found");
  return Status::Ok();
}

namespace {

bool IsOpen(const OperationRecord& op) { return op.phase == "Pending" || op.phase == "Running"; }

}  // namespace

Status MemoryStore::PutOperation(const OperationRecord& op) {
  std::lock_guard lock(mu_);
  if (auto fault = WriteFaultLocked()) return *fault;
  for (auto& row : operations_) {
    if (row.id != op.id) continue;
    // As SQLite's upsert: who, what and when it began stay as first written.
    row.phase = op.phase;
    row.bytes = op.bytes;
    row.total_bytes = op.total_bytes;
    row.error = op.error;
    row.finished_at = op.finished_at;
    row.release_id = op.release_id;
    return Status::Ok();
  }
  operations_.push_back(op);
  return Status::Ok();
}

Result<OperationRecord> MemoryStore::GetOperation(const std::string& org_id,
                                                  const std::string& id) {
  std::lock_guard lock(mu_);
  for (const auto& op : operations_)
    if (op.org_id == org_id && op.id == id) return op;
  return NotFound("operation " + id + " not found");
}

Result<std::vector<OperationRecord>> MemoryStore::ListOpenOperations(
    const std::string& sandbox_id) {
  std::lock_guard lock(mu_);
  std::vector<OperationRecord> out;
  for (const auto& op : operations_)
    if (op.sandbox_id == sandbox_id && IsOpen(op)) out.push_back(op);
  return out;
}

Result<std::vector<OperationRecord>> MemoryStore::ListAllOpenOperations() {
  std::lock_guard lock(mu_);
  std::vector<OperationRecord> out;
  for (const auto& op : operations_)
    if (IsOpen(op)) out.push_back(op);
  return out;
}

}  // namespace adapt::store
