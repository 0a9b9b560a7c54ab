#include "core/account_service.h"

#include <algorithm>

#include "base/ids.h"
#include "base/list_cursor.h"
#include "base/nano_amount.h"
#include "base/text.h"
#include "base/time.h"
#include "core/usage_arithmetic.h"
#include "storage/volume_request.h"
#include "storage/volume_service.h"

namespace adapt::core {
namespace {

constexpr size_t kMaxReasonBytes = 256;
constexpr int kAlertsShown = 10;

Status RequireAdmin(const Principal& who) {
  if (!who.is_admin) return Status(Code::kPermissionDenied, "this action needs the admin key");
  return Status::Ok();
}

bool IsPlanIdChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
}

}  // namespace

Status ValidatePlan(const store::PlanRecord& p) {
  if (p.id.empty() || p.id.size() > 63 || !std::all_of(p.id.begin(), p.id.end(), IsPlanIdChar))
    return InvalidArgument("id", "a plan id must be 1 to 63 characters of a-z, 0-9, '-' and '_'");
  if (p.name.size() > 128) return InvalidArgument("name", "name must be at most 128 bytes");
  if (HasControlCharacter(p.name))
    return InvalidArgument("name", "a plan's name cannot hold control characters");
  const std::pair<const char*, const std::optional<int64_t>*> limits[] = {
      {"concurrent_sandboxes", &p.concurrent_sandboxes},
      {"cpu", &p.cpu},
      {"memory_mib", &p.memory_mib},
      {"max_run_seconds", &p.max_run_seconds},
      {"persistent_storage_gib", &p.persistent_storage_gib},
      {"object_storage_gib", &p.object_storage_gib},
      {"gpus", &p.gpus},
      {"automations", &p.automations},
      {"queued_jobs", &p.queued_jobs},
      {"endpoints", &p.endpoints},
      {"database_mib", &p.database_mib},
      {"database_connections", &p.database_connections},
      {"app_replicas", &p.app_replicas}};
  for (const auto& [field, value] : limits)
    if (*value && **value < 0)
      return InvalidArgument(field, std::string(field) + " must be 0 or more (null: no limit)");
  // Object storage's quota counts 0 as "none": a plan cannot forbid objects by it.
  if (p.object_storage_gib == 0)
    return InvalidArgument("object_storage_gib",
                           "object_storage_gib must be 1 or more (null: no limit)");
  const std::pair<const char*, int64_t> prices[] = {
      {"cpu_second_nanos", p.cpu_second_nanos},
      {"memory_gib_second_nanos", p.memory_gib_second_nanos},
      {"storage_gib_month_nanos", p.storage_gib_month_nanos},
      {"gpu_second_nanos", p.gpu_second_nanos}};
  for (const auto& [field, value] : prices)
    if (value < 0) return InvalidArgument(field, std::string(field) + " must be 0 or more");
  return Status::Ok();
}

Status RunTimeRefusal(int64_t max_run_seconds, const std::string& ttl_field) {
  return Status(Code::kResourceExhausted,
                "the plan lets a sandbox run at most " + std::to_string(max_run_seconds) +
                    " seconds (limit max_run_seconds = " + std::to_string(max_run_seconds) +
                    "); set " + ttl_field + " to " + std::to_string(max_run_seconds) +
                    " or less, or ask the operator for a larger plan",
                ttl_field);
}

Status GpuLimitRefusal(const store::PlanRecord& plan, int64_t in_use, int64_t adding,
                       const std::string& field) {
  if (!plan.gpus || in_use + adding <= *plan.gpus) return Status::Ok();
  return Status(Code::kResourceExhausted,
                "the plan allows " + std::to_string(*plan.gpus) +
                    " GPUs (limit gpus = " + std::to_string(*plan.gpus) + "); " +
                    std::to_string(in_use) + " are in use and this sandbox needs " +
                    std::to_string(adding) + "; ask the operator for a larger plan",
                field);
}

