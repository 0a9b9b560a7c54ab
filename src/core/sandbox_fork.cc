// SandboxService::Fork: a new sandbox from a named checkpoint of a durable sandbox. The fork is
// recorded as a sandbox starting from a checkpoint (provisioning, hibernation phase starting);
// SandboxLifecycle's provisioning copies the checkpoint into it (Runtime::SeedFromCheckpoint)
// and restores it with its own network namespace, address and egress rules, as a start does.
#include <boost/asio/post.hpp>

#include "base/background_work.h"
#include "base/fault_point.h"
#include "base/ids.h"
#include "base/log.h"
#include "base/time.h"
#include "core/operation.h"
#include "core/sandbox_hibernation.h"
#include "core/sandbox_limits.h"
#include "core/sandbox_operations.h"
#include "core/sandbox_service.h"
#include "storage/volume_request.h"

namespace adapt::core {
namespace {

struct ForkSource {
  std::string sandbox_id;
  std::string name;
};

Result<ForkSource> ParseFrom(const std::string& from, const std::string& field) {
  size_t slash = from.find('/');
  Status malformed = InvalidArgument(
      field, field + " must be \"<sandboxId>/<checkpoint name>\", e.g. \"sbx_.../before-upgrade\"");
  if (slash == std::string::npos) return malformed;
  ForkSource out{from.substr(0, slash), from.substr(slash + 1)};
  if (out.sandbox_id.empty() || out.sandbox_id.size() > 64 || out.name.empty()) return malformed;
  if (!storage::ValidateVolumeName(out.name, field).ok())
    return InvalidArgument(field, "the checkpoint name in " + field +
                                      " must be 1 to 63 lower-case letters, digits or '-', "
                                      "starting and ending with a letter or digit");
  return out;
}

}  // namespace

Result<PowerChange> SandboxService::Fork(const Principal& who, const ForkSandbox& req,
                                         const std::optional<IdempotencyRequest>& idempotency,
                                         const FieldNames& names) {
  const std::string field = names("from_checkpoint");
  if (idempotency &&
      (idempotency->key.empty() || idempotency->key.size() > limits::kMaxIdempotencyKeyBytes))
    return InvalidArgument("Idempotency-Key", "Idempotency-Key must be 1 to 255 characters");
  ASSIGN_OR_RETURN(ForkSource from, ParseFrom(req.from_checkpoint, field));
  // Another organization's sandbox reads as absent, before anything is touched.
  Status absent(Code::kNotFound,
                "checkpoint '" + from.name + "' of sandbox " + from.sandbox_id + " not found",
                field);
  if (!IsValidId(from.sandbox_id, "sbx")) return absent;
  auto found = store_.GetSandbox(who.org_id, from.sandbox_id);
  if (!found.ok()) return found.status().code() == Code::kNotFound ? absent : found.status();
  // A deleted sandbox's checkpoint is found only when it was taken with keep (the listing
  // below then holds it).
  const store::SandboxRecord& source = *found;
  std::optional<runtime::NamedCheckpoint> checkpoint;
  for (const auto& c : runtime_.ListNamedCheckpoints(source.id))
    if (c.name == from.name) checkpoint = c;
  if (!checkpoint) return absent;
  if (!checkpoint->incompatibility.empty())
    return Status(Code::kUnsupported, checkpoint->incompatibility, field);
  // Refused before anything is written when the host has not the room for the copy now; the
  // provisioning reserves it again while it copies.
  RETURN_IF_ERROR(runtime_.ReserveRoomToReinstate(source.id, from.name).status());

  // The fork's own TTL and labels are checked as a create's; the rest is the source's.
  CreateSandbox shape;
  shape.labels = req.labels.value_or(CallerLabels(source.config.labels));
  shape.ttl_seconds = req.ttl_seconds;
  shape.no_expiry = req.no_expiry;
  if (!req.ttl_seconds && !req.no_expiry) {
    shape.ttl_seconds = source.config.ttl_seconds;
    shape.no_expiry = !source.config.ttl_seconds;
  }
  ASSIGN_OR_RETURN(NewSandbox checked, ValidateCreateSandbox(shape, default_image_, names));
  SandboxConfig config = source.config;
  config.ttl_seconds = checked.config.ttl_seconds;
  config.labels = checked.config.labels;
  config.pool.reset();
  config.forked_from = store::ForkSourceConfig{source.id, from.name};
  std::optional<store::PlanRecord> plan;
  ASSIGN_OR_RETURN(store::SandboxLimits limits, LimitsOf(who.org_id, &plan));
  if (plan && plan->max_run_seconds &&
      (!config.ttl_seconds || *config.ttl_seconds > *plan->max_run_seconds))
    return RunTimeRefusal(*plan->max_run_seconds, names("ttl_seconds"));
  if (config.storage) {
    if (!volumes_) return Internal("persistent storage is not available on this host");
    RETURN_IF_ERROR(volumes_->CheckUsable(who.org_id, *config.storage));
  }

  store::SandboxRecord r;
  r.id = NewId("sbx");
  r.org_id = who.org_id;
  r.status = "provisioning";
  r.config = config;
  r.env = source.env;
  r.created_at = r.updated_at = NowMillis();
  if (config.ttl_seconds) r.expires_at = r.created_at + *config.ttl_seconds * 1000;
  Hibernation h;
  h.phase = HibernationPhase::kStarting;
  h.workspace_kept = true;
  h.processes_saved = true;
  h.stopped_at = checkpoint->created_at;
  h.note = "forked from checkpoint '" + from.name + "' of sandbox " + source.id;
  WriteHibernation(r, h);
  std::optional<store::IdempotencyKey> idem;
  if (idempotency) idem = store::IdempotencyKey{idempotency->key, idempotency->fingerprint};
  ASSIGN_OR_RETURN(store::CreateOutcome outcome, store_.CreateSandbox(r, idem, limits));
  PowerChange out;
  out.sandbox = ViewOf(outcome.sandbox);
  if (outcome.replayed) return out;
  ADAPT_FAULT_POINT("sandbox.fork.after_row");
  // A crash before the operation is written leaves a fork that reconciliation stops
  // (hibernated, startable); its operation is then never needed.
  auto op =
      BeginSandboxOperation(store_, who.org_id, r.id, kForkOperation, "Pending", checkpoint->bytes);
  if (op.ok()) out.operation_id = *op;
  if (!op.ok()) spdlog::warn("sandbox {}: {}", r.id, op.status().message());
  std::string id = r.id;
  boost::asio::post(workers_,
                    Guarded("sandbox provision " + id, [this, id] { lifecycle_.Provision(id); }));
  return out;
}

}  // namespace adapt::core
