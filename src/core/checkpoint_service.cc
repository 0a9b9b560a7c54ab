#include "core/checkpoint_service.h"

#include <algorithm>
#include <charconv>
#include <tuple>

#include "base/ids.h"
#include "base/ignore_error.h"
#include "base/time.h"
#include "core/checkpoint_work.h"
#include "storage/volume_request.h"

namespace adapt::core {
namespace {

bool IsDeletedSandbox(const store::SandboxRecord& r) {
  return r.status == "deleted" || r.status == "deleting";
}

Checkpoint CheckpointView(const runtime::NamedCheckpoint& c, const store::SandboxRecord& r) {
  return Checkpoint{c.name,         r.id,
                    c.bytes,        c.created_at,
                    c.keep,         c.runtime_version,
                    c.platform,     IsDeletedSandbox(r),
                    r.config.labels};
}

// A listing's order, newest first: created_at descending, then sandbox id and name descending,
// so that checkpoints taken in the same millisecond still have one place each.
using ListingKey = std::tuple<int64_t, std::string, std::string>;

ListingKey ListingKeyOf(const Checkpoint& c) { return {c.created_at, c.sandbox_id, c.name}; }

// "k<createdAt>.<sandboxId>.<name>": the last item of a page. Neither an id nor a name holds
// a dot, so the three parts come apart again.
std::string ListingCursor(const Checkpoint& c) {
  return "k" + std::to_string(c.created_at) + "." + c.sandbox_id + "." + c.name;
}

Result<std::optional<ListingKey>> ParseCheckpointCursor(const std::string& cursor) {
  if (cursor.empty()) return std::optional<ListingKey>();
  Status refused = InvalidArgument("cursor", "cursor is not one this server issued");
  size_t first = cursor.find('.');
  size_t second = first == std::string::npos ? first : cursor.find('.', first + 1);
  if (cursor[0] != 'k' || second == std::string::npos) return refused;
  int64_t created_at = 0;
  const char* begin = cursor.data() + 1;
  const char* end = cursor.data() + first;
  auto [ptr, ec] = std::from_chars(begin, end, created_at);
  if (begin == end || ec != std::errc() || ptr != end || created_at < 0) return refused;
  std::string sandbox_id = cursor.substr(first + 1, second - first - 1);
  std::string name = cursor.substr(second + 1);
  if (!IsValidId(sandbox_id, "sbx") || !storage::ValidateVolumeName(name, "cursor").ok())
    return refused;
  return std::optional<ListingKey>(ListingKey{created_at, sandbox_id, name});
}

// One page of `all` (in any order) in the listing's order, after the cursor's item.
Result<CheckpointPage> PageOfCheckpoints(std::vector<Checkpoint> all, const PageRequest& request) {
  RETURN_IF_ERROR(CheckPageLimit(request.limit));
  ASSIGN_OR_RETURN(std::optional<ListingKey> after, ParseCheckpointCursor(request.cursor));
  if (after) std::erase_if(all, [&](const Checkpoint& c) { return !(ListingKeyOf(c) < *after); });
  std::sort(all.begin(), all.end(), [](const Checkpoint& a, const Checkpoint& b) {
    return ListingKeyOf(b) < ListingKeyOf(a);
  });
  CheckpointPage page;
  if (all.size() > static_cast<size_t>(request.limit)) {
    all.resize(request.limit);
    page.next_cursor = ListingCursor(all.back());
  }
  page.items = std::move(all);
  return page;
}

std::string Gib(uint64_t bytes) {
  return std::to_string(bytes >> 30) + "." + std::to_string(((bytes >> 20) % 1024) * 10 / 1024);
}

}  // namespace

Result<store::SandboxRecord> CheckpointService::Owned(const Principal& who,
                                                      const std::string& sandbox_id,
                                                      const std::string& name, bool kept_ok) {
  if (!IsValidId(sandbox_id, "sbx")) return NotFound("sandbox " + sandbox_id + " not found");
  ASSIGN_OR_RETURN(store::SandboxRecord r, store_.GetSandbox(who.org_id, sandbox_id));
  if (IsDeletedSandbox(r) && !(kept_ok && !runtime_.ListNamedCheckpoints(sandbox_id).empty()))
    return NotFound("sandbox " + sandbox_id + " not found");
  if (!name.empty()) RETURN_IF_ERROR(storage::ValidateVolumeName(name, "name"));
  return r;
}

std::vector<store::SandboxRecord> CheckpointService::SandboxesWithCheckpoints(
    const std::string& org_id) {
  std::vector<store::SandboxRecord> out;
  auto records = store_.ListSandboxesWithStatus(
      {"provisioning", "running", "hibernated", "completed", "failed", "unresolved"});
  if (records.ok())
    for (auto& r : *records)
      if (org_id.empty() || r.org_id == org_id) out.push_back(std::move(r));
  // Deleted sandboxes' checkpoints taken with keep.
  for (const auto& id : runtime_.SandboxesWithKeptCheckpoints())
    if (auto r = store_.GetSandbox(org_id, id); r.ok() && IsDeletedSandbox(*r))
      out.push_back(std::move(*r));
  return out;
}

uint64_t CheckpointService::OrgCheckpointBytes(const std::string& org_id) {
  uint64_t total = 0;
  for (const auto& r : SandboxesWithCheckpoints(org_id))
    for (const auto& c : runtime_.ListNamedCheckpoints(r.id)) total += c.bytes;
  return total;
}

std::vector<MeteredCheckpoint> CheckpointService::AllForMetering() {
  std::vector<MeteredCheckpoint> out;
  for (const auto& r : SandboxesWithCheckpoints(""))
    for (const auto& c : runtime_.ListNamedCheckpoints(r.id))
      out.push_back({r.org_id, r.id, c.name, c.bytes, c.created_at});
  return out;
}

Status CheckpointService::CheckStorage(const std::string& org_id, bool or_equal) {
  if (!storage_limit_) return Status::Ok();
  ASSIGN_OR_RETURN(std::optional<int64_t> limit_gib, storage_limit_(org_id));
  if (!limit_gib) return Status::Ok();
  ASSIGN_OR_RETURN(store::OrgUsageRecord usage, store_.GetOrgUsage(org_id));
  uint64_t limit = static_cast<uint64_t>(*limit_gib) << 30;
  uint64_t used =
      (static_cast<uint64_t>(usage.persistent_storage_mib) << 20) + OrgCheckpointBytes(org_id);
  if (used > limit || (or_equal && used == limit))
    return Status(Code::kResourceExhausted,
                  "the organization's storage volumes and checkpoints take " + Gib(used) +
                      " GiB of its " + std::to_string(*limit_gib) +
                      " GiB persistent storage limit; delete checkpoints or volumes first");
  return Status::Ok();
}

Result<CheckpointTaken> CheckpointService::Take(
    const Principal& who, const std::string& sandbox_id, const std::string& name, bool keep,
    const std::optional<store::IdempotencyKey>& idempotency) {
  ASSIGN_OR_RETURN(std::optional<store::IdempotencyClaim> claim,
                   store::ClaimFor(who.org_id, "checkpoint", idempotency));
  bool replayed = false;
  CheckpointTaken out;
  if (claim) {
    ASSIGN_OR_RETURN(std::optional<std::string> earlier, store_.FindIdempotentCreate(*claim));
    // Through the lifecycle, which finds the key again under the sandbox's lock: a take
    // under the key still running ends first, so its checkpoint is there to answer. The
    // wait holds a place of checkpoint work, so retries cannot hold every worker either.
    if (earlier) {
      ASSIGN_OR_RETURN(std::shared_ptr<void> place, TakeCheckpointWorkPlace(work_, who.org_id));
      RETURN_IF_ERROR(lifecycle_.TakeNamedCheckpoint(who.org_id, sandbox_id, name,
                                                     &out.operation_id, keep, claim, &replayed,
                                                     WhenBusy::kWait));
      return TakenEarlier(who, sandbox_id, name, out.operation_id);
    }
  }
  if (name.empty()) return InvalidArgument("name", "name is required");
  ASSIGN_OR_RETURN(store::SandboxRecord r, Owned(who, sandbox_id, name));
  RETURN_IF_ERROR(lifecycle_.CheckNewCheckpoint(sandbox_id, name));
  RETURN_IF_ERROR(CheckStorage(who.org_id, true));
  ASSIGN_OR_RETURN(std::shared_ptr<void> place, TakeCheckpointWorkPlace(work_, who.org_id));
  RETURN_IF_ERROR(lifecycle_.TakeNamedCheckpoint(who.org_id, sandbox_id, name, &out.operation_id,
                                                 keep, claim, &replayed, WhenBusy::kRefuse));
  if (replayed) return TakenEarlier(who, sandbox_id, name, out.operation_id);
  for (const auto& c : runtime_.ListNamedCheckpoints(sandbox_id))
    if (c.name == name) out.checkpoint = CheckpointView(c, r);
  if (Status over = CheckStorage(who.org_id, false); !over.ok()) {
    IgnoreError(runtime_.DeleteNamedCheckpoint(sandbox_id, name),
                "the checkpoint passed the limit; the refusal is what is reported");
    return over;
  }
  return out;
}

Result<CheckpointTaken> CheckpointService::TakenEarlier(const Principal& who,
                                                        const std::string& sandbox_id,
                                                        const std::string& name,
                                                        const std::string& operation_id) {
  ASSIGN_OR_RETURN(store::OperationRecord op, store_.GetOperation(who.org_id, operation_id));
  if (op.phase == "Failed")
    return Status(Code::kConflict,
                  "the request with this Idempotency-Key failed (operation " + operation_id +
                      "): " + op.error + "; send it with a new key to try again",
                  "Idempotency-Key");
  auto r = store_.GetSandbox(who.org_id, sandbox_id);
  if (r.ok())
    for (const auto& c : runtime_.ListNamedCheckpoints(sandbox_id))
      if (c.name == name) return CheckpointTaken{CheckpointView(c, *r), operation_id};
  // Deleted since, or over the storage limit when taken (and deleted then).
  return store::IdempotentObjectGone("checkpoint '" + name + "' of sandbox " + sandbox_id);
}

Result<CheckpointPage> CheckpointService::List(const Principal& who, const std::string& sandbox_id,
                                               const PageRequest& page) {
  ASSIGN_OR_RETURN(store::SandboxRecord r, Owned(who, sandbox_id, "", true));
  std::vector<Checkpoint> all;
  for (const auto& c : runtime_.ListNamedCheckpoints(sandbox_id))
    all.push_back(CheckpointView(c, r));
  return PageOfCheckpoints(std::move(all), page);
}

Result<CheckpointPage> CheckpointService::ListOrganization(const Principal& who,
                                                           const ListCheckpointsRequest& req) {
  RETURN_IF_ERROR(CheckPageLimit(req.limit));
  RETURN_IF_ERROR(ParseCheckpointCursor(req.cursor).status());
  if (!req.sandbox_id.empty() && !IsValidId(req.sandbox_id, "sbx"))
    return InvalidArgument("sandboxId", "sandboxId is not a sandbox id (sbx_...)");
  // The store would read an empty organization as every organization (the metering's case).
  if (who.org_id.empty()) return CheckpointPage{};
  std::vector<store::SandboxRecord> sandboxes;
  if (req.sandbox_id.empty()) {
    sandboxes = SandboxesWithCheckpoints(who.org_id);
  } else if (auto r = store_.GetSandbox(who.org_id, req.sandbox_id); r.ok()) {
    // Another organization's sandbox is NotFound there, as an unknown one: nothing listed.
    sandboxes.push_back(std::move(*r));
  }
  std::vector<Checkpoint> all;
  for (const auto& r : sandboxes)
    for (const auto& c : runtime_.ListNamedCheckpoints(r.id)) {
      // A deleted sandbox's others are on their way out with it.
      if (IsDeletedSandbox(r) && !c.keep) continue;
      if (req.kept && c.keep != *req.kept) continue;
      all.push_back(CheckpointView(c, r));
    }
  return PageOfCheckpoints(std::move(all), {req.limit, req.cursor});
}

Status CheckpointService::Delete(const Principal& who, const std::string& sandbox_id,
                                 const std::string& name) {
  ASSIGN_OR_RETURN(store::SandboxRecord sandbox, Owned(who, sandbox_id, name, true));
  if (on_deleting_)
    for (const auto& c : runtime_.ListNamedCheckpoints(sandbox_id))
      if (c.name == name)
        on_deleting_({sandbox.org_id, sandbox_id, c.name, c.bytes, c.created_at}, NowMillis());
  return lifecycle_.DeleteNamedCheckpoint(sandbox_id, name);
}

Result<PowerChange> CheckpointService::Restore(const Principal& who, const std::string& sandbox_id,
                                               const std::string& name) {
  RETURN_IF_ERROR(Owned(who, sandbox_id, name).status());
  PowerChange out;
  ASSIGN_OR_RETURN(std::shared_ptr<void> place, TakeCheckpointWorkPlace(work_, who.org_id));
  RETURN_IF_ERROR(lifecycle_
                      .RestoreNamedCheckpoint(who.org_id, sandbox_id, name, &out.operation_id,
                                              WhenBusy::kRefuse)
                      .status());
  ASSIGN_OR_RETURN(out.sandbox, sandboxes_.Get(who, sandbox_id));
  return out;
}

}  // namespace adapt::core
