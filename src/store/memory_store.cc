// MemoryStore: organizations, API keys, sandboxes, events and commands. The other domains are
// in memory_store_resources.cc.
#include "store/memory_store.h"

#include <algorithm>
#include <cctype>
#include <climits>

#include "base/case_fold.h"

namespace adapt::store {
namespace {

// The sandbox's labels.name, which a list query matches (SQLite keeps it in a column).
std::string LabelName(const SandboxRecord& r) {
  auto name = r.config.labels.find("name");
  return name == r.config.labels.end() ? "" : name->second;
}

bool Contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

}  // namespace

Result<OrgRecord> MemoryStore::CreateOrg(const OrgRecord& org) {
  std::lock_guard lock(mu_);
  if (auto fault = WriteFaultLocked()) return *fault;
  for (const auto& o : orgs_) {
    if (o.name == org.name) return Conflict("an organization named '" + org.name + "' exists");
    if (o.id == org.id) return Internal("creating organization: id " + org.id + " is taken");
  }
  orgs_.push_back(org);
  orgs_.back().seq = next_seq_++;
  return orgs_.back();
}

Result<OrgRecord> MemoryStore::GetOrg(const std::string& id) {
  std::lock_guard lock(mu_);
  for (const auto& o : orgs_)
    if (o.id == id) return o;
  return NotFound("organization not found");
}

Result<OrgRecord> MemoryStore::FindOrgByName(const std::string& name) {
  std::lock_guard lock(mu_);
  for (const auto& o : orgs_)
    if (o.name == name) return o;
  return NotFound("organization not found");
}

Result<std::vector<OrgRecord>> MemoryStore::ListOrgs() {
  std::lock_guard lock(mu_);
  std::vector<OrgRecord> out = orgs_;
  std::sort(out.begin(), out.end(),
            [](const OrgRecord& a, const OrgRecord& b) { return a.seq > b.seq; });
  return out;
}

Status MemoryStore::CreateApiKey(const ApiKeyRecord& k) {
  std::lock_guard lock(mu_);
  if (auto fault = WriteFaultLocked()) return *fault;
  if (std::none_of(orgs_.begin(), orgs_.end(),
                   [&](const OrgRecord& o) { return o.id == k.org_id; }))
    return Internal("creating API key: organization " + k.org_id + " does not exist");
  RETURN_IF_ERROR(RefuseIfOrgDeletingLocked(k.org_id));
  for (const auto& other : keys_)
    if (other.id == k.id || other.key_hash == k.key_hash)
      return Internal("creating API key: the key is taken");
  keys_.push_back(k);
  keys_.back().seq = next_seq_++;
  return Status::Ok();
}

Result<ApiKeyRecord> MemoryStore::FindApiKey(const std::string& key_hash) {
  std::lock_guard lock(mu_);
  for (const auto& k : keys_)
    if (k.key_hash == key_hash) return k;
  return NotFound("unknown API key");
}

Result<std::vector<ApiKeyRecord>> MemoryStore::ListApiKeys(const std::string& org_id) {
  std::lock_guard lock(mu_);
  std::vector<ApiKeyRecord> out;
  for (const auto& k : keys_)
    if (k.org_id == org_id) out.push_back(k);
  std::sort(out.begin(), out.end(),
            [](const ApiKeyRecord& a, const ApiKeyRecord& b) { return a.seq < b.seq; });
  return out;
}

Status MemoryStore::DeleteApiKey(const std::string& org_id, const std::string& key_id) {
  std::lock_guard lock(mu_);
  if (auto fault = WriteFaultLocked()) return *fault;
  auto it = std::find_if(keys_.begin(), keys_.end(), [&](const ApiKeyRecord& k) {
    return k.id == key_id && k.org_id == org_id;
  });
  if (it == keys_.end()) return NotFound("API key " + key_id + " not found");
  keys_.erase(it);
  DropGrantsOfLocked(key_id);
  return Status::Ok();
}

SandboxRecord* MemoryStore::FindSandboxLocked(const std::string& id) {
  for (auto& s : sandboxes_)
    if (s.id == id) return &s;
  return nullptr;
}

LiveTotals MemoryStore::CountLiveLocked(const std::string& org_id, const std::string& except_id) {
  LiveTotals t;
  for (const auto& r : sandboxes_) {
    if (r.org_id != org_id || r.id == except_id || !CountsAsLive(r.status)) continue;
    ++t.sandboxes;
    if (!UsesCompute(r.status)) continue;
    t.cpu += r.config.cpu;
    t.memory_mib += r.config.memory_mib;
  }
  return t;
}

void MemoryStore::InsertEventLocked(const std::string& org_id, const std::string& id,
                                    const std::string& status, int64_t at) {
  events_.push_back({next_seq_++, org_id, id, status, at});
}

Result<CreateOutcome> MemoryStore::CreateSandbox(const SandboxRecord& s,
                                                 const std::optional<IdempotencyKey>& idem,
                                                 const SandboxLimits& limits) {
  std::lock_guard lock(mu_);
  if (auto fault = WriteFaultLocked()) return *fault;
  std::optional<IdempotencyClaim> claim;
  if (idem) claim = IdempotencyClaim{s.org_id, "sandbox", *idem, s.created_at};
  if (claim) {
    ASSIGN_OR_RETURN(std::optional<std::string> earlier_id, FindClaimLocked(*claim));
    if (earlier_id) {
      const SandboxRecord* earlier = FindSandboxLocked(*earlier_id);
      if (!earlier) return NotFound("sandbox " + *earlier_id + " not found");
      return CreateOutcome{*earlier, true};
    }
  }
  if (HasAny(limits))
    RETURN_IF_ERROR(CheckSandboxLimits(limits, CountLiveLocked(s.org_id, ""), s.config, true));
  if (std::none_of(orgs_.begin(), orgs_.end(),
                   [&](const OrgRecord& o) { return o.id == s.org_id; }))
    return Internal("creating sandbox: organization " + s.org_id + " does not exist");
  RETURN_IF_ERROR(RefuseIfOrgDeletingLocked(s.org_id));
  if (s.config.image_id && std::none_of(images_.begin(), images_.end(), [&](const ImageRecord& i) {
        return i.org_id == s.org_id && i.id == *s.config.image_id && i.status == "ready";
      }))
    return ImageGoneBeforeCreate(*s.config.image_id);
  if (FindSandboxLocked(s.id)) return Internal("creating sandbox: id " + s.id + " is taken");
  SandboxRecord row = s;
  row.seq = next_seq_++;
  sandboxes_.push_back(row);
  if (claim)
    idempotency_[{s.org_id, claim->scope, claim->key.key}] = {idem->body_hash, s.id, s.created_at};
  InsertEventLocked(s.org_id, s.id, s.status, s.created_at);
  return CreateOutcome{row, false};
}

Result<SandboxRecord> MemoryStore::GetSandbox(const std::string& org_id, const std::string& id) {
  std::lock_guard lock(mu_);
  const SandboxRecord* r = FindSandboxLocked(id);
  if (!r || (!org_id.empty() && r->org_id != org_id))
    return NotFound("sandbox " + id + " not found");
  return *r;
}

Result<SandboxPage> MemoryStore::ListSandboxes(const std::string& org_id, const std::string& query,
                                               int limit, std::optional<int64_t> before_seq) {
  std::lock_guard lock(mu_);
  SandboxPage page;
  int64_t before = before_seq.value_or(INT64_MAX);
  std::string folded = FoldCase(query);
  for (auto it = sandboxes_.rbegin(); it != sandboxes_.rend(); ++it) {
    const SandboxRecord& r = *it;
    if (r.org_id != org_id || r.status == "deleted" || r.seq >= before) continue;
    if (!query.empty() && FoldCase(LabelName(r)).find(folded) == std::string::npos &&
        FoldCase(r.id).rfind(folded, 0) != 0)  // as SQLite's LIKE: ASCII case ignored
      continue;
    if (static_cast<int>(page.items.size()) == limit) {
      page.next_seq = page.items.back().seq;
      break;
    }
    page.items.push_back(r);
    for (auto& [_, value] : page.items.back().env) value.clear();  // names only, as SQLite's
  }
  return page;
}

Result<std::vector<SandboxRecord>> MemoryStore::ListSandboxesWithStatus(
    const std::vector<std::string>& statuses) {
  std::lock_guard lock(mu_);
  std::vector<SandboxRecord> out;
  for (const auto& status : statuses)
    for (const auto& r : sandboxes_)
      if (r.status == status) out.push_back(r);
  return out;
}

Result<std::vector<SandboxRecord>> MemoryStore::ListExpired(int64_t now) {
  std::lock_guard lock(mu_);
  std::vector<SandboxRecord> out;
  for (const auto& r : sandboxes_)
    if (r.expires_at && *r.expires_at <= now && r.status != "deleting" && r.status != "deleted")
      out.push_back(r);
  std::stable_sort(out.begin(), out.end(), [](const SandboxRecord& a, const SandboxRecord& b) {
    return *a.expires_at < *b.expires_at;
  });
  return out;
}

Status MemoryStore::UpdateSandbox(const SandboxRecord& s, const std::vector<std::string>& expected,
                                  const SandboxLimits& limits) {
  std::lock_guard lock(mu_);
  if (auto fault = WriteFaultLocked()) return *fault;
  SandboxRecord* r = FindSandboxLocked(s.id);
  if (!r) return NotFound("sandbox " + s.id + " not found");
  if (!Contains(expected, r->status)) return Conflict("sandbox " + s.id + " is " + r->status);
  if (HasAny(limits) && UsesCompute(s.status) && !UsesCompute(r->status))
    RETURN_IF_ERROR(
        CheckSandboxLimits(limits, CountLiveLocked(r->org_id, r->id), r->config, false));
  std::string old_status = r->status;
  // The columns SQLite's UPDATE writes; id, org, config, env and created_at stay.
  r->status = s.status;
  r->updated_at = s.updated_at;
  r->expires_at = s.expires_at;
  r->deleted_at = s.deleted_at;
  r->termination_reason = s.termination_reason;
  r->error = s.error;
  r->result = s.result;
  if (old_status != s.status) InsertEventLocked(r->org_id, s.id, s.status, s.updated_at);
  // The values (captured secrets among them) go with the sandbox; the names stay.
  if (s.status == "deleted")
    for (auto& [name, value] : r->env) value.clear();
  return Status::Ok();
}

Status MemoryStore::SetValueSealer(ValueSealer sealer) {
  // Nothing is at rest here: the sealer is kept only to honour the call.
  std::lock_guard lock(mu_);
  sealer_ = std::move(sealer);
  return Status::Ok();
}

Status MemoryStore::SetSandboxEnv(const std::string& org_id, const std::string& id,
                                  const std::map<std::string, std::string>& vars) {
  std::lock_guard lock(mu_);
  if (auto fault = WriteFaultLocked()) return *fault;
  SandboxRecord* r = FindSandboxLocked(id);
  if (!r || r->org_id != org_id) return NotFound("sandbox " + id + " not found");
  for (const auto& [k, v] : vars) r->env[k] = v;
  return Status::Ok();
}

Result<std::vector<EventRecord>> MemoryStore::ListEvents(const std::string& org_id,
                                                         const std::string& sandbox_id,
                                                         int64_t after_seq, int limit) {
  std::lock_guard lock(mu_);
  std::vector<EventRecord> out;
  for (const auto& e : events_) {
    if (static_cast<int>(out.size()) >= limit) break;
    if (e.org_id == org_id && e.seq > after_seq &&
        (sandbox_id.empty() || e.sandbox_id == sandbox_id))
      out.push_back(e);
  }
  return out;
}

Status MemoryStore::AppendAppEvent(const EventRecord& e) {
  std::lock_guard lock(mu_);
  if (auto fault = WriteFaultLocked()) return *fault;
  EventRecord row = e;
  row.seq = next_seq_++;
  row.sandbox_id.clear();
  events_.push_back(std::move(row));
  return Status::Ok();
}

void MemoryStore::SetRunEventListener(RunEventListener listener) {
  std::lock_guard lock(listener_mu_);
  run_listener_ = std::move(listener);
}

void MemoryStore::AnnounceRunEvent(const std::string& run_id) {
  RunEventListener listener;
  {
    std::lock_guard lock(listener_mu_);
    listener = run_listener_;
  }
  if (listener) listener(run_id);
}

Result<int64_t> MemoryStore::LatestEventSeq() {
  std::lock_guard lock(mu_);
  return std::max(events_.empty() ? int64_t{0} : events_.back().seq, pruned_event_seq_);
}

Status MemoryStore::PutCommand(const CommandRecord& c) {
  std::lock_guard lock(mu_);
  if (auto fault = WriteFaultLocked()) return *fault;
  for (auto& stored : commands_) {
    if (stored.id == c.id) {
      // As SQLite's upsert: everything but the row's identity and creation changes.
      CommandRecord row = c;
      row.seq = stored.seq;
      row.org_id = stored.org_id;
      row.sandbox_id = stored.sandbox_id;
      row.created_at = stored.created_at;
      stored = std::move(row);
      TrimEndedCommandsLocked(c);
      return Status::Ok();
    }
  }
  CommandRecord row = c;
  row.seq = next_seq_++;
  commands_.push_back(row);
  TrimEndedCommandsLocked(c);
  return Status::Ok();
}

void MemoryStore::TrimEndedCommandsLocked(const CommandRecord& c) {
  if (c.status == "running") return;
  int64_t kept = 0;  // commands_ is by seq: the newest last
  for (auto it = commands_.rbegin(); it != commands_.rend();) {
    bool ended = it->sandbox_id == c.sandbox_id && it->status != "running";
    if (ended && ++kept > kKeptEndedCommandsPerSandbox) {
      it = std::make_reverse_iterator(commands_.erase(std::next(it).base()));
    } else {
      ++it;
    }
  }
}

Result<CommandRecord> MemoryStore::GetCommand(const std::string& org_id,
                                              const std::string& sandbox_id,
                                              const std::string& id) {
  std::lock_guard lock(mu_);
  for (const auto& c : commands_)
    if (c.id == id && c.sandbox_id == sandbox_id && c.org_id == org_id) return c;
  return NotFound("command " + id + " not found");
}

Result<CommandPage> MemoryStore::ListCommands(const std::string& org_id,
                                              const std::string& sandbox_id, int limit,
                                              std::optional<int64_t> before_seq) {
  std::lock_guard lock(mu_);
  CommandPage page;
  int64_t before = before_seq.value_or(INT64_MAX);
  for (auto it = commands_.rbegin(); it != commands_.rend(); ++it) {
    if (it->org_id != org_id || it->sandbox_id != sandbox_id || it->seq >= before) continue;
    if (page.items.size() == static_cast<size_t>(limit)) {
      page.next_seq = page.items.back().seq;
      break;
    }
    page.items.push_back(*it);
  }
  return page;
}

Result<std::vector<CommandRecord>> MemoryStore::ListCommandsWithStatus(const std::string& status) {
  std::lock_guard lock(mu_);
  std::vector<CommandRecord> out;
  for (const auto& c : commands_)
    if (c.status == status) out.push_back(c);
  return out;
}

}  // namespace adapt::store
