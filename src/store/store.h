// Store: adapt's durable state. Every method is one transaction; a status change and its
// event are written together. Implementations are thread-safe.
#pragma once

#include <map>
#include <memory>
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

struct CreateOutcome {
  SandboxRecord sandbox;
  bool replayed = false;  // an earlier request with the same idempotency key made it
};

struct CommandPage {
  std::vector<CommandRecord> items;
  std::optional<int64_t> next_seq;
};

class Store {
 public:
  virtual ~Store() = default;

  virtual Result<OrgRecord> CreateOrg(const OrgRecord& org) = 0;
  virtual Result<OrgRecord> GetOrg(const std::string& id) = 0;
  virtual Result<OrgRecord> FindOrgByName(const std::string& name) = 0;
  virtual Result<std::vector<OrgRecord>> ListOrgs() = 0;

  virtual Status CreateApiKey(const ApiKeyRecord& key) = 0;
  // NotFound when no key has this hash.
  virtual Result<ApiKeyRecord> FindApiKey(const std::string& key_hash) = 0;
  // The organization's keys, oldest first.
  virtual Result<std::vector<ApiKeyRecord>> ListApiKeys(const std::string& org_id) = 0;
  // Deletes the key and, in the same transaction, every OAuth grant made with it, so no token
  // outlives the key it was issued for. NotFound when the org has no such key.
  virtual Status DeleteApiKey(const std::string& org_id, const std::string& key_id) = 0;

  // Inserts the sandbox and its first event. With an idempotency key already used by the
  // organization: the earlier sandbox (replayed) when the body hash matches, else Conflict.
  // With `max_live` > 0, the organization's sandboxes not deleting, deleted or failed are
  // counted in the same transaction: at `max_live` already, kResourceExhausted and nothing
  // is written (a replay is still answered).
  virtual Result<CreateOutcome> CreateSandbox(const SandboxRecord& sandbox,
                                              const std::optional<IdempotencyKey>& idem,
                                              int max_live = 0) = 0;
  // `org_id` empty: any organization (for the daemon's own use).
  virtual Result<SandboxRecord> GetSandbox(const std::string& org_id, const std::string& id) = 0;
  // Newest first, deleted sandboxes excluded. `query` matches part of labels.name (ignoring
  // case) or the start of the id.
  virtual Result<SandboxPage> ListSandboxes(const std::string& org_id, const std::string& query,
                                            int limit, std::optional<int64_t> before_seq) = 0;
  virtual Result<std::vector<SandboxRecord>> ListSandboxesWithStatus(
      const std::vector<std::string>& statuses) = 0;
  // Sandboxes not yet deleting/deleted whose expiry is at or before `now`.
  virtual Result<std::vector<SandboxRecord>> ListExpired(int64_t now) = 0;
  // Writes `sandbox` when its stored status is one of `expected_statuses` (Conflict
  // otherwise), and records an event when the status changes.
  virtual Status UpdateSandbox(const SandboxRecord& sandbox,
                               const std::vector<std::string>& expected_statuses) = 0;

  // Events after `after_seq`, oldest first; `sandbox_id` empty: all of the organization's.
  virtual Result<std::vector<EventRecord>> ListEvents(const std::string& org_id,
                                                      const std::string& sandbox_id,
                                                      int64_t after_seq, int limit) = 0;
  // The newest event's sequence number (0 when none): where a live stream starts.
  virtual Result<int64_t> LatestEventSeq() = 0;
  // Inserts the command, or replaces the stored one with the same id (status changes).
  virtual Status PutCommand(const CommandRecord& command) = 0;
  // NotFound unless the command belongs to this organization's sandbox.
  virtual Result<CommandRecord> GetCommand(const std::string& org_id, const std::string& sandbox_id,
                                           const std::string& id) = 0;
  // Newest first.
  virtual Result<CommandPage> ListCommands(const std::string& org_id, const std::string& sandbox_id,
                                           int limit, std::optional<int64_t> before_seq) = 0;
  // Commands with status `status`, oldest first (the daemon's reconciliation).
  virtual Result<std::vector<CommandRecord>> ListCommandsWithStatus(const std::string& status) = 0;

