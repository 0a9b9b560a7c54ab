// MemoryStore: the Store held in memory, for unit tests of the core (sandbox lifecycle, warm
// pool, commands) that must run in milliseconds without a database file. It keeps the
// contracts of store.h that callers rely on: every method is one atomic step under one lock
// (the transaction), ids and names are unique where SQLite's schema makes them so, a status
// change writes its event, idempotency keys replay, caps and quotas are counted in the step
// that inserts. The store tests run against it and SQLite alike (StoreTest/Memory and /Sqlite).
// Environments are kept in plaintext (nothing is at rest); a deleted sandbox's values are
// dropped as in SQLite. A test can make writes fail (a full disk, a lost database) with
// FailWrites. Thread-safe.
#pragma once

#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "store/sandbox_limit_check.h"
#include "store/store.h"

namespace adapt::store {

class MemoryStore : public Store {
 public:
  // Fault injection: every write (a call that would change something) returns `fault` and
  // changes nothing until FailWrites(std::nullopt). Reads still answer.
  void FailWrites(std::optional<Status> fault) {
    std::lock_guard lock(mu_);
    write_fault_ = std::move(fault);
  }

  Result<OrgRecord> CreateOrg(const OrgRecord& org) override;
  Result<OrgRecord> GetOrg(const std::string& id) override;
  Result<OrgRecord> FindOrgByName(const std::string& name) override;
  Status CloseOrg(const std::string& org_id, int64_t now) override;
  Status PurgeOrg(const std::string& org_id) override;
  Result<std::vector<OrgRecord>> ListOrgs() override;
  Status CreateApiKey(const ApiKeyRecord& k) override;
  Result<ApiKeyRecord> FindApiKey(const std::string& key_hash) override;
  Result<std::vector<ApiKeyRecord>> ListApiKeys(const std::string& org_id) override;
  Status DeleteApiKey(const std::string& org_id, const std::string& key_id) override;

  Result<CreateOutcome> CreateSandbox(const SandboxRecord& s,
                                      const std::optional<IdempotencyKey>& idem,
                                      const SandboxLimits& limits = {}) override;
  Result<SandboxRecord> GetSandbox(const std::string& org_id, const std::string& id) override;
  Result<SandboxPage> ListSandboxes(const std::string& org_id, const std::string& query, int limit,
                                    std::optional<int64_t> before_seq) override;
  Result<std::vector<SandboxRecord>> ListSandboxesWithStatus(
      const std::vector<std::string>& statuses) override;
  Result<std::vector<SandboxRecord>> ListExpired(int64_t now) override;
  Status UpdateSandbox(const SandboxRecord& s, const std::vector<std::string>& expected,
                       const SandboxLimits& limits = {}) override;
  Result<std::optional<std::string>> FindIdempotentCreate(const IdempotencyClaim& claim) override;
  Result<IdempotentCreate> CreateOnce(const IdempotencyClaim& claim,
                                      const std::function<Result<std::string>()>& insert) override;
  Status PurgeIdempotencyKeys(int64_t before) override;
  Status SetValueSealer(ValueSealer sealer) override;
  Status SetSandboxEnv(const std::string& org_id, const std::string& id,
                       const std::map<std::string, std::string>& vars) override;

  Result<std::vector<EventRecord>> ListEvents(const std::string& org_id,
                                              const std::string& sandbox_id, int64_t after_seq,
                                              int limit) override;
  Result<int64_t> LatestEventSeq() override;
  Status AppendAppEvent(const EventRecord& e) override;
  Result<int64_t> PruneEvents(int64_t before, int max_rows) override;
  Result<int64_t> PrunedEventSeq() override;
  void SetRunEventListener(RunEventListener listener) override;

  Status PutCommand(const CommandRecord& c) override;
  Result<CommandRecord> GetCommand(const std::string& org_id, const std::string& sandbox_id,
                                   const std::string& id) override;
  Result<CommandPage> ListCommands(const std::string& org_id, const std::string& sandbox_id,
                                   int limit, std::optional<int64_t> before_seq) override;
  Result<std::vector<CommandRecord>> ListCommandsWithStatus(const std::string& status) override;