std::vector<AccountAlertView> AlertsNewestFirst(const Account& account, size_t most) {
  std::vector<AccountAlertView> out;
  for (const auto& a : account.alerts) out.push_back({a.kind, a.at, &a, nullptr});
  for (const auto& a : account.limit_alerts)
    out.push_back({"limit_" + std::to_string(a.percent), a.at, nullptr, &a});
  std::stable_sort(out.begin(), out.end(),
                   [](const auto& x, const auto& y) { return x.at > y.at; });
  if (out.size() > most) out.resize(most);
  return out;
}

AccountService::AccountService(store::Store& store, AccountOptions options)
    : store_(store), options_(std::move(options)) {}

store::PlanRecord AccountService::BuiltInDefaultPlan(int max_sandboxes_per_org) {
  store::PlanRecord p;
  p.id = kDefaultPlanId;
  p.name = "Default";
  // Room for the daemon-wide cap of sandboxes at seed 001's maxima (32 cpus, 65,536 MiB
  // each), so the default plan refuses nothing the daemon allowed before plans existed.
  if (max_sandboxes_per_org > 0) {
    p.concurrent_sandboxes = max_sandboxes_per_org;
    p.cpu = int64_t{max_sandboxes_per_org} * 32;
    p.memory_mib = int64_t{max_sandboxes_per_org} * 65536;
  }
  p.app_replicas = 10;  // issue 20: "default maximum 10"
  // A queue without a bound would let one organization fill the store with jobs that wait.
  p.queued_jobs = kDefaultQueuedJobs;
  p.updated_at = NowMillis();
  return p;
}

Status AccountService::LoadPlans(const std::vector<store::PlanRecord>& operator_plans) {
  RETURN_IF_ERROR(
      store_.InsertPlanIfAbsent(BuiltInDefaultPlan(options_.max_sandboxes_per_org)).status());
  for (store::PlanRecord plan : operator_plans) {
    RETURN_IF_ERROR(ValidatePlan(plan).WithContext("plan '" + plan.id + "'"));
    plan.updated_at = NowMillis();
    RETURN_IF_ERROR(store_.PutPlan(plan));
  }
  return Status::Ok();
}

Result<store::BillingAccountRecord> AccountService::AccountRecordOf(const store::OrgRecord& org) {
  auto account = store_.GetBillingAccount(org.id);
  if (account.ok() || account.status().code() != Code::kNotFound || !org.registered) return account;
  // Made by an operator (registered on creation): its account is made on first read.
  return store_.EnsureBillingAccount(
      {org.id, kDefaultPlanId, options_.terms_version, org.created_at});
}

Result<Account> AccountService::ViewOf(const store::OrgRecord& org,
                                       const store::BillingAccountRecord& account) {
  Account a;
  a.org_id = org.id;
  a.org_name = org.name;
  a.registered = true;
  a.terms_version = account.terms_version;
  a.registered_at = account.registered_at;
  ASSIGN_OR_RETURN(a.plan, store_.GetPlan(account.plan_id));
  ASSIGN_OR_RETURN(a.usage, store_.GetOrgUsage(org.id));
  RETURN_IF_ERROR(FillBalance(a));
  return a;
}

Status AccountService::FillBalance(Account& a) {
  ASSIGN_OR_RETURN(store::LedgerTotalsRecord totals, store_.LedgerTotals(a.org_id, NowMillis()));
  a.credits_nanos = totals.credits_nanos;
  a.usage_nanos = totals.usage_nanos;
  a.balance_nanos = totals.credits_nanos - totals.usage_nanos;
  ASSIGN_OR_RETURN(a.alerts, store_.ListAccountAlerts(a.org_id, kAlertsShown));
  ASSIGN_OR_RETURN(a.limit_alerts, store_.ListLimitAlerts(a.org_id, kAlertsShown));
  return Status::Ok();
}

