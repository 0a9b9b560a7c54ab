// The stop/start state of a sandbox, kept in its record (result.hibernation) so that a
// restarted adaptd knows how far a stop or start got.
//
//   running --stop--> hibernated (phase stopping) --compute released--> hibernated (stopped)
//   hibernated (stopped) --start--> provisioning (phase starting) --booted--> running
//
// A durable sandbox is checkpointed (processes, memory and files come back at start); an
// instant one loses its writable layer and boots fresh from its image at start.
#pragma once

#include <cstdint>
#include <optional>
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

// What a stop kept (API.md `hibernation`).
struct HibernationSummary {
  int64_t stopped_at = 0;  // ms since epoch
  std::string workspace;   // "kept" or "discarded"
  std::string processes;   // "saved", "saving", "lost" or "discarded"
  std::optional<std::string> note;

  bool operator==(const HibernationSummary&) const = default;
};

// Unset unless the sandbox is hibernated or starting.
std::optional<HibernationSummary> HibernationOf(const store::SandboxRecord& r);

}  // namespace adapt::core
