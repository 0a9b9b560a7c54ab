// Where GET /v1/events resumes for a client's Last-Event-ID. The stream replays at most
// kEventReplayLimit of the organization's events: a client further behind (or holding an id
// this store never sent, e.g. from before its database was replaced) is told to list again
// and is followed from now, because replaying thousands of stale changes is slower and less
// exact than one list (list, then watch).
#pragma once

#include <cstdint>
#include <string>

namespace adapt::api {

inline constexpr int kEventReplayLimit = 1000;

struct EventResume {
  int64_t after = 0;   // events after this sequence number are sent
  bool reset = false;  // the client's point is not kept: it must reload its lists
  std::string reason;  // one sentence for the reset event, empty otherwise
};

// `requested`: the client's Last-Event-ID; `latest`: the store's newest sequence number;
// `pending`: how many of the organization's events follow `requested`, counted up to
// kEventReplayLimit + 1; `pruned`: the newest sequence number the events' retention deleted
// (a client behind it may have missed events that are gone, so it lists again too).
EventResume ResumeEvents(int64_t requested, int64_t latest, int pending, int64_t pruned = 0);

}  // namespace adapt::api
