// The SQLite Store's class, shared by the sqlite_*.cc files that implement it, one file per
// resource. Private to src/store: everything else sees only store.h.
#pragma once

#include <SQLiteCpp/SQLiteCpp.h>

#include <atomic>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

#include "store/decode_cache.h"
#include "store/sqlite_failure.h"
#include "store/statement_cache.h"
#include "store/store.h"

namespace adapt::store {

// Conflict when the organization is being deleted (sqlite_org_deletion.cc), for the
// transactions that make what would outlive its deletion.
Status RefuseIfOrgDeleting(SQLite::Database& db, const std::string& org_id);

// What counts against an organization's object storage quota (?1: the organization): its
// objects, and the copies its site and app releases hold.
inline constexpr const char* kStoredBytesQuery =
    "SELECT (SELECT COALESCE(SUM(size), 0) FROM objects WHERE org_id = ?1) + "
    "(SELECT COALESCE(SUM(bytes), 0) FROM site_releases WHERE org_id = ?1) + "
    "(SELECT COALESCE(SUM(size), 0) FROM app_releases WHERE org_id = ?1)";

// kStoredBytesQuery's answer, in the caller's transaction (a quota checked after its write).
inline uint64_t StoredBytes(SQLite::Database& db, const std::string& org_id) {
  SQLite::Statement q(db, kStoredBytesQuery);
  q.bind(1, org_id);
  return q.executeStep() ? static_cast<uint64_t>(q.getColumn(0).getInt64()) : 0;
}

class SqliteStore : public Store {
 public:
  explicit SqliteStore(const std::string& path)
      : db_(path, SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE | SQLite::OPEN_FULLMUTEX) {}

  // Creates or migrates the schema; called once by OpenSqliteStore.
  Status Init();
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
  // Inside the caller's transaction: the dashboard sessions of a deleted key or user, or of a
  // user whose password changed.
  void DeleteDashboardSessionsOf(const std::string& key_id);
  Result<CreateOutcome> CreateSandbox(const SandboxRecord& s,
                                      const std::optional<IdempotencyKey>& idem,
                                      const SandboxLimits& limits) override;
  Result<SandboxRecord> GetSandbox(const std::string& org_id, const std::string& id) override;
  Result<SandboxPage> ListSandboxes(const std::string& org_id, const std::string& query, int limit,
                                    std::optional<int64_t> before_seq) override;
  Result<std::vector<SandboxRecord>> ListSandboxesWithStatus(
      const std::vector<std::string>& statuses) override;
  Result<std::vector<SandboxRecord>> ListExpired(int64_t now) override;
  Status UpdateSandbox(const SandboxRecord& s, const std::vector<std::string>& expected,
                       const SandboxLimits& limits) override;
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
  Status PutEndpoint(const EndpointRecord& e, std::optional<int64_t> max_endpoints) override;
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
  Result<std::optional<std::string>> FindIdempotentCreate(const IdempotencyClaim& claim) override;
  Result<IdempotentCreate> CreateOnce(const IdempotencyClaim& claim,
                                      const std::function<Result<std::string>()>& insert) override;
  Status PurgeIdempotencyKeys(int64_t before) override;
  Result<std::string> PutObject(const ObjectRecord& o) override;
  Result<ObjectRecord> GetObject(const std::string& org_id, const std::string& key) override;
  Result<std::vector<ObjectRecord>> ListObjects(const std::string& org_id,
                                                const std::string& prefix, const std::string& after,
                                                size_t limit) override;
  Result<std::string> DeleteObject(const std::string& org_id, const std::string& key) override;
  Result<std::vector<std::string>> ListReferencedBlobs() override;
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
  Status SetValueSealer(ValueSealer sealer) override;
  Status SetSandboxEnv(const std::string& org_id, const std::string& id,
                       const std::map<std::string, std::string>& vars) override;
  Result<uint64_t> ObjectBytes(const std::string& org_id) override;
  Result<std::string> PutObjectWithinQuota(const ObjectRecord& o, uint64_t quota_bytes) override;

  Status PutVolume(const VolumeRecord& v, std::optional<int64_t> max_gib) override;
  Result<VolumeRecord> GetVolumeByName(const std::string& org_id, const std::string& name) override;
  Result<std::vector<VolumeRecord>> ListVolumes(const std::string& org_id) override;
  Result<std::vector<SandboxRecord>> ListVolumeAttachments(const std::string& org_id,
                                                           const std::string& name) override;
  Status BeginDeleteVolume(const std::string& org_id, const std::string& id) override;
  Status DeleteVolume(const std::string& id) override;
  Result<SecretRecord> PutSecret(const SecretRecord& secret) override;
  Result<SecretRecord> GetSecret(const std::string& org_id, const std::string& name) override;
  Result<std::vector<SecretRecord>> ListSecrets(const std::string& org_id) override;
  Status DeleteSecret(const std::string& org_id, const std::string& name) override;

  Status PutOperation(const OperationRecord& op) override;
  Result<OperationRecord> GetOperation(const std::string& org_id, const std::string& id) override;
  Result<std::vector<OperationRecord>> ListOpenOperations(const std::string& sandbox_id) override;
  Result<std::vector<OperationRecord>> ListAllOpenOperations() override;

