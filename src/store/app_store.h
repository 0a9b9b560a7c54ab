// AppStore: deployed apps (issue 20), their immutable releases and the replica sandboxes that
// serve them. One domain of Store (store/store.h). Every method is one transaction;
// implementations are thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"

namespace adapt::store {

// A production copy of a sandbox's files: a stable hostname balanced over `replicas` sandboxes
// running its current release.
struct AppRecord {
  std::string id;
  std::string org_id;
  std::string name;
  std::string hostname;
  std::string source_sandbox_id;
  std::string release_id;  // the release replicas run
  int replicas = 1;        // desired
  int64_t created_at = 0;
  int64_t updated_at = 0;
  int64_t seq = 0;  // insertion order, set by the store when listed: cursors use it
};

// One packaged source: a tar of source_path in the object store's blob directory, named by
// its SHA-256, with how it was built and how it starts. Never changed once written.
struct AppReleaseRecord {
  std::string id;
  std::string app_id;
  std::string org_id;
  std::string blob;
  std::string sha256;  // hex, of the tar
  uint64_t size = 0;
  std::string source_path;
  std::string build_command;  // empty: none
  std::string build_path;
  std::optional<int> build_exit_code;
  std::string build_output;  // the build's stdout then stderr, bounded
  std::string start_command;
  int port = 0;
  std::map<std::string, std::string> env;  // sealed at rest like a sandbox's
  // Organization secrets by name: each replica captures their values when it is created.
  std::vector<std::string> secrets;
  // A replica is ready once an HTTP GET of this path on `port` answers 2xx or 3xx ("": once
  // the port accepts a connection), within readiness_timeout_seconds of its start.
  std::string readiness_path;
  int readiness_timeout_seconds = 120;
  // A ready replica's check runs again every readiness_period_seconds; failing it
  // readiness_failure_threshold times in a row takes its traffic until it passes.
  int readiness_period_seconds = 5;
  int readiness_failure_threshold = 3;
  int64_t created_at = 0;
  int64_t seq = 0;  // insertion order, set by the store when read: the release list's cursors
};

// A sandbox serving an app. Written as soon as the sandbox exists, so that a restart finds it.
struct AppReplicaRecord {
  std::string sandbox_id;
  std::string app_id;
  std::string org_id;
  std::string release_id;
  std::string state = "starting";  // "starting" (fetching the release, app booting), "ready"
  int64_t created_at = 0;
  // A replica that was ready: its readiness checks failed in a row, and what the last one got.
  int check_failures = 0;
  std::string check_failure = {};
};

// What supervising an app's replicas learned, kept so that a restart goes on from it: the
// replicas that failed in a row since one was last ready, when the next may start (the
// backoff) and why. Written when a replica fails; gone once one is ready.
struct AppTroubleRecord {
  std::string app_id;
  std::string org_id;
  int failures = 0;
  int64_t retry_at = 0;  // milliseconds since the epoch: no replica starts before
  std::string why;       // "replica sbx_... ended with exit code 7"
  // The replica that failed last (its sandbox may be gone by now).
  std::string replica_sandbox_id;
  std::string replica_release_id;
};

class AppStore {
 public:
  virtual ~AppStore() = default;

  // Inserts or replaces the app (Conflict when another app has its hostname).
  virtual Status PutApp(const AppRecord& app) = 0;
  // NotFound unless the organization ("" : any) has it.
  virtual Result<AppRecord> GetApp(const std::string& org_id, const std::string& id) = 0;
  virtual Result<AppRecord> FindAppByHostname(const std::string& hostname) = 0;
  // The organization's apps ("": every organization's), oldest first.
  virtual Result<std::vector<AppRecord>> ListApps(const std::string& org_id) = 0;
  // Deletes the app with its releases, replica rows and trouble; returns the releases' blobs.
  virtual Result<std::vector<std::string>> DeleteApp(const std::string& org_id,
                                                     const std::string& id) = 0;
  // Deletes the releases of `app_id` when no app of that id exists (a first deploy cut short
  // between recording its release and writing its app); returns their blobs. Nothing, and no
  // blob, when the app exists.
  virtual Result<std::vector<std::string>> DeleteReleasesOfMissingApp(
      const std::string& app_id) = 0;
  // Inserts the release, refusing it (kResourceExhausted, nothing written) when the
  // organization's objects and releases would then hold more than `quota_bytes`
  // (ObjectRecordStore::ObjectBytes; 0: no limit): checked in the insert's transaction, so an
  // object PUT committing meanwhile cannot take the organization past its quota.
  virtual Status PutAppRelease(const AppReleaseRecord& release, uint64_t quota_bytes) = 0;
  // Deletes the oldest releases of `app_id` until at most `max_releases` are left, never the
  // one the app serves nor `keep_id` (a release being rolled out); returns their blobs, which
  // another app's release may share (AppService frees only those none still refers to).
  virtual Result<std::vector<std::string>> PruneAppReleases(const std::string& app_id,
                                                            const std::string& keep_id,
                                                            size_t max_releases) = 0;
  virtual Result<AppReleaseRecord> GetAppRelease(const std::string& app_id,
                                                 const std::string& id) = 0;
  // Newest first.
  virtual Result<std::vector<AppReleaseRecord>> ListAppReleases(const std::string& app_id) = 0;
  // Inserts or replaces the replica (by sandbox id).
  virtual Status PutAppReplica(const AppReplicaRecord& replica) = 0;
  virtual Status DeleteAppReplica(const std::string& sandbox_id) = 0;
  // The app's replicas ("": every app's), oldest first.
  virtual Result<std::vector<AppReplicaRecord>> ListAppReplicas(const std::string& app_id) = 0;
  // Inserts or replaces the app's trouble (by app id).
  virtual Status PutAppTrouble(const AppTroubleRecord& trouble) = 0;
  // Nothing to delete is no error.
  virtual Status DeleteAppTrouble(const std::string& app_id) = 0;
  // Every app's.
  virtual Result<std::vector<AppTroubleRecord>> ListAppTroubles() = 0;
};

}  // namespace adapt::store
