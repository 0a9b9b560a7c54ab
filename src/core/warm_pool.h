// WarmPool: sandboxes booted ahead of any request, per image and resource shape, so that a
// create claims a ready one instead of booting (core/warm_pool_spec.h says which creates can).
// Members belong to no organization: they live in the store's pool_members table, never in
// sandboxes, until a claim (one store transaction) takes one out; the create then records it
// as its sandbox, with the same id. Refills run on the worker pool one boot at a time.
// A member is recorded before its boot; at start-up every member a previous run left is torn
// down (a SIGKILLed adaptd cannot tell a half-booted member from a ready one cheaply).
// Thread-safe.
#pragma once

#include <boost/asio/thread_pool.hpp>
#include <condition_variable>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/image_catalog.h"
#include "core/warm_pool_spec.h"
#include "net/network_manager.h"
#include "runtime/runtime.h"
#include "store/store.h"

namespace adapt::core {

class WarmPool {
 public:
  // `network` null: members boot without a network and only egress "none" creates fit.
  WarmPool(store::Store& store, runtime::Runtime& runtime, const ImageCatalog& images,
           net::NetworkManager* network, boost::asio::thread_pool& workers,
           std::vector<PoolSpec> specs);

  bool enabled() const { return !specs_.empty(); }
  // Tears down what a previous run left, then starts filling the pools. Blocking (teardown).
  void Start();
  // Stops refilling and tears every member down. Blocking.
  void Shutdown();

  struct Claim {
    std::optional<std::string> id;  // the claimed member (now the caller's sandbox)
    std::string reason;             // why none was claimed
  };
  // Claims a ready member for a create whose normalized config is `config`, with the
  // create's network policy installed. The caller records it as a running sandbox.
  Claim Take(const nlohmann::json& config);
  // A claimed member the caller did not record after all: torn down (and replaced).
  void Discard(const std::string& id);

  // Members per state, for tests and logs: ready count of `key`.
  size_t ReadyCount(const std::string& key);

 private:
  void ScheduleRefill();
  void Refill();
  // Boots one member of `spec`; its row says ready afterwards.
  Status Boot(const PoolSpec& spec, const std::string& id);
  void TearDown(const std::string& id);

  store::Store& store_;
  runtime::Runtime& runtime_;
  const ImageCatalog& images_;
  net::NetworkManager* network_;
  boost::asio::thread_pool& workers_;
  std::vector<PoolSpec> specs_;
  std::mutex mu_;
  std::condition_variable idle_;
  bool refilling_ = false;  // a refill task is queued or booting
  bool stopping_ = false;
  int64_t failed_until_ = 0;  // after a failed boot, no refill before this (ms)
};

}  // namespace adapt::core
