// SandboxStore: sandbox rows (each status change written with its event, see EventStore),
// idempotency keys and sealed environments. One domain of Store (store/store.h): a service that
// needs only this domain depends on this interface, and a test can give it a MemoryStore. Every
// method is one transaction; implementations are thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "store/records.h"
#include "store/value_sealer.h"

namespace adapt::store {

struct SandboxPage {
  std::vector<SandboxRecord> items;
  std::optional<int64_t> next_seq;  // pass back as `before_seq` for the next page
};

// Limits an organization's plan puts on its sandboxes, checked in the transaction that records
// a sandbox (create) or its start, so concurrent requests cannot overshoot. Unset: no limit.
struct SandboxLimits {
  std::optional<int64_t> sandboxes;   // not deleting, deleted or failed
  std::optional<int64_t> cpu;         // total of the provisioning and running ones
  std::optional<int64_t> memory_mib;  // likewise
};

// What CreateSandbox answers when the image the sandbox names by `imageId` is no longer there
// (deleted, or no longer ready) as its row goes in. Checked in that transaction: a delete of
// the image, and the collection of its layers, could otherwise pass between the create's look
// at the image and the insert, and the sandbox then booted without its layers.
inline Status ImageGoneBeforeCreate(const std::string& image_id) {
  return Status(Code::kNotFound, "image " + image_id + " not found (it was deleted meanwhile)",
                "imageId");
}

struct CreateOutcome {
  SandboxRecord sandbox;
  bool replayed = false;  // an earlier request with the same idempotency key made it
};

class SandboxStore {
 public:
  virtual ~SandboxStore() = default;

  // Inserts the sandbox and its first event. With an idempotency key already used by the
  // organization: the earlier sandbox (replayed) when the body hash matches, else Conflict.
  // `limits` are counted in the same transaction: past one, kResourceExhausted naming the
  // limit, its value and what to do, and nothing is written (a replay is still answered).
  // A sandbox naming an image by `config.image_id` needs it there and ready (NotFound,
  // ImageGoneBeforeCreate, otherwise).
  virtual Result<CreateOutcome> CreateSandbox(const SandboxRecord& sandbox,
                                              const std::optional<IdempotencyKey>& idem,
                                              const SandboxLimits& limits = {}) = 0;
  // `org_id` empty: any organization (for the daemon's own use).
  virtual Result<SandboxRecord> GetSandbox(const std::string& org_id, const std::string& id) = 0;
  // Newest first, deleted sandboxes excluded. `query` matches part of labels.name (ignoring
  // case) or the start of the id. The records' env holds the names only (values empty): what
  // the list shows, read without opening the sealed values.
  virtual Result<SandboxPage> ListSandboxes(const std::string& org_id, const std::string& query,
                                            int limit, std::optional<int64_t> before_seq) = 0;
  virtual Result<std::vector<SandboxRecord>> ListSandboxesWithStatus(
      const std::vector<std::string>& statuses) = 0;
  // Sandboxes not yet deleting/deleted whose expiry is at or before `now`.
  virtual Result<std::vector<SandboxRecord>> ListExpired(int64_t now) = 0;
  // Writes `sandbox` when its stored status is one of `expected_statuses` (Conflict
  // otherwise), and records an event when the status changes. When it moves the sandbox from
  // a status without compute into provisioning or running (a start), `limits.cpu` and
  // `limits.memory_mib` are checked in the same transaction (kResourceExhausted past one).
  virtual Status UpdateSandbox(const SandboxRecord& sandbox,
                               const std::vector<std::string>& expected_statuses,
                               const SandboxLimits& limits = {}) = 0;
  // Seals sandboxes' environments from now on (none before: plaintext), and seals what was
  // stored in plaintext before; a deleted sandbox's values are dropped, its names kept.
  // Call once, before the first sandbox is read.
  virtual Status SetValueSealer(ValueSealer sealer) = 0;
  // Adds or replaces `vars` in the sandbox's env (UpdateSandbox leaves env alone, but a
  // sandbox that becomes deleted drops its values and keeps the names); NotFound
  // unless the organization has the sandbox.
  virtual Status SetSandboxEnv(const std::string& org_id, const std::string& id,
                               const std::map<std::string, std::string>& vars) = 0;
};

}  // namespace adapt::store
