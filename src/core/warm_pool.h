// WarmPool: sandboxes booted ahead of any request, per image and resource shape, so that a
// create claims a ready one instead of booting (core/warm_pool_spec.h says which creates can).
// Members belong to no organization: they live in the store's pool_members table, never in
// sandboxes, until a claim (one store transaction) takes one out; the create then records it
// as its sandbox, with the same id. Refills run on the worker pool one boot at a time, and
// only once no claim has come for a moment: a boot takes both cores of a small host for a
// second, which the sandbox just handed out needs for its first commands.
// A member is ready once its agent has run a first process: the first command of a claimed
// sandbox then finds the agent connected and the dynamic linker and libc already loaded.
// A member is recorded before its boot; at start-up every member a previous run left is torn
// down (a SIGKILLed adaptd cannot tell a half-booted member from a ready one cheaply). A
// member whose teardown fails is kept as "teardown" (counted in no pool) and tried again.
// Thread-safe.
#pragma once

#include <boost/asio/steady_timer.hpp>
#include <boost/asio/thread_pool.hpp>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "core/image_catalog.h"
#include "core/warm_pool_spec.h"
#include "net/network_manager.h"
#include "runtime/runtime.h"
#include "store/pool_store.h"

namespace adapt::core {

class WarmPool {
 public:
  // `network` null: members boot without a network and only egress "none" creates fit.
  WarmPool(store::PoolStore& store, runtime::Runtime& runtime, const ImageCatalog& images,
           net::NetworkManager* network, boost::asio::thread_pool& workers,
           std::vector<PoolSpec> specs);

  bool enabled() const { return !specs_.empty(); }
  // Tears down what a previous run left. Blocking. Until StartFilling nothing is booted.
  void RemoveLeftovers();
  // Starts filling the pools in the background: once adaptd serves, so that a start-up that
  // fails later leaves no member behind.
  void StartFilling();
  // Stops refilling and tears every member down. Blocking.
  void Shutdown();

  struct Claim {
    std::optional<std::string> id;  // the claimed member (now the caller's sandbox)
    std::string reason;             // why none was claimed
  };
  // Claims a ready member for a create whose normalized config is `config`, with the
  // create's network policy installed. The caller records it as a running sandbox.
  Claim Take(const store::SandboxConfig& config);
  // A claimed member the caller did not record after all: torn down (and replaced).
  void Discard(const std::string& id);

  // Members per state, for tests and logs: ready count of `key`.
  size_t ReadyCount(const std::string& key);

 private:
  // Queues a refill, to start once no claim has come for kRefillQuietMs.
  void ScheduleRefill();
  void ArmRefill(int64_t delay_ms);
  void Refill();
  // Boots one member of `spec`; its row says ready afterwards.
  Status Boot(const PoolSpec& spec, const std::string& id);
  // Runs a first process through the member's agent (best effort: without an agent,
  // commands go through runsc exec).
  void WarmUp(const std::string& id);
  void TearDown(const std::string& id);

  store::PoolStore& store_;  // members only: the pool never sees a sandbox row
  runtime::Runtime& runtime_;
  const ImageCatalog& images_;
  net::NetworkManager* network_;
  boost::asio::thread_pool& workers_;
  std::vector<PoolSpec> specs_;
  std::mutex mu_;
  std::condition_variable idle_;
  boost::asio::steady_timer refill_timer_;
  bool filling_ = false;    // StartFilling was called
  bool refilling_ = false;  // a refill is armed, queued or booting
  bool stopping_ = false;
  int64_t failed_until_ = 0;  // after a failed boot, no refill before this (ms)
  int64_t last_claim_ = 0;    // ms
  int64_t wanted_since_ = 0;  // when the armed refill was first wanted (ms)
};

}  // namespace adapt::core