  Status PutNetwork(const NetworkRecord& n) override;
  Result<std::vector<NetworkRecord>> ListNetworks() override;
  Result<NetworkRecord> GetNetworkBySlot(int64_t slot) override;
  Status DeleteNetwork(const std::string& sandbox_id) override;
  Status UpdateNetworkPolicy(const std::string& sandbox_id,
                             const NetworkPolicyRecord& policy) override;

  Status PutEndpoint(const EndpointRecord& e,
                     std::optional<int64_t> max_endpoints = std::nullopt) override;
  Result<std::vector<EndpointRecord>> ListEndpoints(const std::string& org_id,
                                                    const std::string& sandbox_id) override;
  Result<EndpointRecord> FindEndpointByHostname(const std::string& hostname) override;
  Status DeleteEndpoint(const std::string& org_id, const std::string& id) override;
  Result<std::vector<std::string>> DeleteEndpointsOfSandbox(const std::string& sandbox_id) override;

  Status CreateOAuthClient(const OAuthClientRecord& c) override;
  Result<OAuthClientRecord> GetOAuthClient(const std::string& id) override;
  Result<int64_t> PruneOAuthClients(int64_t registered_before, int64_t now) override;
  Status PutOAuthGrant(const OAuthGrantRecord& g, size_t max_clients_of_org = 0) override;
  Result<OAuthGrantRecord> FindOAuthGrant(const std::string& hash, const std::string& kind,
                                          int64_t now) override;
  Result<OAuthGrantRecord> TakeOAuthGrant(const std::string& hash, const std::string& kind,
                                          int64_t now) override;

  Status PutImage(const ImageRecord& r) override;
  Status InsertImageWithinCaps(const ImageRecord& r, int max_images, int max_in_progress) override;
  Result<ImageRecord> GetImage(const std::string& org_id, const std::string& id) override;
  Result<std::vector<ImageRecord>> ListImages(const std::string& org_id) override;
  Status DeleteImage(const std::string& org_id, const std::string& id) override;

  Status PutVolume(const VolumeRecord& v, std::optional<int64_t> max_gib = std::nullopt) override;
  Result<VolumeRecord> GetVolumeByName(const std::string& org_id, const std::string& name) override;
  Result<std::vector<VolumeRecord>> ListVolumes(const std::string& org_id) override;
  Result<std::vector<SandboxRecord>> ListVolumeAttachments(const std::string& org_id,
                                                           const std::string& name) override;
  Status BeginDeleteVolume(const std::string& org_id, const std::string& id) override;
  Status DeleteVolume(const std::string& id) override;

  Result<std::string> PutObject(const ObjectRecord& o) override;
  Result<std::string> PutObjectWithinQuota(const ObjectRecord& o, uint64_t quota_bytes) override;
  Result<ObjectRecord> GetObject(const std::string& org_id, const std::string& key) override;
  Result<std::vector<ObjectRecord>> ListObjects(const std::string& org_id,
                                                const std::string& prefix, const std::string& after,
                                                size_t limit) override;
  Result<std::string> DeleteObject(const std::string& org_id, const std::string& key) override;
  Result<std::vector<std::string>> ListReferencedBlobs() override;
  Result<uint64_t> ObjectBytes(const std::string& org_id) override;

  Status PutStorageToken(const StorageTokenRecord& t) override;
  Result<StorageTokenRecord> GetStorageToken(const std::string& id) override;
  Result<std::vector<StorageTokenRecord>> ListStorageTokens(const std::string& org_id) override;
  Status RevokeStorageToken(const std::string& org_id, const std::string& id, int64_t now) override;

  Status PutSite(const SiteRecord& site, const SiteReleaseRecord* new_release) override;
  Result<std::vector<std::string>> PublishSite(const SiteRecord& site,
                                               const SiteReleaseRecord& release,
                                               const SitePublishLimits& limits) override;
  Result<SiteRecord> GetSite(const std::string& org_id, const std::string& id) override;
  Result<SiteRecord> FindSiteByHostname(const std::string& hostname) override;
  Result<std::vector<SiteRecord>> ListSites(const std::string& org_id) override;
  Result<SiteReleaseRecord> GetSiteRelease(const std::string& id) override;
  Result<std::vector<std::string>> DeleteSite(const std::string& org_id,
                                              const std::string& id) override;

  Status PutPoolMember(const PoolMemberRecord& member) override;
  Result<std::vector<PoolMemberRecord>> ListPoolMembers() override;
  Status DeletePoolMember(const std::string& id) override;
  Result<std::optional<PoolMemberRecord>> ClaimPoolMember(const std::string& pool_key) override;

