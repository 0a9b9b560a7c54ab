#include "api/event_resume.h"

namespace adapt::api {

EventResume ResumeEvents(int64_t requested, int64_t latest, int pending, int64_t pruned) {
  if (requested > latest) {
    return {latest, true,
            "Last-Event-ID " + std::to_string(requested) +
                " is newer than any event this server kept; list again, then follow from here"};
  }
  if (requested < pruned) {
    return {latest, true,
            "Last-Event-ID " + std::to_string(requested) +
                " is older than the events kept (--event-retention-seconds); list again, then "
                "follow from here"};
  }
  if (pending > kEventReplayLimit) {
    return {latest, true,
            "Last-Event-ID " + std::to_string(requested) + " is more than " +
                std::to_string(kEventReplayLimit) +
                " events old, older than what the stream replays; list again, then follow from "
                "here"};
  }
  return {requested, false, ""};
}

}  // namespace adapt::api
