#include "core/sandbox_hibernation.h"

#include "base/time.h"

namespace adapt::core {
namespace {

using nlohmann::json;

constexpr const char* kKey = "hibernation";

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

bool KeepsWorkspace(const store::SandboxRecord& r) {
  return r.config.is_object() && r.config.value("startupClass", "instant") == "durable";
}

Hibernation ReadHibernation(const store::SandboxRecord& r) {
  Hibernation h;
  if (!r.result.is_object() || !r.result.contains(kKey) || !r.result[kKey].is_object()) return h;
  const json& j = r.result[kKey];
  h.phase = ParsePhase(j.value("phase", ""));
  h.workspace_kept = j.value("workspaceKept", false);
  h.processes_saved = j.value("processesSaved", false);
  h.stopped_at = j.value("stoppedAt", int64_t{0});
  h.note = j.value("note", "");
  h.restart = j.value("restart", false);
  return h;
}

void WriteHibernation(store::SandboxRecord& r, const Hibernation& h) {
  if (!r.result.is_object()) r.result = json::object();
  if (h.phase == HibernationPhase::kNone) {
    r.result.erase(kKey);
    return;
  }
  r.result[kKey] = {{"phase", PhaseName(h.phase)},
                    {"workspaceKept", h.workspace_kept},
                    {"processesSaved", h.processes_saved},
                    {"stoppedAt", h.stopped_at},
                    {"note", h.note},
                    {"restart", h.restart}};
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

json HibernationView(const store::SandboxRecord& r) {
  Hibernation h = ReadHibernation(r);
  if (h.phase == HibernationPhase::kNone) return nullptr;
  const char* processes = !h.workspace_kept ? "discarded" : (h.processes_saved ? "saved" : "lost");
  // While stopping, whether the checkpoint succeeds is not known yet.
  if (h.phase == HibernationPhase::kStopping && h.workspace_kept && !h.restart)
    processes = "saving";
  return {{"stoppedAt", FormatRfc3339(h.stopped_at)},
          {"workspace", h.workspace_kept ? "kept" : "discarded"},
          {"processes", processes},
          {"note", h.note.empty() ? json(nullptr) : json(h.note)}};
}

}  // namespace adapt::core