  Result<SecretRecord> PutSecret(const SecretRecord& secret) override;
  Result<SecretRecord> GetSecret(const std::string& org_id, const std::string& name) override;
  Result<std::vector<SecretRecord>> ListSecrets(const std::string& org_id) override;
  Status DeleteSecret(const std::string& org_id, const std::string& name) override;
  Status CreateUser(const UserRecord& user) override;
  Status CreateOrgWithUser(const OrgRecord& org, const UserRecord& user) override;
  Result<UserRecord> FindUserByEmail(const std::string& email) override;
  Result<std::vector<UserRecord>> ListUsers(const std::string& org_id) override;
  Result<UserRecord> GetUser(const std::string& id) override;
  Result<UserRecord> DeleteUser(const std::string& id) override;
  Status SetUserPassword(const std::string& id, const std::string& password_hash) override;
  Status CreateDashboardSession(const DashboardSessionRecord& s, int64_t max_open) override;
  Result<DashboardSessionRecord> FindDashboardSession(const std::string& token_hash,
                                                      int64_t now) override;
  Status RevokeDashboardSession(const std::string& token_hash, int64_t now) override;

  Status PutOperation(const OperationRecord& op) override;
  Result<OperationRecord> GetOperation(const std::string& org_id, const std::string& id) override;
  Result<std::vector<OperationRecord>> ListOpenOperations(const std::string& sandbox_id) override;
  Result<std::vector<OperationRecord>> ListAllOpenOperations() override;

  Status PutPlan(const PlanRecord& plan) override;
  Result<bool> InsertPlanIfAbsent(const PlanRecord& plan) override;
  Result<PlanRecord> GetPlan(const std::string& id) override;
  Result<std::vector<PlanRecord>> ListPlans() override;
  Result<BillingAccountRecord> GetBillingAccount(const std::string& org_id) override;
  Result<BillingAccountRecord> EnsureBillingAccount(const BillingAccountRecord& account) override;
  Status SetAccountPlan(const std::string& org_id, const std::string& plan_id) override;
  Result<LedgerEntryRecord> AppendLedgerEntry(const LedgerEntryRecord& entry) override;
  Result<std::vector<LedgerEntryRecord>> ListLedger(const std::string& org_id,
                                                    std::optional<int64_t> after_seq = {},
                                                    int64_t limit = 0) override;
  Result<int64_t> Balance(const std::string& org_id, int64_t now) override;
  Result<OrgUsageRecord> GetOrgUsage(const std::string& org_id) override;
  Result<int64_t> MeteredUntil(const std::string& subject_id) override;
  Result<int64_t> MeterThrough() override;
  Status SetMeterThrough(int64_t at) override;
  Result<std::vector<SandboxRecord>> SandboxesToMeter(int64_t since) override;
  Result<std::vector<EventRecord>> SandboxEvents(const std::string& sandbox_id) override;
  Result<LedgerTotalsRecord> LedgerTotals(const std::string& org_id, int64_t now) override;
  Result<UsageTotalRecord> UsageOfSubject(const std::string& org_id,
                                          const std::string& subject_id) override;
  Result<std::vector<UsageTotalRecord>> UsageBetween(const std::string& org_id, int64_t from,
                                                     int64_t to) override;
  Result<std::vector<LimitAlertRecord>> ObserveLimits(
      const std::string& org_id, const std::vector<LimitAlertRecord>& observed) override;
  Result<std::vector<LimitAlertRecord>> ListLimitAlerts(const std::string& org_id,
                                                        int limit) override;
  Result<bool> RecordAccountAlert(const AccountAlertRecord& alert) override;
  Result<std::vector<AccountAlertRecord>> ListAccountAlerts(const std::string& org_id,
                                                            int limit) override;
  Result<std::map<std::pair<std::string, std::string>, int64_t>> CountSandboxesByStatus() override;