Result<Account> AccountService::Get(const Principal& who) {
  ASSIGN_OR_RETURN(store::OrgRecord org, store_.GetOrg(who.org_id));
  auto account = AccountRecordOf(org);
  if (account.ok()) return ViewOf(org, *account);
  if (account.status().code() != Code::kNotFound) return account.status();
  // Not registered yet: what it would get, and nothing recorded.
  Account a;
  a.org_id = org.id;
  a.org_name = org.name;
  ASSIGN_OR_RETURN(a.plan, store_.GetPlan(kDefaultPlanId));
  ASSIGN_OR_RETURN(a.usage, store_.GetOrgUsage(org.id));
  RETURN_IF_ERROR(FillBalance(a));
  return a;
}

Result<Account> AccountService::Register(const Principal& who) {
  ASSIGN_OR_RETURN(store::OrgRecord org, store_.GetOrg(who.org_id));
  ASSIGN_OR_RETURN(
      store::BillingAccountRecord account,
      store_.EnsureBillingAccount({org.id, kDefaultPlanId, options_.terms_version, NowMillis()}));
  // After the account: a failure here leaves a registered organization whose default
  // storage is made on first use (as for every organization), and a retry makes it now.
  if (volumes_)
    RETURN_IF_ERROR(volumes_->Get(org.id, storage::kDefaultVolumeName)
                        .status()
                        .WithContext("making the default storage"));
  org.registered = true;
  return ViewOf(org, account);
}

Result<LedgerPage> AccountService::Ledger(const Principal& who, const std::string& cursor,
                                          int64_t limit) {
  if (limit < 0) return InvalidArgument("limit", "limit must be 1 or more");
  ASSIGN_OR_RETURN(std::optional<int64_t> after, ParseListCursor(cursor));
  LedgerPage page;
  // One more than asked for says whether there is a next page.
  ASSIGN_OR_RETURN(page.items, store_.ListLedger(who.org_id, after, limit ? limit + 1 : 0));
  if (limit && static_cast<int64_t>(page.items.size()) > limit) {
    page.items.pop_back();
    page.next_cursor = NextListCursor(page.items.back().seq);
  }
  return page;
}

Result<AccountUsage> AccountService::Usage(const Principal& who, int64_t from, int64_t to) {
  if (to <= from) return InvalidArgument("to", "to must be after from");
  AccountUsage out;
  out.from = from;
  out.to = to;
  ASSIGN_OR_RETURN(out.items, store_.UsageBetween(who.org_id, from, to));
  for (const auto& u : out.items) {
    out.total.cpu_millis += u.cpu_millis;
    out.total.memory_mib_millis += u.memory_mib_millis;
    out.total.storage_mib_millis += u.storage_mib_millis;
    out.total.gpu_millis += u.gpu_millis;
    out.total.amount_nanos += u.amount_nanos;
    out.total.entries += u.entries;
  }
  return out;
}

Status AccountService::RequireBalance(const std::string& org_id, const store::PlanRecord& plan) {
  if (!PlanHasPrices(plan)) return Status::Ok();
  ASSIGN_OR_RETURN(int64_t balance, store_.Balance(org_id, NowMillis()));
  if (balance > 0) return Status::Ok();
  return Status(Code::kPaymentRequired,
                "the organization's prepaid balance is " + FormatNanoAmount(balance) +
                    " (credits minus usage), so nothing can be created or started; ask the "
                    "operator for a top-up (adapt admin credit " +
                    org_id + " AMOUNT --reason ...) and try again");
}

Result<Page<store::PlanRecord>> AccountService::ListPlans(const Principal& who,
                                                          const PageRequest& page) {
  RETURN_IF_ERROR(RequireAdmin(who));
  ASSIGN_OR_RETURN(auto plans, store_.ListPlans());
  return PageByKey(std::move(plans), page, [](const store::PlanRecord& p) { return p.id; });
}

Result<store::PlanRecord> AccountService::GetPlan(const Principal& who, const std::string& id) {
  RETURN_IF_ERROR(RequireAdmin(who));
  return store_.GetPlan(id);
}

Result<store::PlanRecord> AccountService::PutPlan(const Principal& who, store::PlanRecord plan) {
  RETURN_IF_ERROR(RequireAdmin(who));
  RETURN_IF_ERROR(ValidatePlan(plan));
  plan.updated_at = NowMillis();
  RETURN_IF_ERROR(store_.PutPlan(plan));
  return store_.GetPlan(plan.id);
}

