// The stop/start state of a sandbox, kept in its record (result["hibernation"]) so that a
// restarted adaptd knows how far a stop or start got.
//
//   running --stop--> hibernated (phase stopping) --compute released--> hibernated (stopped)
//   hibernated (stopped) --start--> provisioning (phase starting) --booted--> running
//
// A durable sandbox is checkpointed (processes, memory and files come back at start); an
// instant one loses its writable layer and boots fresh from its image at start.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "base/status.h"
#include "store/records.h"

namespace adapt::core {

enum class HibernationPhase { kNone, kStopping, kStopped, kStarting };

struct Hibernation {
  HibernationPhase phase = HibernationPhase::kNone;
  bool workspace_kept = false;   // durable: the writable layer stays
  bool processes_saved = false;  // a checkpoint holds the processes and memory
  int64_t stopped_at = 0;        // ms since epoch
  std::string note;              // why the processes were not saved, when they were not
  bool restart = false;          // a restart: no checkpoint, the processes end, a start follows
};

// Durable sandboxes keep their workspace (and are checkpointed) across stop/start.
bool KeepsWorkspace(const store::SandboxRecord& r);

Hibernation ReadHibernation(const store::SandboxRecord& r);
// kNone removes the state from the record.
void WriteHibernation(store::SandboxRecord& r, const Hibernation& h);

// Conflict naming the status unless a stop may begin (the sandbox is running).
Status CheckStoppable(const store::SandboxRecord& r);
// Conflict naming the status unless a start may begin (hibernated, stop finished).
Status CheckStartable(const store::SandboxRecord& r);

// The wire form (API.md `hibernation`): null unless the sandbox is hibernated or starting.
//   {"stoppedAt", "workspace": "kept"|"discarded", "processes": "saved"|"lost"|"discarded",
//    "note"}
nlohmann::json HibernationView(const store::SandboxRecord& r);

}  // namespace adapt::core