  Result<JobSubmitOutcome> CreateJob(const JobRecord& job,
                                     std::optional<int64_t> max_queued) override;
  Result<JobRecord> GetJob(const std::string& org_id, const std::string& id) override;
  Result<JobPage> ListJobs(const std::string& org_id, int limit,
                           std::optional<int64_t> before_seq) override;
  Result<std::vector<JobRecord>> ListQueueHeads() override;
  Result<std::vector<JobRecord>> ListJobsWithStatus(
      const std::vector<std::string>& statuses) override;
  Status UpdateJob(const JobRecord& job, const std::vector<std::string>& expected) override;
  Status DeleteJob(const std::string& org_id, const std::string& id,
                   const std::vector<std::string>& deletable) override;
  Status PutRun(const RunRecord& run) override;
  Result<RunRecord> GetRun(const std::string& org_id, const std::string& id) override;
  Result<RunPage> ListRuns(const std::string& org_id, const RunFilter& filter, int limit,
                           std::optional<int64_t> before_seq) override;
  Result<std::vector<RunRecord>> ListRunsWithStatus(
      const std::vector<std::string>& statuses) override;
  Result<int64_t> PruneRuns(const std::string& job_id, const std::string& automation_id,
                            int64_t ended_before, int keep) override;
  Status PutDatabase(const DatabaseRecord& record) override;
  Result<DatabaseRecord> GetDatabase(const std::string& org_id) override;
  Result<std::vector<DatabaseRecord>> ListDatabases() override;
  Status DeleteDatabase(const std::string& org_id) override;

  Status PutApp(const AppRecord& app) override;
  Result<AppRecord> GetApp(const std::string& org_id, const std::string& id) override;
  Result<AppRecord> FindAppByHostname(const std::string& hostname) override;
  Result<std::vector<AppRecord>> ListApps(const std::string& org_id) override;
  Result<std::vector<std::string>> DeleteApp(const std::string& org_id,
                                             const std::string& id) override;
  Result<std::vector<std::string>> DeleteReleasesOfMissingApp(const std::string& app_id) override;
  Result<std::vector<std::string>> PruneAppReleases(const std::string& app_id,
                                                    const std::string& keep_id,
                                                    size_t max_releases) override;
  Status PutAppRelease(const AppReleaseRecord& release, uint64_t quota_bytes) override;
  Result<AppReleaseRecord> GetAppRelease(const std::string& app_id, const std::string& id) override;
  Result<std::vector<AppReleaseRecord>> ListAppReleases(const std::string& app_id) override;
  Status PutAppReplica(const AppReplicaRecord& replica) override;
  Status DeleteAppReplica(const std::string& sandbox_id) override;
  Result<std::vector<AppReplicaRecord>> ListAppReplicas(const std::string& app_id) override;
  Status PutAppTrouble(const AppTroubleRecord& trouble) override;
  Status DeleteAppTrouble(const std::string& app_id) override;
  Result<std::vector<AppTroubleRecord>> ListAppTroubles() override;

  Status CreateAutomation(const AutomationRecord& a, int max_per_org) override;
  Result<AutomationRecord> GetAutomation(const std::string& org_id, const std::string& id) override;
  Result<std::vector<AutomationRecord>> ListAutomations(const std::string& org_id) override;
  Status UpdateAutomation(const AutomationRecord& a, int64_t expected_version) override;
  Status DeleteAutomation(const std::string& org_id, const std::string& id) override;
  Result<std::optional<int64_t>> NextAutomationDue() override;
  Result<std::vector<AutomationRecord>> ListDueAutomations(int64_t now, int limit) override;
  std::vector<Status> ClaimAutomationSlots(const std::vector<SlotClaim>& claims) override;
  Result<AutomationRecord> RecordAutomationOutcome(const std::string& id, bool failed,
                                                   int pause_after, const std::string& reason,
                                                   int64_t now) override;
  Result<int> PauseAutomationsOfSandbox(const std::string& sandbox_id, const std::string& reason,
                                        int64_t now) override;
  Result<int> FollowReplacedSandbox(const std::string& from, const std::string& to,
                                    int64_t now) override;
  Result<std::vector<AutomationRecord>> ListAutomationsOfSandbox(
      const std::string& sandbox_id) override;
  Result<int> MakeControllersDue(int64_t now) override;

 private:
  struct IdempotencyEntry {
    std::string body_hash;
    std::string object_id;
    int64_t created_at = 0;
  };
  // The claim's earlier object id, nullopt, or Conflict.
  Result<std::optional<std::string>> FindClaimLocked(const IdempotencyClaim& claim) const;

