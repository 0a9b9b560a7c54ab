// /v1/account (the caller's own), /v1/plans and an organization's plan and credits (admin
// key): translation to core::AccountService.
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <memory>

#include "api/account_json.h"
#include "api/download_stream.h"
#include "api/errors.h"
#include "api/list_page.h"
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

// `name` as RFC 3339 UTC ("2026-12-01T00:00:00Z", fractions of a second allowed) or a date
// ("2026-12-01", its midnight UTC); `fallback` when absent.
Result<int64_t> TimeQuery(const HttpRequest& req, const std::string& name, int64_t fallback) {
  auto it = req.query.find(name);
  if (it == req.query.end() || it->second.empty()) return fallback;
  const std::string& text = it->second;
  auto bad = [&] {
    return InvalidArgument(name, name +
                                     " must be a UTC time like 2026-12-01T00:00:00Z or a date "
                                     "like 2026-12-01");
  };
  // Digits where digits belong: sscanf's %d alone takes "-1", "+1" and " 1" as well.
  auto digits_at = [&](std::initializer_list<size_t> places) {
    for (size_t i : places)
      if (i >= text.size() || !std::isdigit(static_cast<unsigned char>(text[i]))) return false;
    return true;
  };
  if (!digits_at({0, 1, 2, 3, 5, 6, 8, 9})) return bad();
  if (text.size() > 10 && !digits_at({11, 12, 14, 15, 17, 18})) return bad();
  int y = 0, mo = 0, d = 0, h = 0, mi = 0, s = 0, consumed = 0;
  if (std::sscanf(text.c_str(), "%4d-%2d-%2d%n", &y, &mo, &d, &consumed) != 3 || consumed != 10)
    return bad();
  int64_t millis = 0;
  if (text.size() > 10) {
    int more = 0;
    if (std::sscanf(text.c_str() + 10, "T%2d:%2d:%2d%n", &h, &mi, &s, &more) != 3 || more != 9)
      return bad();
    size_t i = 19;
    if (i < text.size() && text[i] == '.') {
      int64_t scale = 100;
      for (++i; i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])); ++i) {
        millis += (text[i] - '0') * scale;
        scale /= 10;
      }
    }
    if (i + 1 != text.size() || text[i] != 'Z') return bad();
  }
  if (y < 1970 || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || s > 60) return bad();
  struct tm tm {};
  tm.tm_year = y - 1900;
  tm.tm_mon = mo - 1;
  tm.tm_mday = d;
  tm.tm_hour = h;
  tm.tm_min = mi;
  tm.tm_sec = s;
  return static_cast<int64_t>(timegm(&tm)) * 1000 + millis;
}

int64_t StartOfMonth(int64_t now) {
  time_t secs = static_cast<time_t>(now / 1000);
  struct tm tm {};
  gmtime_r(&secs, &tm);
  tm.tm_mday = 1;
  tm.tm_hour = tm.tm_min = tm.tm_sec = 0;
  return static_cast<int64_t>(timegm(&tm)) * 1000;
}

// One CSV field: quoted when it holds a separator, a quote or a line break; text that a
// spreadsheet would run as a formula gets a leading apostrophe.
std::string CsvField(std::string value) {
  if (!value.empty() && (value[0] == '=' || value[0] == '+' || value[0] == '-' || value[0] == '@' ||
                         value[0] == '\t' || value[0] == '\r'))
    value.insert(value.begin(), '\'');
  if (value.find_first_of(",\"\r\n") == std::string::npos) return value;
  std::string out = "\"";
  for (char c : value) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

constexpr int kMaxExportPage = 10000;

// The ledger for an external billing system: one entry per line (JSON lines) or row (CSV),
// each with its id, which a system like Lago or Stripe Meters deduplicates on.
HttpResponse LedgerExport(const std::vector<store::LedgerEntryRecord>& entries,
                          const std::string& format) {
  HttpResponse r;
  r.status = 200;
  if (format == "jsonl") {
    r.content_type = "application/x-ndjson";
    for (const auto& e : entries)
      r.body += LedgerEntryToJson(e).dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
    return r;
  }
  r.content_type = "text/csv; charset=utf-8";
  r.body =
      "id,orgId,kind,amountNanos,reason,expiresAt,createdAt,subjectKind,subjectId,periodStart,"
      "periodEnd,cpuMilliseconds,memoryMiBMilliseconds,storageMiBMilliseconds,gpuMilliseconds\r\n";
  for (const auto& e : entries) {
    bool usage = e.kind == "usage";
    auto when = [&](int64_t at) { return usage ? FormatRfc3339(at) : std::string(); };
    auto count = [&](int64_t n) { return usage ? std::to_string(n) : std::string(); };
    std::vector<std::string> row = {e.id,
                                    e.org_id,
                                    e.kind,
                                    std::to_string(e.amount_nanos),
                                    e.reason,
                                    e.expires_at ? FormatRfc3339(*e.expires_at) : "",
                                    FormatRfc3339(e.created_at),
                                    e.subject_kind,
                                    e.subject_id,
                                    when(e.period_start),
                                    when(e.period_end),
                                    count(e.cpu_millis),
                                    count(e.memory_mib_millis),
                                    count(e.storage_mib_millis),
                                    count(e.gpu_millis)};
    for (size_t i = 0; i < row.size(); ++i) r.body += (i ? "," : "") + CsvField(row[i]);
    r.body += "\r\n";
  }
  return r;
}

// An export without `limit`: the whole ledger, read and written kMaxExportPage entries at a
// time on the stream's own thread, so that neither adaptd's memory nor the store (one lock for
// every tenant) holds more than a page, however long the ledger has grown.
HttpResponse StreamLedgerExport(core::AccountService& accounts, const core::Principal& who,
                                const std::string& format, const std::string& from) {
  struct Pages {
    std::string cursor;
    std::string text;  // the page being sent
    size_t sent = 0;
    bool first = true, last = false;
  };
  auto pages = std::make_shared<Pages>();
  pages->cursor = from;
  DownloadSource source;
  source.what = "the ledger export of " + who.org_id;
  source.read = [&accounts, who, format, pages](char* out, size_t n) -> long {
    while (pages->sent == pages->text.size()) {
      if (pages->last) return 0;
      auto page = accounts.Ledger(who, pages->cursor, kMaxExportPage);
      if (!page.ok()) return -1;
      pages->text = LedgerExport(page->items, format).body;
      // One CSV header, at the top.
      if (!pages->first && format == "csv") pages->text.erase(0, pages->text.find("\r\n") + 2);
      pages->first = false;
      pages->sent = 0;
      pages->last = !page->next_cursor;
      if (page->next_cursor) pages->cursor = *page->next_cursor;
    }
    size_t k = std::min(n, pages->text.size() - pages->sent);
    std::memcpy(out, pages->text.data() + pages->sent, k);
    pages->sent += k;
    return static_cast<long>(k);
  };
  return StreamDownload(std::move(source),
                        format == "jsonl" ? "application/x-ndjson" : "text/csv; charset=utf-8");
}

}  // namespace