  Status PutPoolMember(const PoolMemberRecord& member) override;
  Result<std::vector<PoolMemberRecord>> ListPoolMembers() override;
  Status DeletePoolMember(const std::string& id) override;
  Result<std::optional<PoolMemberRecord>> ClaimPoolMember(const std::string& pool_key) override;

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
  // One claim of ClaimAutomationSlots, inside its transaction; names the runs it wrote events of.
  Status ClaimSlotLocked(const SlotClaim& claim, std::vector<std::string>& changed);
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
  // The claim's earlier object id, nullopt, or Conflict; inside the caller's transaction.
  Result<std::optional<std::string>> FindClaimLocked(const IdempotencyClaim& claim);
  // Records the claim as having made `object_id`, inside the caller's transaction.
  void InsertClaimLocked(const IdempotencyClaim& claim, const std::string& object_id);
  AppReleaseRecord ReadAppRelease(SQLite::Statement& q);
  // Inserts the run, or updates the stored one with its id, inside the caller's transaction;
  // a new status also writes the run's event. True when it did (AnnounceRunEvent after commit).
  static bool UpsertRun(SQLite::Database& db, const RunRecord& r);
  // Deletes the ended runs of one owner (`job_id` or `automation_id`) past its newest `keep`,
  // inside the caller's transaction; returns how many.
  int64_t PruneOwnerRunsLocked(const std::string& job_id, const std::string& automation_id,
                               int keep);
  void AnnounceRunEvent(const std::string& run_id);
  AutomationRecord ReadAutomation(SQLite::Statement& q);
  Result<AutomationRecord> GetAutomationLocked(const std::string& org_id, const std::string& id);
  JobRecord ReadJob(SQLite::Statement& q);
  Result<JobRecord> GetJobLocked(const std::string& org_id, const std::string& id);
  static ImageRecord ReadImage(SQLite::Statement& q);
  static VolumeRecord ReadVolume(SQLite::Statement& q);
  std::vector<SandboxRecord> AttachmentsLocked(const std::string& org_id, const std::string& name);
  static constexpr const char* kImageColumns = "id, org_id, reference, status, data, created_at";
  static EndpointRecord ReadEndpoint(SQLite::Statement& q);
  Result<OAuthGrantRecord> ReadGrantLocked(const std::string& hash, const std::string& kind,
                                           int64_t now);
  // Runs `fn` under the lock, turning SQLite's exceptions into a Status with context.
  template <typename T = Status, typename Fn>
  T Guard(const std::string& what, Fn&& fn) {
    std::lock_guard lock(mu_);
    try {
      return fn();
    } catch (const std::exception& e) {
      return SqliteFailure(what, e);
    }
  }
  static constexpr const char* kCommandColumns =
      "seq, id, org_id, sandbox_id, status, data, created_at, stdout, stderr";
  static CommandRecord ReadCommand(SQLite::Statement& q);
  static OrgRecord ReadOrg(SQLite::Statement& q);
  // Inserts the organization (Conflict when its name is taken), inside the caller's transaction.
  static Status InsertOrg(SQLite::Database& db, const OrgRecord& org);
  Result<OrgRecord> FindOrg(const char* sql, const std::string& arg);
  Result<SandboxRecord> GetLocked(const std::string& org_id, const std::string& id);
  void InsertEvent(const std::string& org_id, const std::string& id, const std::string& status,
                   int64_t at);
  // A row of kSandboxColumns; with `names_only`, of kSandboxListColumns (env: names only).
  SandboxRecord ReadSandbox(SQLite::Statement& q, bool names_only = false);
  // SQLite's update hook: a row of api_keys or orgs changed (inside the writing statement).
  static void OnRowChange(void* self, int op, const char* db, const char* table, long long rowid);
  // Empties auth_reads_ when api_keys or orgs changed since it was filled; under mu_.
  void RefreshAuthReads();
  std::recursive_mutex mu_;  // recursive: CreateOnce runs a create's own method under it
  ValueSealer sealer_;       // guarded by mu_
  std::mutex listener_mu_;
  RunEventListener run_listener_;  // guarded by listener_mu_
  SQLite::Database db_;
  // The hot reads' statements, kept prepared (statement_cache.h); guarded by mu_. Declared
  // after db_: its statements are finalized before the connection closes.
  StatementCache statements_{db_};
  // Every API request checks its key (FindApiKey, then GetOrg): both rows are kept as last
  // read until any row of api_keys or orgs changes. OnRowChange bumps auth_generation_ from
  // inside the statement that writes, so the first read after a revocation, an expiry change
  // or a registration reads the tables again: a revoked key is refused at its next request.
  // Keys not found are not kept. Guarded by mu_ (the generation is atomic: the hook needs no
  // lock of its own).
  struct AuthReads {
    uint64_t generation = 0;
    std::unordered_map<std::string, ApiKeyRecord> keys;  // by key_hash
    std::unordered_map<std::string, OrgRecord> orgs;     // by id
  };
  AuthReads auth_reads_;
  std::atomic<uint64_t> auth_generation_{0};
  // A sandbox row's config and result as their text last decoded (decode_cache.h); guarded by
  // mu_. The environment is not kept (it holds secrets' values, opened per read); its names
  // are, for the list.
  DecodeCache<SandboxConfig> configs_;
  DecodeCache<SandboxResult> results_;
  DecodeCache<std::map<std::string, std::string>> env_names_;
};

}  // namespace adapt::store