  std::optional<Status> WriteFaultLocked() const { return write_fault_; }
  // PutCommand's trim of `c`'s sandbox's ended commands (CommandStore::PutCommand). Under mu_.
  void TrimEndedCommandsLocked(const CommandRecord& c);
  // Conflict when the organization is being deleted (memory_store_org_deletion.cc).
  Status RefuseIfOrgDeletingLocked(const std::string& org_id) const;
  // Drops the OAuth grants and dashboard sessions of `key_id` (a deleted key's or user's, or
  // a user's whose password changed).
  void DropGrantsOfLocked(const std::string& key_id);
  void InsertEventLocked(const std::string& org_id, const std::string& id,
                         const std::string& status, int64_t at);
  // Inserts or replaces the run; a new status appends its event (true: announce it after
  // unlocking).
  bool UpsertRunLocked(const RunRecord& run);
  void AppendRunEventLocked(const RunRecord& run);
  Status ClaimAutomationSlotLocked(const SlotClaim& claim);
  // PruneRuns under mu_.
  int64_t PruneRunsLocked(const std::string& job_id, const std::string& automation_id,
                          int64_t ended_before, int keep);
  void AnnounceRunEvent(const std::string& run_id);
  std::vector<SandboxRecord> AttachmentsLocked(const std::string& org_id, const std::string& name);
  SandboxRecord* FindSandboxLocked(const std::string& id);
  LiveTotals CountLiveLocked(const std::string& org_id, const std::string& except_id);

  std::mutex listener_mu_;
  RunEventListener run_listener_;  // guarded by listener_mu_
  std::recursive_mutex mu_;        // recursive: CreateOnce runs a create's own method under it
  // The largest event seq PruneEvents deleted.
  int64_t pruned_event_seq_ = 0;
  int64_t next_seq_ = 1;  // one counter for every table: only the order within one matters
  std::vector<OrgRecord> orgs_;
  std::vector<ApiKeyRecord> keys_;
  std::vector<SandboxRecord> sandboxes_;  // by seq
  // by (org, scope, key)
  std::map<std::tuple<std::string, std::string, std::string>, IdempotencyEntry> idempotency_;
  std::vector<EventRecord> events_;                // by seq
  std::vector<CommandRecord> commands_;            // by seq
  std::map<std::string, NetworkRecord> networks_;  // by sandbox
  std::vector<EndpointRecord> endpoints_;
  std::vector<OAuthClientRecord> oauth_clients_;
  std::map<std::string, OAuthGrantRecord> oauth_grants_;                 // by hash
  std::vector<ImageRecord> images_;                                      // insertion order
  std::vector<VolumeRecord> volumes_;                                    // insertion order
  std::map<std::pair<std::string, std::string>, ObjectRecord> objects_;  // (org, key)
  std::vector<StorageTokenRecord> tokens_;
  std::vector<SiteRecord> sites_;  // insertion order
  std::map<std::string, SiteReleaseRecord> releases_;
  std::vector<AppRecord> apps_;                 // insertion order
  std::vector<AppReleaseRecord> app_releases_;  // insertion order
  std::vector<AppReplicaRecord> app_replicas_;  // insertion order
  std::vector<AppTroubleRecord> app_troubles_;
  std::vector<PoolMemberRecord> pool_;
  std::map<std::pair<std::string, std::string>, SecretRecord> secrets_;  // (org, name)
  std::map<std::string, DatabaseRecord> databases_;                      // by org
  std::vector<UserRecord> users_;                                        // insertion order
  std::map<std::string, DashboardSessionRecord> dashboard_sessions_;     // by token hash
  std::vector<OperationRecord> operations_;                              // insertion order
  std::map<std::string, PlanRecord> plans_;                              // by id
  std::map<std::string, BillingAccountRecord> accounts_;                 // by org
  std::vector<LedgerEntryRecord> ledger_;                                // appended
  std::vector<JobRecord> jobs_;                                          // by seq
  std::vector<RunRecord> runs_;                                          // by seq
  std::vector<AutomationRecord> automations_;                            // by creation
  std::vector<AccountAlertRecord> alerts_;
  std::vector<LimitAlertRecord> limit_alerts_;
  std::set<std::tuple<std::string, std::string, int>> limits_reached_;  // (org, limit, percent)
  int64_t meter_through_ = 0;
  ValueSealer sealer_;
  std::optional<Status> write_fault_;
};

}  // namespace adapt::store