void AddAccountRoutes(Router& router, core::AccountService& accounts) {
  auto get_account = [&](const HttpRequest&, const PathParams&, const core::Principal& who) {
    return AccountOrError(accounts.Get(who));
  };
  router.Add("GET", "/v1/account", get_account);
  // API.md names the billing account /v1/billing: the same account (get_billing_account).
  router.Add("GET", "/v1/billing", get_account);
  router.Add("POST", "/v1/account/register",
             [&](const HttpRequest& req, const PathParams&, const core::Principal& who) {
               auto body = ParseJsonBody(req);
               if (!body.ok()) return ErrorResponse(body.status());
               if (Status st = OnlyAccountFields(*body, {}); !st.ok()) return ErrorResponse(st);
               return AccountOrError(accounts.Register(who));
             });
  router.Add(
      "GET", "/v1/account/ledger",
      [&](const HttpRequest& req, const PathParams&, const core::Principal& who) {
        auto format = req.query.find("format");
        std::string f = format == req.query.end() ? "json" : format->second;
        if (f != "json" && f != "jsonl" && f != "csv")
          return ErrorResponse(InvalidArgument("format", "format must be json, jsonl or csv"));
        // A JSON page holds 1-200 entries (50 unless asked); an export is the whole ledger
        // unless `limit` (1-10000) asks for a page, whose next cursor is in X-Next-Cursor.
        bool exporting = f != "json";
        int most = exporting ? kMaxExportPage : 200;
        auto limit = QueryInt(req, "limit", exporting ? 0 : 50);
        if (!limit.ok()) return ErrorResponse(limit.status());
        if ((!exporting || req.query.count("limit")) && (*limit < 1 || *limit > most))
          return ErrorResponse(InvalidArgument("limit", "limit must be between 1 and " +
                                                            std::to_string(most) +
                                                            (exporting ? " for an export" : "")));
        auto cursor = req.query.find("cursor");
        if (exporting && !req.query.count("limit")) {
          std::string from = cursor == req.query.end() ? "" : cursor->second;
          // Read once before the stream starts: a bad cursor is a 400, not a short body.
          auto first = accounts.Ledger(who, from, 1);
          if (!first.ok()) return ErrorResponse(first.status());
          return StreamLedgerExport(accounts, who, f, from);
        }
        auto page = accounts.Ledger(who, cursor == req.query.end() ? "" : cursor->second, *limit);
        if (!page.ok()) return ErrorResponse(page.status());
        if (exporting) {
          HttpResponse r = LedgerExport(page->items, f);
          if (page->next_cursor) r.headers.emplace_back("X-Next-Cursor", *page->next_cursor);
          return r;
        }
        json items = json::array();
        for (const auto& e : page->items) items.push_back(LedgerEntryToJson(e));
        return JsonResponse(
            200, {{"items", items},
                  {"nextCursor", page->next_cursor ? json(*page->next_cursor) : json(nullptr)}});
      });
  router.Add("GET", "/v1/account/usage",
             [&](const HttpRequest& req, const PathParams&, const core::Principal& who) {
               int64_t now = NowMillis();
               auto from = TimeQuery(req, "from", StartOfMonth(now));
               if (!from.ok()) return ErrorResponse(from.status());
               auto to = TimeQuery(req, "to", now + 1);
               if (!to.ok()) return ErrorResponse(to.status());
               auto usage = accounts.Usage(who, *from, *to);
               if (!usage.ok()) return ErrorResponse(usage.status());
               return JsonResponse(200, AccountUsageToJson(*usage));
             });
  router.Add("GET", "/v1/plans",
             [&](const HttpRequest& req, const PathParams&, const core::Principal& who) {
               auto page = PageRequestFromQuery(req);
               if (!page.ok()) return ErrorResponse(page.status());
               auto plans = accounts.ListPlans(who, *page);
               if (!plans.ok()) return ErrorResponse(plans.status());
               return JsonResponse(200, PageJson(*plans, PlanToJson));
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
        // The PUT replaces the plan: an empty body, a client's mistake, would lift its limits.
        auto body = ParseRequiredJsonBody(req);
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
        auto entry = accounts.Credit(who, *credit, IdempotencyKeyOf(req, *body));
        if (!entry.ok()) return ErrorResponse(entry.status());
        return JsonResponse(201, LedgerEntryToJson(*entry));
      });
}

}  // namespace adapt::api
