// VolumeService: persistent storage (/v1/storage, the storage MCP tools, durable sandboxes'
// /workspace). Each volume is recorded before its image is made and marked before it is
// removed, so a restarted adaptd remounts the ready ones and removes what it half-made.
// Thread-safe; calls block on mkfs/mount (call from a worker thread).
#pragma once

#include <functional>
#include <mutex>
#include <optional>
#include <string>

#include "base/list_cursor.h"
#include "base/status.h"
#include "storage/volume_disk.h"
#include "storage/volume_request.h"
#include "store/volume_store.h"

namespace adapt::storage {

struct VolumeOptions {
  std::string root;        // where images and mount points live (<state>/storage/volumes)
  std::string master_key;  // raw bytes (see volume_key.h)
};

class VolumeService {
 public:
  VolumeService(store::VolumeStore& store, VolumeOptions options);

  Status Init();
  // Remounts every ready volume (re-adding its key) and removes half-made or half-deleted
  // ones and files no record owns. Run before the API answers.
  void Reconcile();

  // At a clean stop: unmounts the volumes no sandbox uses (the others stay mounted for the
  // sandboxes that outlive adaptd; the next start opens them all again).
  void Shutdown();

  // The GiB of persistent storage an organization's plan allows (nullopt: no limit), asked
  // each time a volume is made and checked in the transaction that records it. Set before
  // serving; without it, no plan limit applies.
  using StorageLimit = std::function<Result<std::optional<int64_t>>(const std::string& org_id)>;
  void set_storage_limit(StorageLimit limit) { storage_limit_ = std::move(limit); }
  // Told of each volume the moment its deletion begins (millis), right after the transaction
  // that marks it deleting: metering charges its storage up to then (core/usage_meter.h).
  // Must not call back into this service. Set before serving.
  using Deleting = std::function<void(const store::VolumeRecord& volume, int64_t at)>;
  void set_on_deleting(Deleting on_deleting) { on_deleting_ = std::move(on_deleting); }

  // Conflict when the name is taken, ResourceExhausted past the limit. With `idempotency`
  // (scope "volume"): a key the organization already used answers the volume it made (or
  // Conflict for another request); a new one is recorded with the volume's ready record.
  Result<Volume> Create(const std::string& org_id, const CreateVolumeRequest& request,
                        const std::optional<store::IdempotencyKey>& idempotency = {});
  // The organization's volumes, newest first, a page at a time; the default volume is made on
  // first use. InvalidArgument for a bad limit or cursor.
  Result<VolumeList> List(const std::string& org_id, const PageRequest& page = {});
  Result<Volume> Get(const std::string& org_id, const std::string& name);
  // Permanently deletes `name` when `confirm` is exactly it, it is not the default volume
  // and no sandbox uses it.
  Status Delete(const std::string& org_id, const std::string& name, const std::string& confirm);
  // Every volume of an organization being deleted (core/org_deletion.h), the default one too;
  // refused while a sandbox uses one.
  Status DeleteAllOf(const std::string& org_id);

  // For a durable sandbox's create request: `name` exists (the default is made when
  // needed) and is ready. Errors name the field "storage".
  Status CheckUsable(const std::string& org_id, const std::string& name);
  // For its provisioning: opens the volume and returns the host directory to bind-mount at
  // /workspace.
  Result<std::string> Attach(const std::string& org_id, const std::string& name);
  // For a read of its files from the host (core/storage_files.h): as Attach, but a read makes
  // nothing, the default volume included: NotFound when it was never made.
  Result<std::string> OpenForReading(const std::string& org_id, const std::string& name);

 private:
  Result<store::VolumeRecord> FindLocked(const std::string& org_id, const std::string& name);
  Result<store::VolumeRecord> MakeLocked(const std::string& org_id, const std::string& name,
                                         int64_t size_mib,
                                         const std::optional<store::IdempotencyClaim>& claim = {});
  Status OpenLocked(store::VolumeRecord& v);
  // The workspace directory of the volume `found`, opened when ready.
  Result<std::string> WorkspaceLocked(Result<store::VolumeRecord> found, const std::string& name);
  void RemoveLocked(const store::VolumeRecord& v);
  Volume View(const store::VolumeRecord& v);
  VolumePaths PathsOf(const std::string& id) const { return VolumePaths(options_.root, id); }

  store::VolumeStore& store_;
  VolumeOptions options_;
  StorageLimit storage_limit_;
  Deleting on_deleting_;
  std::mutex mu_;
};

}  // namespace adapt::storage