  // Records a sandbox's network attachment; Conflict when its slot or sandbox already has one.
  virtual Status PutNetwork(const NetworkRecord& network) = 0;
  // Every recorded attachment, by slot.
  virtual Result<std::vector<NetworkRecord>> ListNetworks() = 0;
  // Forgets the sandbox's attachment; no error when there is none.
  virtual Status DeleteNetwork(const std::string& sandbox_id) = 0;
  // Replaces the data of the sandbox's attachment (its slot stays); NotFound when it has none.
  virtual Status UpdateNetworkData(const std::string& sandbox_id, const nlohmann::json& data) = 0;
  virtual Status PutEndpoint(const EndpointRecord& endpoint) = 0;
  // The organization's endpoints of `sandbox_id` (all of them when empty), oldest first.
  virtual Result<std::vector<EndpointRecord>> ListEndpoints(const std::string& org_id,
                                                            const std::string& sandbox_id) = 0;
  // NotFound when no endpoint has this hostname.
  virtual Result<EndpointRecord> FindEndpointByHostname(const std::string& hostname) = 0;
  // NotFound unless the organization has this endpoint.
  virtual Status DeleteEndpoint(const std::string& org_id, const std::string& id) = 0;
  // Removes every endpoint of the sandbox; returns their hostnames.
  virtual Result<std::vector<std::string>> DeleteEndpointsOfSandbox(
      const std::string& sandbox_id) = 0;
  virtual Status CreateOAuthClient(const OAuthClientRecord& client) = 0;
  virtual Result<OAuthClientRecord> GetOAuthClient(const std::string& id) = 0;
  // Deletes the clients registered before `registered_before` that hold no code or token
  // unexpired at `now` (never authorized, or long unused), and expired grants; returns how
  // many clients remain.
  virtual Result<int64_t> PruneOAuthClients(int64_t registered_before, int64_t now) = 0;
  virtual Status PutOAuthGrant(const OAuthGrantRecord& grant) = 0;
  // NotFound when no unexpired grant of `kind` has this hash.
  virtual Result<OAuthGrantRecord> FindOAuthGrant(const std::string& hash, const std::string& kind,
                                                  int64_t now) = 0;
  // Like Find, and deletes it in the same transaction: codes and refresh tokens are single-use.
  virtual Result<OAuthGrantRecord> TakeOAuthGrant(const std::string& hash, const std::string& kind,
                                                  int64_t now) = 0;
  // Images (/v1/images). Put inserts or replaces. An empty org_id lists every org's.
  virtual Status PutImage(const ImageRecord& image) = 0;
  // Inserts a new image record, counting in the same transaction the organization's images
  // (at `max_images` already: kResourceExhausted) and, when `image` is in progress (pulling
  // or importing), those in progress (at `max_in_progress`: kResourceExhausted); nothing is
  // written then. 0 means no cap.
  virtual Status InsertImageWithinCaps(const ImageRecord& image, int max_images,
                                       int max_in_progress) = 0;
  virtual Result<ImageRecord> GetImage(const std::string& org_id, const std::string& id) = 0;
  virtual Result<std::vector<ImageRecord>> ListImages(const std::string& org_id) = 0;
  virtual Status DeleteImage(const std::string& org_id, const std::string& id) = 0;