Result<Account> AccountService::SetOrgPlan(const Principal& who, const std::string& org_id,
                                           const std::string& plan_id) {
  RETURN_IF_ERROR(RequireAdmin(who));
  ASSIGN_OR_RETURN(store::OrgRecord org, store_.GetOrg(org_id));
  RETURN_IF_ERROR(store_.GetPlan(plan_id).status().WithContext("plan"));
  auto account = AccountRecordOf(org);
  if (!account.ok() && account.status().code() == Code::kNotFound)
    return Conflict("organization " + org_id +
                    " has not registered yet (register_user); set its plan after it has");
  if (!account.ok()) return account.status();
  RETURN_IF_ERROR(store_.SetAccountPlan(org_id, plan_id));
  account->plan_id = plan_id;
  return ViewOf(org, *account);
}

Result<store::LedgerEntryRecord> AccountService::Credit(
    const Principal& who, AddCredit credit,
    const std::optional<store::IdempotencyKey>& idempotency) {
  RETURN_IF_ERROR(RequireAdmin(who));
  if (credit.amount_nanos <= 0)
    return InvalidArgument("amount", "a credit's amount must be more than 0");
  if (credit.reason.empty() || credit.reason.size() > kMaxReasonBytes)
    return InvalidArgument("reason", "reason must be 1 to 256 bytes");
  if (!credit.id.empty() && (credit.id.size() > 128))
    return InvalidArgument("id", "id must be at most 128 bytes");
  ASSIGN_OR_RETURN(store::OrgRecord org, store_.GetOrg(credit.org_id));
  store::LedgerEntryRecord e;
  e.id = credit.id.empty() ? NewId("led") : credit.id;
  e.org_id = org.id;
  e.kind = "credit";
  e.amount_nanos = credit.amount_nanos;
  e.reason = credit.reason;
  e.expires_at = credit.expires_at;
  e.created_at = NowMillis();
  if (!idempotency) return store_.AppendLedgerEntry(e);
  RETURN_IF_ERROR(store::CheckIdempotencyKey(*idempotency));
  // The entry's id follows from the key, so that a replay below finds the first entry through
  // the ledger's own rule (an entry with an id already there is returned, not appended).
  if (credit.id.empty()) e.id = "led_" + Sha256Hex(org.id + "\n" + idempotency->key).substr(0, 24);
  // Keys are the caller's (the admin organization's), as for every create; the path in the
  // fingerprint tells one organization's credit from another's.
  store::IdempotencyClaim claim{who.org_id, "credit", *idempotency, e.created_at};
  store::LedgerEntryRecord made;
  ASSIGN_OR_RETURN(store::IdempotentCreate outcome,
                   store_.CreateOnce(claim, [&]() -> Result<std::string> {
                     ASSIGN_OR_RETURN(made, store_.AppendLedgerEntry(e));
                     return made.id;
                   }));
  if (!outcome.replayed) return made;
  // The same body as the first request (the claim checked its fingerprint): the same amount,
  // so the ledger answers the entry it kept.
  e.id = outcome.object_id;
  return store_.AppendLedgerEntry(e);
}

Result<store::PlanRecord> AccountService::PlanOf(const std::string& org_id) {
  auto account = store_.GetBillingAccount(org_id);
  if (account.ok()) return store_.GetPlan(account->plan_id);
  if (account.status().code() != Code::kNotFound) return account.status();
  return store_.GetPlan(kDefaultPlanId);
}

store::SandboxLimits AccountService::SandboxLimitsOf(const store::PlanRecord& plan) const {
  store::SandboxLimits l;
  l.sandboxes = plan.concurrent_sandboxes;
  if (options_.max_sandboxes_per_org > 0 &&
      (!l.sandboxes || *l.sandboxes > options_.max_sandboxes_per_org))
    l.sandboxes = options_.max_sandboxes_per_org;
  l.cpu = plan.cpu;
  l.memory_mib = plan.memory_mib;
  return l;
}

}  // namespace adapt::core
