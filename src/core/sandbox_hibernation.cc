#include "core/sandbox_hibernation.h"

namespace adapt::core {
namespace {

const char* PhaseName(HibernationPhase p) {
  switch (p) {
    case HibernationPhase::kStopping:
      return "stopping";
    case HibernationPhase::kStopped:
      return "stopped";
    case HibernationPhase::kStarting:
      return "starting";
    case HibernationPhase::kNone:
      break;
  }
  return "";
}

HibernationPhase ParsePhase(const std::string& s) {
  if (s == "stopping") return HibernationPhase::kStopping;
  if (s == "stopped") return HibernationPhase::kStopped;
  if (s == "starting") return HibernationPhase::kStarting;
  return HibernationPhase::kNone;
}

}  // namespace

bool KeepsWorkspace(const store::SandboxRecord& r) { return r.config.startup_class == "durable"; }

Hibernation ReadHibernation(const store::SandboxRecord& r) {
  Hibernation h;
  if (!r.result.hibernation) return h;
  const store::HibernationState& j = *r.result.hibernation;
  h.phase = ParsePhase(j.phase);
  h.workspace_kept = j.workspace_kept;
  h.processes_saved = j.processes_saved;
  h.stopped_at = j.stopped_at;
  h.note = j.note;
  h.restart = j.restart;
  return h;
}

void WriteHibernation(store::SandboxRecord& r, const Hibernation& h) {
  if (h.phase == HibernationPhase::kNone) {
    r.result.hibernation.reset();
    return;
  }
  r.result.hibernation = store::HibernationState{
      PhaseName(h.phase), h.workspace_kept, h.processes_saved, h.stopped_at, h.note, h.restart};
}

Status CheckStoppable(const store::SandboxRecord& r) {
  if (r.status == "running") return Status::Ok();
  if (r.status == "hibernated") return Conflict("sandbox " + r.id + " is already stopped");
  return Conflict("sandbox " + r.id + " is " + r.status +
                  "; only a running sandbox can be stopped");
}

Status CheckStartable(const store::SandboxRecord& r) {
  if (r.status == "hibernated") {
    if (ReadHibernation(r).phase == HibernationPhase::kStopped) return Status::Ok();
    return Conflict("sandbox " + r.id + " is still stopping; try again in a moment");
  }
  if (r.status == "running" || r.status == "provisioning")
    return Conflict("sandbox " + r.id + " is already " + r.status);
  return Conflict("sandbox " + r.id + " is " + r.status +
                  "; only a stopped (hibernated) sandbox can be started");
}

std::optional<HibernationSummary> HibernationOf(const store::SandboxRecord& r) {
  Hibernation h = ReadHibernation(r);
  if (h.phase == HibernationPhase::kNone) return std::nullopt;
  const char* processes = !h.workspace_kept ? "discarded" : (h.processes_saved ? "saved" : "lost");
  // While stopping, whether the checkpoint succeeds is not known yet.
  if (h.phase == HibernationPhase::kStopping && h.workspace_kept && !h.restart)
    processes = "saving";
  return HibernationSummary{h.stopped_at, h.workspace_kept ? "kept" : "discarded", processes,
                            h.note.empty() ? std::nullopt : std::optional<std::string>(h.note)};
}

}  // namespace adapt::core
