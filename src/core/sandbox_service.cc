#include "core/sandbox_service.h"

#include <boost/asio/post.hpp>
#include <chrono>
#include <future>

#include "base/background_work.h"
#include "base/fault_point.h"
#include "base/ids.h"
#include "base/list_cursor.h"
#include "base/log.h"
#include "base/time.h"
#include "core/checkpoint_work.h"
#include "core/environments.h"
#include "core/image_service.h"
#include "core/sandbox_limits.h"
#include "core/secret_service.h"
#include "core/startup_plan.h"
#include "core/warm_pool.h"
#include "image/reference.h"

namespace adapt::core {
namespace {

// How long DELETE waits for the teardown before answering 202.
constexpr auto kDeleteWait = std::chrono::seconds(8);

}  // namespace

SandboxService::SandboxService(store::Store& store, runtime::Runtime& runtime,
                               SandboxLifecycle& lifecycle, const ImageCatalog& images,
                               boost::asio::thread_pool& workers, std::string default_image)
    : store_(store),
      runtime_(runtime),
      lifecycle_(lifecycle),
      images_(images),
      workers_(workers),
      default_image_(std::move(default_image)) {}

Status SandboxService::CheckImageChoice(const Principal& who, const CreateSandbox& create,
                                        const FieldNames& names) const {
  ASSIGN_OR_RETURN(NewSandbox req, ValidateCreateSandbox(create, default_image_, names));
  return ResolveChosenImage(who, create, req.config, names);
}

Status SandboxService::ResolveChosenImage(const Principal& who, const CreateSandbox& create,
                                          SandboxConfig& config, const FieldNames& names) const {
  if (config.image_id) {
    if (!image_service_)
      return Unsupported(names("image_id"), "prepared images (" + names("image_id") +
                                                ") are not supported on this host");
    ASSIGN_OR_RETURN(config.image, image_service_->ReferenceOf(who.org_id, *config.image_id));
  } else if (config.image.starts_with(kImportedImagePrefix)) {
    // Imported images are private to their organization: reachable by image_id only.
    return Status(Code::kNotFound,
                  "image '" + config.image + "' not found; use " + names("image_id") +
                      " for an imported image",
                  names("image"));
  }
  // An image the organization saved from a sandbox is found by its name ("my-env:v1"); an
  // environment alias and the default image stay the operator's.
  if (create.image && !config.image_id && image_service_ && !IsEnvironmentAlias(config.image)) {
    if (auto saved = image_service_->SavedReference(who.org_id, config.image)) {
      if (!saved->ok()) return saved->status().WithField(names("image"));
      config.image = **saved;
    }
  }
  // The image policy judges what was asked for: an alias or the default image is the
  // operator's choice, anything else is judged by its reference (an imageId by the
  // reference it was pulled as).
  bool chosen_by_operator = !create.image_id && (!create.image || IsEnvironmentAlias(config.image));
  if (!chosen_by_operator) {
    static const ImagePolicy kDefaultPolicy;
    RETURN_IF_ERROR((policy_ ? *policy_ : kDefaultPolicy)
                        .Check(config.image, config.security_profile, create.surface, names));
  }
  return Status::Ok();
}

Result<Sandbox> SandboxService::Create(const Principal& who, const CreateSandbox& create,
                                       const std::optional<IdempotencyRequest>& idempotency,
                                       const FieldNames& names) {
  if (idempotency &&
      (idempotency->key.empty() || idempotency->key.size() > limits::kMaxIdempotencyKeyBytes))
    return InvalidArgument("Idempotency-Key", "Idempotency-Key must be 1 to 255 characters");
  if (create.gpu) {
    // What is wrong with the request first, then the plan's gpus limit, then this host's
    // lack of GPUs (ValidateCreateSandbox below): the plan is shown and enforced honestly
    // even though no GPU sandbox can run here.
    CreateSandbox without_gpu = create;
    without_gpu.gpu = false;
    RETURN_IF_ERROR(ValidateCreateSandbox(without_gpu, default_image_, names).status());
    RETURN_IF_ERROR(CheckGpuLimit(who, names));
  }
  ASSIGN_OR_RETURN(NewSandbox req, ValidateCreateSandbox(create, default_image_, names));
  SandboxConfig& config = req.config;
  // Hostname rules with no resolver named keep network.dns null: a named one would answer
  // every name, where the default answers the listed names only (README, network).
  if (config.network.egress == "open" && !config.network.dns && !config.network.dns_disabled &&
      !default_dns_.empty())
    config.network.dns = default_dns_;
  std::optional<store::PlanRecord> plan;
  ASSIGN_OR_RETURN(store::SandboxLimits limits, LimitsOf(who.org_id, &plan));
  if (plan && plan->max_run_seconds &&
      (!config.ttl_seconds || *config.ttl_seconds > *plan->max_run_seconds))
    return RunTimeRefusal(*plan->max_run_seconds, names("ttl_seconds"));
  RETURN_IF_ERROR(AttachSecrets(secrets_, who.org_id, req));
  // Resolve the image and the startup plan now, so that a request that cannot start is a
  // 400 and creates nothing. An image not here yet is pulled while the sandbox is
  // provisioning; its startup plan is checked once its config is known.
  RETURN_IF_ERROR(ResolveChosenImage(who, create, config, names));
  // An environment alias (seed 000: python, node, ...) stands for its image.
  if (auto env = ResolveEnvironment(images_, config.image)) {
    if (!env->ok()) return env->status();
    config.image = **env;
  }
  auto image = images_.Resolve(who.org_id, config.image);
  if (image.ok()) {
    RETURN_IF_ERROR(PlanStartup(config.startup, *image, req.env).status());
  } else if (image.status().code() != Code::kNotFound) {
    return image.status();
  } else if (!images_.Pullable(config.image)) {
    // A name that is neither here nor a valid registry reference: say what is wrong with it.
    auto ref = image::ParseReference(config.image);
    return ref.ok() ? image.status() : ref.status();
  }

  if (config.storage) {
    if (!volumes_)
      return Unsupported(names("startup_class"),
                         "persistent storage is not available on this host");
    RETURN_IF_ERROR(volumes_->CheckUsable(who.org_id, *config.storage));
  }

  store::SandboxRecord r;
  r.id = NewId("sbx");
  r.org_id = who.org_id;
  r.status = "provisioning";
  r.config = config;
  r.env = req.env;
  r.created_at = r.updated_at = NowMillis();
  if (config.ttl_seconds) r.expires_at = r.created_at + *config.ttl_seconds * 1000;
  std::optional<store::IdempotencyKey> idem;
  if (idempotency) idem = store::IdempotencyKey{idempotency->key, idempotency->fingerprint};
  // An image not here yet is pulled while the sandbox provisions, as one of the organization's
  // pulls in progress (the one past the cap is refused before anything is written).
  std::shared_ptr<void> pull_place;
  if (!image.ok() && image_service_) {
    ASSIGN_OR_RETURN(pull_place, image_service_->TakePullPlace(who.org_id));
  }
  // A warm pool member, when one fits: the sandbox is running as soon as it is recorded.
  std::optional<std::string> pooled;
  if (pool_ && pool_->enabled()) {
    // A pool member is already running: its environment has no database variables.
    WarmPool::Claim claim =
        r.config.database ? WarmPool::Claim{std::nullopt, "the sandbox asks for the database"}
        : image.ok()      ? pool_->Take(r.config)
                          : WarmPool::Claim{std::nullopt, "the image is not local yet"};
    pooled = claim.id;
    r.config.pool = store::PoolUseConfig{pooled.has_value(), pooled ? "" : claim.reason};
    if (pooled) {
      r.id = *pooled;
      r.status = "running";
    }
  }
  auto created = store_.CreateSandbox(r, idem, limits);
  if (pooled && (!created.ok() || created->replayed)) pool_->Discard(*pooled);
  if (!created.ok()) return created.status();
  store::CreateOutcome outcome = *created;
  ADAPT_FAULT_POINT("sandbox.create.after_row");
  if (!outcome.replayed && !pooled) {
    std::string id = r.id;
    auto provision = [this, id] { lifecycle_.Provision(id); };
    // One that pulls first runs on the image pool: a registry that stalls (a tenant may name
    // its own) would otherwise hold an API worker per sandbox, and every organization's
    // requests with them.
    if (pull_place)
      image_service_->RunHoldingPullPlace(std::move(pull_place), "sandbox provision " + id,
                                          provision);
    else
      boost::asio::post(workers_, Guarded("sandbox provision " + id, provision));
  }
  return ViewOf(outcome.sandbox);
}

Result<Sandbox> SandboxService::Get(const Principal& who, const std::string& id) {
  if (!IsValidId(id, "sbx")) return NotFound("sandbox " + id + " not found");
  ASSIGN_OR_RETURN(store::SandboxRecord r, store_.GetSandbox(who.org_id, id));
  return DetailedView(r);
}

Sandbox SandboxService::DetailedView(const store::SandboxRecord& r) {
  Sandbox view = ViewOf(r);
  if (r.status == "running" && r.config.startup) {
    auto obs = runtime_.Observe(r.id);
    if (obs.ok()) view = ViewOf(r, &obs->output);
  }
  if (endpoints_view_) view.endpoints = endpoints_view_(r.org_id, r.id);
  return view;
}

Result<SandboxPage> SandboxService::List(const Principal& who, const ListSandboxesRequest& req) {
  if (req.limit < 1 || req.limit > 200)
    return InvalidArgument("limit", "limit must be between 1 and 200");
  if (req.query.size() > 256)
    return InvalidArgument("query", "query must be at most 256 characters");
  ASSIGN_OR_RETURN(auto before, ParseListCursor(req.cursor));
  ASSIGN_OR_RETURN(store::SandboxPage page,
                   store_.ListSandboxes(who.org_id, req.query, req.limit, before));
  SandboxPage out;
  for (const auto& r : page.items) out.items.push_back(ViewOf(r));
  out.next_cursor = NextListCursor(page.next_seq);
  return out;
}

Result<DeleteOutcome> SandboxService::Delete(const Principal& who, const std::string& id) {
  if (!IsValidId(id, "sbx")) return NotFound("sandbox " + id + " not found");
  ASSIGN_OR_RETURN(store::SandboxRecord r, lifecycle_.BeginDelete(who.org_id, id, "cancelled"));
  ADAPT_FAULT_POINT("sandbox.delete.after_deleting");
  if (r.status == "deleted") return DeleteOutcome{true};
  auto done = std::make_shared<std::promise<void>>();
  auto finished = done->get_future();
  // A delete that threw leaves the sandbox deleting (the monitor retries it) and the promise
  // broken: the answer is then "not deleted yet".
  boost::asio::post(workers_, Guarded("sandbox delete " + id, [this, id, done] {
                      lifecycle_.FinishDelete(id);
                      done->set_value();
                    }));
  if (finished.wait_for(kDeleteWait) != std::future_status::ready) return DeleteOutcome{false};
  auto after = store_.GetSandbox(who.org_id, id);
  return DeleteOutcome{after.ok() && after->status == "deleted"};
}

Result<PowerChange> SandboxService::Stop(const Principal& who, const std::string& id,
                                         WhenBusy when_busy) {
  if (!IsValidId(id, "sbx")) return NotFound("sandbox " + id + " not found");
  PowerChange out;
  // adaptd's own stops (automations, controllers) take a place too: a schedule of every
  // minute over many durable sandboxes would otherwise checkpoint them all at once on the
  // workers every organization shares. Their callers try again later when none is free.
  ASSIGN_OR_RETURN(std::shared_ptr<void> place,
                   TakeCheckpointWorkPlace(checkpoint_work_, who.org_id));
  // Not read again afterwards: a controller that wants it running may have started it since.
  ASSIGN_OR_RETURN(store::SandboxRecord stopped,
                   lifecycle_.Stop(who.org_id, id, false, &out.operation_id, {}, when_busy));
  out.sandbox = DetailedView(stopped);
  return out;
}

Result<PowerChange> SandboxService::Start(const Principal& who, const std::string& id) {
  if (!IsValidId(id, "sbx")) return NotFound("sandbox " + id + " not found");
  PowerChange out;
  ASSIGN_OR_RETURN(store::SandboxLimits limits, LimitsOf(who.org_id));
  RETURN_IF_ERROR(lifecycle_.BeginStart(who.org_id, id, limits, &out.operation_id).status());
  boost::asio::post(workers_,
                    Guarded("sandbox provision " + id, [this, id] { lifecycle_.Provision(id); }));
  ASSIGN_OR_RETURN(out.sandbox, Get(who, id));
  return out;
}

Result<bool> SandboxService::Restart(const std::string& org_id, const std::string& id) {
  auto stopped = lifecycle_.Stop(org_id, id, /*restart=*/true);
  if (!stopped.ok()) {
    if (stopped.status().code() == Code::kConflict) return false;  // not running
    return stopped.status();
  }
  RETURN_IF_ERROR(lifecycle_.BeginStart(org_id, id).status());
  boost::asio::post(workers_,
                    Guarded("sandbox provision " + id, [this, id] { lifecycle_.Provision(id); }));
  return true;
}

Status SandboxService::CheckGpuLimit(const Principal& who, const FieldNames& names) {
  if (!accounts_) return Status::Ok();
  ASSIGN_OR_RETURN(store::PlanRecord plan, accounts_->PlanOf(who.org_id));
  RETURN_IF_ERROR(accounts_->RequireBalance(who.org_id, plan));
  // No sandbox here ever holds a GPU, so none are in use and one more fits unless the
  // limit is 0.
  return GpuLimitRefusal(plan, 0, 1, names("gpu"));
}

Result<store::SandboxLimits> SandboxService::LimitsOf(const std::string& org_id,
                                                      std::optional<store::PlanRecord>* plan) {
  store::SandboxLimits limits;
  if (!accounts_) {
    if (max_per_org_ > 0) limits.sandboxes = max_per_org_;
    return limits;
  }
  ASSIGN_OR_RETURN(store::PlanRecord found, accounts_->PlanOf(org_id));
  RETURN_IF_ERROR(accounts_->RequireBalance(org_id, found));
  limits = accounts_->SandboxLimitsOf(found);
  if (plan) *plan = std::move(found);
  return limits;
}

void SandboxService::HibernateIdle(const std::string& id, int64_t idle_ms) {
  auto r = store_.GetSandbox("", id);
  if (!r.ok() || r->status != "running") return;
  std::string reason = "hibernated after " + std::to_string(idle_ms / 1000) +
                       " s without a command, file transfer or ingress request "
                       "(idleTimeoutSeconds " +
                       std::to_string(r->config.idle_timeout_seconds.value_or(0)) + ")";
  std::string operation_id;
  auto stopped = lifecycle_.Stop(r->org_id, id, false, &operation_id, reason);
  if (!stopped.ok() && stopped.status().code() != Code::kConflict)
    spdlog::warn("sandbox {}: hibernating it after idleness: {}", id, stopped.status().message());
}

std::optional<std::function<void()>> SandboxService::IdleHibernation(const std::string& id,
                                                                     int64_t idle_ms) {
  auto r = store_.GetSandbox("", id);
  if (!r.ok() || r->status != "running") return std::function<void()>([] {});
  std::shared_ptr<void> place = checkpoint_work_.TryTake(r->org_id);
  if (!place) return std::nullopt;
  return std::function<void()>([this, id, idle_ms, place] {
    HibernateIdle(id, idle_ms);
    (void)place;
  });
}

void SandboxService::Expire(const std::string& id) {
  auto r = lifecycle_.BeginDelete("", id, "expired");
  if (!r.ok() || r->status == "deleted") return;
  boost::asio::post(workers_,
                    Guarded("sandbox delete " + id, [this, id] { lifecycle_.FinishDelete(id); }));
}

}  // namespace adapt::core
