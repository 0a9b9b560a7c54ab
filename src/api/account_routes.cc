// /v1/account (the caller's own), /v1/plans and an organization's plan and credits (admin
// key): translation to core::AccountService.
#include "api/account_json.h"
#include "api/errors.h"
#include "api/request_parsing.h"
#include "api/routes.h"
#include "base/time.h"

namespace adapt::api {
namespace {

using nlohmann::json;

constexpr int64_t kMaxCreditDays = 3650;

Status OnlyAccountFields(const json& body, std::initializer_list<const char*> known) {
  for (const auto& [key, _] : body.items()) {
    bool ok = false;
    for (const char* k : known) ok = ok || key == k;
    if (!ok) return InvalidArgument(key, "unknown field '" + key + "'");
  }
  return Status::Ok();
}

HttpResponse AccountOrError(const Result<core::Account>& account) {
  if (!account.ok()) return ErrorResponse(account.status());
  return JsonResponse(200, AccountToJson(*account));
}

Result<core::AddCredit> CreditFromJson(const json& body, const std::string& org_id) {
  RETURN_IF_ERROR(OnlyAccountFields(body, {"amountNanos", "reason", "expiresInDays", "id"}));
  core::AddCredit c;
  c.org_id = org_id;
  if (!body.contains("amountNanos") || !body["amountNanos"].is_number_integer() ||
      (body["amountNanos"].is_number_unsigned() &&
       body["amountNanos"].get<uint64_t>() > uint64_t{INT64_MAX}))
    return InvalidArgument("amountNanos", "amountNanos must be an integer of nano-units");
  c.amount_nanos = body["amountNanos"].get<int64_t>();
  if (c.amount_nanos <= 0) return InvalidArgument("amountNanos", "amountNanos must be more than 0");
  if (!body.contains("reason") || !body["reason"].is_string())
    return InvalidArgument("reason", "reason must be a string saying why the credit is given");
  c.reason = body["reason"];
  if (body.contains("expiresInDays") && !body["expiresInDays"].is_null()) {
    const json& days = body["expiresInDays"];
    if (!days.is_number_integer() || days.get<int64_t>() < 1 ||
        days.get<int64_t>() > kMaxCreditDays)
      return InvalidArgument("expiresInDays", "expiresInDays must be an integer from 1 to " +
                                                  std::to_string(kMaxCreditDays));
    c.expires_at = NowMillis() + days.get<int64_t>() * 86'400'000;
  }
  if (body.contains("id")) {
    if (!body["id"].is_string()) return InvalidArgument("id", "id must be a string");
    c.id = body["id"];
  }
  return c;
}

}  // namespace

void AddAccountRoutes(Router& router, core::AccountService& accounts) {
  router.Add("GET", "/v1/account",
             [&](const HttpRequest&, const PathParams&, const core::Principal& who) {
               return AccountOrError(accounts.Get(who));
             });
  router.Add("POST", "/v1/account/register",
             [&](const HttpRequest& req, const PathParams&, const core::Principal& who) {
               auto body = ParseJsonBody(req);
               if (!body.ok()) return ErrorResponse(body.status());
               if (Status st = OnlyAccountFields(*body, {}); !st.ok()) return ErrorResponse(st);
               return AccountOrError(accounts.Register(who));
             });
  router.Add("GET", "/v1/account/ledger",
             [&](const HttpRequest&, const PathParams&, const core::Principal& who) {
               auto entries = accounts.Ledger(who);
               if (!entries.ok()) return ErrorResponse(entries.status());
               json items = json::array();
               for (const auto& e : *entries) items.push_back(LedgerEntryToJson(e));
               return JsonResponse(200, {{"items", items}, {"nextCursor", nullptr}});
             });
  router.Add("GET", "/v1/plans",
             [&](const HttpRequest&, const PathParams&, const core::Principal& who) {
               auto plans = accounts.ListPlans(who);
               if (!plans.ok()) return ErrorResponse(plans.status());
               json items = json::array();
               for (const auto& p : *plans) items.push_back(PlanToJson(p));
               return JsonResponse(200, {{"items", items}, {"nextCursor", nullptr}});
             });
  router.Add("GET", "/v1/plans/{id}",
             [&](const HttpRequest&, const PathParams& p, const core::Principal& who) {
               auto plan = accounts.GetPlan(who, p.at("id"));
               if (!plan.ok()) return ErrorResponse(plan.status());
               return JsonResponse(200, PlanToJson(*plan));
             });
  router.Add(
      "PUT", "/v1/plans/{id}",
      [&](const HttpRequest& req, const PathParams& p, const core::Principal& who) {
        // The admin check first: a tenant learns nothing from how its body is wrong.
        if (!who.is_admin)
          return ErrorResponse(Status(Code::kPermissionDenied, "this action needs the admin key"));
        auto body = ParseJsonBody(req);
        if (!body.ok()) return ErrorResponse(body.status());
        auto plan = PlanFromJson(*body, p.at("id"));
        if (!plan.ok()) return ErrorResponse(plan.status());
        auto saved = accounts.PutPlan(who, *plan);
        if (!saved.ok()) return ErrorResponse(saved.status());
        return JsonResponse(200, PlanToJson(*saved));
      });
  router.Add(
      "PUT", "/v1/orgs/{id}/plan",
      [&](const HttpRequest& req, const PathParams& p, const core::Principal& who) {
        if (!who.is_admin)
          return ErrorResponse(Status(Code::kPermissionDenied, "this action needs the admin key"));
        auto body = ParseJsonBody(req);
        if (!body.ok()) return ErrorResponse(body.status());
        if (Status st = OnlyAccountFields(*body, {"planId"}); !st.ok()) return ErrorResponse(st);
        if (!body->contains("planId") || !(*body)["planId"].is_string())
          return ErrorResponse(InvalidArgument("planId", "planId must be a string"));
        return AccountOrError(accounts.SetOrgPlan(who, p.at("id"), (*body)["planId"]));
      });
  router.Add(
      "POST", "/v1/orgs/{id}/credits",
      [&](const HttpRequest& req, const PathParams& p, const core::Principal& who) {
        if (!who.is_admin)
          return ErrorResponse(Status(Code::kPermissionDenied, "this action needs the admin key"));
        auto body = ParseJsonBody(req);
        if (!body.ok()) return ErrorResponse(body.status());
        auto credit = CreditFromJson(*body, p.at("id"));
        if (!credit.ok()) return ErrorResponse(credit.status());
        auto entry = accounts.Credit(who, *credit);
        if (!entry.ok()) return ErrorResponse(entry.status());
        return JsonResponse(201, LedgerEntryToJson(*entry));
      });
}

}  // namespace adapt::api