  // Persistent storage volumes. PutVolume inserts or replaces by id; Conflict when the
  // organization has another volume of that name.
  virtual Status PutVolume(const VolumeRecord& volume) = 0;
  // NotFound unless the organization has a volume of this name.
  virtual Result<VolumeRecord> GetVolumeByName(const std::string& org_id,
                                               const std::string& name) = 0;
  // Oldest first; an empty org_id lists every organization's.
  virtual Result<std::vector<VolumeRecord>> ListVolumes(const std::string& org_id) = 0;
  // Ids of the organization's sandboxes that mount volume `name` and have not ended
  // (every status but completed, failed and deleted), oldest first.
  virtual Result<std::vector<SandboxRecord>> ListVolumeAttachments(const std::string& org_id,
                                                                   const std::string& name) = 0;
  // Marks the volume "deleting" when it is "ready" and no sandbox is attached, in one
  // transaction (Conflict otherwise, naming the reason).
  virtual Status BeginDeleteVolume(const std::string& org_id, const std::string& id) = 0;
  virtual Status DeleteVolume(const std::string& id) = 0;
  // Object storage. PutObject inserts or replaces and returns the replaced blob ("" when new).
  virtual Result<std::string> PutObject(const ObjectRecord& object) = 0;
  virtual Result<ObjectRecord> GetObject(const std::string& org_id, const std::string& key) = 0;
  // Up to `limit` objects whose key is > `after` (byte order), in key order.
  virtual Result<std::vector<ObjectRecord>> ListObjects(const std::string& org_id,
                                                        const std::string& after, size_t limit) = 0;
  // Returns the deleted object's blob; NotFound when there is none.
  virtual Result<std::string> DeleteObject(const std::string& org_id, const std::string& key) = 0;
  // Every blob some object or site release refers to.
  virtual Result<std::vector<std::string>> ListReferencedBlobs() = 0;
  virtual Status PutStorageToken(const StorageTokenRecord& token) = 0;
  virtual Result<StorageTokenRecord> GetStorageToken(const std::string& id) = 0;
  virtual Result<std::vector<StorageTokenRecord>> ListStorageTokens(const std::string& org_id) = 0;
  // NotFound unless the organization has this token.
  virtual Status RevokeStorageToken(const std::string& org_id, const std::string& id,
                                    int64_t now) = 0;
  // Static sites: Put inserts or replaces the site; releases are only ever inserted.
  virtual Status PutSite(const SiteRecord& site, const SiteReleaseRecord* new_release) = 0;
  virtual Result<SiteRecord> GetSite(const std::string& org_id, const std::string& id) = 0;
  virtual Result<SiteRecord> FindSiteByHostname(const std::string& hostname) = 0;
  virtual Result<std::vector<SiteRecord>> ListSites(const std::string& org_id) = 0;
  virtual Result<SiteReleaseRecord> GetSiteRelease(const std::string& id) = 0;
  // Deletes the site and its releases; returns the blobs they held.
  virtual Result<std::vector<std::string>> DeleteSite(const std::string& org_id,
                                                      const std::string& id) = 0;

  // Forgets idempotency keys created before `before`.
  virtual Status PurgeIdempotencyKeys(int64_t before) = 0;
  // Seals sandboxes' environments from now on (none before: plaintext), and seals what was
  // stored in plaintext before; a deleted sandbox's values are dropped, its names kept.
  // Call once, before the first sandbox is read.
  virtual Status SetValueSealer(ValueSealer sealer) = 0;
  // Adds or replaces `vars` in the sandbox's env (UpdateSandbox leaves env alone, but a
  // sandbox that becomes deleted drops its values and keeps the names); NotFound
  // unless the organization has the sandbox.
  virtual Status SetSandboxEnv(const std::string& org_id, const std::string& id,
                               const std::map<std::string, std::string>& vars) = 0;
  // The bytes the organization's objects hold.
  virtual Result<uint64_t> ObjectBytes(const std::string& org_id) = 0;
  // PutObject, in one transaction with a check that the organization's objects then hold at
  // most `quota_bytes` (kResourceExhausted otherwise, and nothing changes); 0 means no limit.
  virtual Result<std::string> PutObjectWithinQuota(const ObjectRecord& object,
                                                   uint64_t quota_bytes) = 0;

  // Warm pool members (core/warm_pool.h). Put inserts or replaces.
  virtual Status PutPoolMember(const PoolMemberRecord& member) = 0;
  virtual Result<std::vector<PoolMemberRecord>> ListPoolMembers() = 0;
  virtual Status DeletePoolMember(const std::string& id) = 0;
  // Takes the oldest ready member of `pool_key` out of the pool, in one transaction, so that
  // no two claims get the same one; nullopt when none is ready.
  virtual Result<std::optional<PoolMemberRecord>> ClaimPoolMember(const std::string& pool_key) = 0;

  // Organization secrets. PutSecret creates the secret at version 1 or replaces its value
  // with the next version, in one transaction, and returns what is stored now (`version`,
  // `created_at` of the argument are ignored).
  virtual Result<SecretRecord> PutSecret(const SecretRecord& secret) = 0;
  // NotFound unless the organization has a secret of this name.
  virtual Result<SecretRecord> GetSecret(const std::string& org_id, const std::string& name) = 0;
  // By name.
  virtual Result<std::vector<SecretRecord>> ListSecrets(const std::string& org_id) = 0;
  virtual Status DeleteSecret(const std::string& org_id, const std::string& name) = 0;
};

// Opens (creating and migrating) the SQLite store at `path`.
Result<std::unique_ptr<Store>> OpenSqliteStore(const std::string& path);

}  // namespace adapt::store
