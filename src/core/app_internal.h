// What app_service.cc and app_replicas.cc share: the label that marks replicas and a wait
// that blocks its thread (deploys and deliveries run on their own threads).
#pragma once

#include <chrono>
#include <future>
#include <memory>

#include "core/waiter.h"

namespace adapt::core::app_internal {

inline constexpr const char* kAppLabel = "platform.app";

// Waits for a callback-style wait to end, on this thread, but gives up once `stopping()`
// says so (asked every 200 ms); false then. The wait's end may still come later: it finds
// only its promise.
template <typename Start, typename Stopping>
bool BlockUnlessStopping(Start start, Stopping stopping) {
  auto done = std::make_shared<std::promise<void>>();
  auto ended = done->get_future();
  start([done](Waiter::End) { done->set_value(); });
  while (ended.wait_for(std::chrono::milliseconds(200)) != std::future_status::ready)
    if (stopping()) return false;
  return true;
}

}  // namespace adapt::core::app_internal
