// UsageMeter: writes what compute and storage are used into the ledger while they are used
// (issue 16), and acts on what is left. Every pass:
//  - each sandbox that held compute since its last usage entry gets one entry covering
//    [end of its last entry, now): cpus and MiB reserved x the milliseconds it was
//    provisioning or running, read from its status events, so time it ran while adaptd was
//    down is charged after the restart, and an entry's id (sandbox id + period start) makes a
//    retry or a crash between the write and the next pass charge nothing twice;
//  - each volume gets an entry once `storage_interval` has passed since its last; so does each
//    named checkpoint (its size on disk, rounded up to whole MiB; subject "<sandbox>/<name>"),
//    kept ones of deleted sandboxes included, when a lister of them is set;
//  - each organization touched whose plan has prices: an alert at 80% and at 100% of its
//    credits used (once per credits total), and at a balance of 0 or less its running
//    sandboxes are stopped through `stop` (a durable one hibernates with its checkpoint);
//  - every organization: an alert at 80% and at 100% of each plan limit, once per crossing.
// Each alert is stored with its event (the organization's /v1/events stream, `event: alert`)
// in the transaction that records it; the bus, when set, is told so streams look again.
// A volume being deleted is charged up to its deletion by ChargeDeletedVolume.
// One background thread; Stop (or the destructor) joins it.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "base/status.h"
#include "core/account_service.h"
#include "core/event_bus.h"
#include "store/store.h"

namespace adapt::core {

// A named checkpoint as its storage is metered.
struct MeteredCheckpoint {
  std::string org_id;
  std::string sandbox_id;
  std::string name;
  uint64_t bytes = 0;      // on disk
  int64_t created_at = 0;  // ms since the epoch
};

struct MeteringOptions {
  int interval_seconds = 30;            // --metering-interval-seconds: between passes
  int storage_interval_seconds = 3600;  // --storage-metering-interval-seconds: per volume entry
};

class UsageMeter {
 public:
  // Stops running sandbox `sandbox_id` of `org_id` because the balance is used up. Blocking.
  using StopCompute = std::function<void(const std::string& org_id, const std::string& sandbox_id)>;

  UsageMeter(store::Store& store, AccountService& accounts, MeteringOptions options,
             StopCompute stop);
  ~UsageMeter();

  // Where each pass finds the named checkpoints to charge as storage (CheckpointService's);
  // without it, checkpoints are not metered. Set before Start.
  void set_checkpoint_lister(std::function<std::vector<MeteredCheckpoint>()> lister) {
    checkpoints_ = std::move(lister);
  }
  // Set before Start: told of each alert recorded (Change::Kind::kAccountAlert).
  void set_event_bus(EventBus* bus) { bus_ = bus; }

  // A pass at once (what ran while adaptd was down), then one every interval.
  void Start();
  void Stop();

  // One pass as of `now` (millis). Errors of single entries are logged and retried by the
  // next pass; the first one is returned.
  Status MeterOnce(int64_t now);

  // The storage of `volume`, which is being deleted at `at` (millis), since its last entry:
  // one last entry up to `at` (its id, as every entry's, is the volume and the period start,
  // so a retry writes nothing twice; nothing when the volume is metered up to `at` already).
  // Passes do not meter a volume being deleted, so nothing is charged after this.
  Status ChargeDeletedVolume(const store::VolumeRecord& volume, int64_t at);
  // The storage of `checkpoint`, being deleted at `at`, since its last entry, as
  // ChargeDeletedVolume's: passes write an entry an hour (--storage-metering-interval-seconds),
  // so a checkpoint deleted within the hour of its last one was never charged for it.
  Status ChargeDeletedCheckpoint(const MeteredCheckpoint& checkpoint, int64_t at);

 private:
  Status MeterSandbox(const store::SandboxRecord& sandbox, int64_t now,
                      std::set<std::string>& touched);
  Status MeterVolume(const store::VolumeRecord& volume, int64_t now,
                     std::set<std::string>& touched);
  Status MeterCheckpoint(const MeteredCheckpoint& checkpoint, int64_t now,
                         std::set<std::string>& touched);
  // Writes the checkpoint's entry for [its last entry's end or its making, to) unless that is
  // shorter than `min_millis`. True when it wrote one (an entry of the same period written
  // already is not written again: its id is the subject and the period's start).
  Result<bool> WriteCheckpointEntry(const MeteredCheckpoint& checkpoint, int64_t to,
                                    int64_t min_millis);
  // Writes the volume's entry for [its last entry's end, to) unless that is empty; `min_millis`:
  // the shortest period worth an entry. True when it wrote one. Under volume_mu_.
  Result<bool> WriteVolumeEntry(const store::VolumeRecord& volume, int64_t to, int64_t min_millis);
  // Observes the organization's usage against each limit of its plan: an alert at 80% and at
  // 100% of each, once per crossing (core/limit_alerts.h).
  Status WatchLimits(const std::string& org_id, int64_t now);
  Status Settle(const std::string& org_id, int64_t now,
                const std::vector<store::SandboxRecord>& running);
  void Loop();

  store::Store& store_;
  AccountService& accounts_;
  MeteringOptions options_;
  StopCompute stop_;
  std::function<std::vector<MeteredCheckpoint>()> checkpoints_;
  EventBus* bus_ = nullptr;
  std::mutex volume_mu_;  // a pass's volume entry and a deletion's last one, one at a time
  std::thread thread_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
};

}  // namespace adapt::core
