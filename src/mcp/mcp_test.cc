#include <gtest/gtest.h>

#include "mcp/argument_check.h"
#include "mcp/client_metadata.h"
#include "mcp/json_rpc.h"
#include "mcp/mcp_server.h"
#include "mcp/origin_check.h"
#include "mcp/registration_limit.h"
#include "mcp/session_store.h"
#include "mcp/tool_registry.h"

namespace adapt::mcp {
namespace {

using nlohmann::json;

TEST(Classify, SortsMessages) {
  EXPECT_EQ(Classify(json::parse(R"({"jsonrpc":"2.0","id":1,"method":"ping"})")).kind,
            MessageKind::kRequest);
  EXPECT_EQ(Classify(json::parse(R"({"jsonrpc":"2.0","method":"notifications/initialized"})")).kind,
            MessageKind::kNotification);
  EXPECT_EQ(Classify(json::parse(R"({"jsonrpc":"2.0","id":"a","result":{}})")).kind,
            MessageKind::kResponse);
  for (const char* bad :
       {R"([{"jsonrpc":"2.0","id":1,"method":"ping"}])", R"({"id":1,"method":"x"})",
        R"({"jsonrpc":"2.0","id":null,"method":"x"})", R"({"jsonrpc":"2.0","id":1.5,"method":"x"})",
        R"({"jsonrpc":"2.0","id":1,"method":"x","params":[1]})", "3"})
    EXPECT_EQ(Classify(json::parse(bad)).kind, MessageKind::kInvalid) << bad;
}

TEST(CheckArguments, ReportsTheFirstProblemByName) {
  json schema = {{"type", "object"},
                 {"properties",
                  {{"n", {{"type", "integer"}, {"minimum", 1}, {"maximum", 5}}},
                   {"mode", {{"type", "string"}, {"enum", json::array({"a", "b"})}}}}},
                 {"required", json::array({"n"})}};
  EXPECT_EQ(CheckArguments(schema, {{"n", 3}, {"mode", "a"}}), "");
  EXPECT_NE(CheckArguments(schema, {{"n", 9}}).find("at most 5"), std::string::npos);
  EXPECT_NE(CheckArguments(schema, {{"n", "3"}}).find("type"), std::string::npos);
  EXPECT_NE(CheckArguments(schema, {{"n", 1}, {"mode", "c"}}).find("one of"), std::string::npos);
  EXPECT_NE(CheckArguments(schema, json::object()).find("n is required"), std::string::npos);
  EXPECT_NE(CheckArguments(schema, {{"n", 1}, {"x", 1}}).find("Unknown argument x"),
            std::string::npos);
  // A whole float is an integer; one past int64's range, or not finite, is not (its cast to
  // an integer would be undefined).
  EXPECT_EQ(CheckArguments(schema, {{"n", 2.0}}), "");
  for (double huge : {1e300, -1e300, 1e19, 9.3e18})
    EXPECT_NE(CheckArguments(schema, {{"n", huge}}).find("must be of type \"integer\""),
              std::string::npos)
        << huge;
  EXPECT_NE(CheckArguments(schema, {{"n", 2.5}}).find("type"), std::string::npos);
}

TEST(ToolRegistry, PagesWithOpaqueCursors) {
  ToolRegistry registry;
  const size_t n = ToolRegistry::kPageSize + 7;
  for (size_t i = 0; i < n; ++i) {
    Tool t;
    t.name = "t" + std::to_string(i);
    registry.Add(t);
  }
  std::vector<std::string> seen;
  std::string cursor;
  int pages = 0;
  do {
    auto page = registry.List(cursor);
    ASSERT_TRUE(page.ok());
    ++pages;
    for (const Tool* t : page->tools) seen.push_back(t->name);
    cursor = page->next_cursor;
  } while (!cursor.empty());
  EXPECT_EQ(seen.size(), n);
  EXPECT_EQ(pages, 2);
  EXPECT_FALSE(registry.List("tools:99").ok());
  EXPECT_FALSE(registry.List("garbage").ok());
}

// Calls `name` as `who` and returns the tools/call result.
json CallAs(const McpServer& server, const std::string& name, const core::Principal& who) {
  Message call = Classify(
      {{"jsonrpc", "2.0"}, {"id", 1}, {"method", "tools/call"}, {"params", {{"name", name}}}});
  ToolContext ctx;
  ctx.who = who;
  json out;
  server.Answer(call, ctx, [&out](json answer) { out = std::move(answer); });
  return out["result"];
}

TEST(McpServer, AnUnregisteredAccountMayCallReadOnlyToolsAndRegisterButNothingElse) {
  ToolRegistry registry;
  int runs = 0;
  auto ok = [&runs](ToolContext&, const json&) {
    ++runs;
    return ToolResult::Ok({{"ok", true}});
  };
  const json kNoArguments = {{"type", "object"}};
  registry.Add(
      {"create_thing", "", "", kNoArguments, {}, ToolAnnotations{false, true, false, false}, ok});
  registry.Add(
      {"list_things", "", "", kNoArguments, {}, ToolAnnotations{true, false, true, false}, ok});
  registry.Add(
      {"register_user", "", "", kNoArguments, {}, ToolAnnotations{false, false, true, false}, ok});
  McpServer server(registry);
  core::Principal unregistered{"org_new", "usr_1", false, false};

  json refused = CallAs(server, "create_thing", unregistered);
  EXPECT_TRUE(refused["isError"]);
  EXPECT_EQ(refused["content"][0]["text"],
            "This account is not registered yet: call register_user first.");
  EXPECT_EQ(runs, 0);
  EXPECT_FALSE(CallAs(server, "list_things", unregistered)["isError"]);
  EXPECT_FALSE(CallAs(server, "register_user", unregistered)["isError"]);
  EXPECT_FALSE(CallAs(server, "create_thing", {"org_ops", "key_1", false, true})["isError"]);
  EXPECT_EQ(runs, 3);
}

TEST(OriginCheck, RefusesForeignOriginsAndHosts) {
  OriginCheck check("127.0.0.1");
  EXPECT_EQ(check.Problem("127.0.0.1:8080", ""), "");
  EXPECT_EQ(check.Problem("localhost:8080", "http://localhost:3000"), "");
  EXPECT_EQ(check.Problem("[::1]:8080", "http://[::1]:8080"), "");
  EXPECT_NE(check.Problem("evil.example.com", "http://evil.example.com"), "");
  EXPECT_NE(check.Problem("127.0.0.1:8080", "http://evil.example.com"), "");
  EXPECT_NE(check.Problem("127.0.0.1:8080", "null"), "");
  OriginCheck open("0.0.0.0");
  EXPECT_EQ(open.Problem("adapt.example.com", ""), "");
  EXPECT_NE(open.Problem("adapt.example.com", "http://evil.example.com"), "");
}

TEST(OriginCheck, ANameThatStartsWith127IsNotLoopback) {
  OriginCheck check("127.0.0.1");
  EXPECT_NE(check.Problem("127.evil.example:8080", ""), "");
  EXPECT_NE(check.Problem("127.0.0.1:8080", "http://127.evil.example"), "");
  EXPECT_NE(check.Problem("127.0.0.1:8080", "http://127.0.0.1.evil.example:80"), "");
  EXPECT_EQ(check.Problem("127.0.0.2:8080", "http://127.1.2.3:3000"), "");
}

TEST(RegistrationLimit, TenAtOnceThenOneAMinutePerAddress) {
  RegistrationLimit limit;
  auto t0 = std::chrono::steady_clock::time_point{} + std::chrono::hours(1);
  for (int i = 0; i < 10; ++i) EXPECT_EQ(limit.Take("192.0.2.1", t0), 0) << i;
  EXPECT_EQ(limit.Take("192.0.2.1", t0), 60);
  EXPECT_EQ(limit.Take("192.0.2.1", t0 + std::chrono::seconds(30)), 30);
  EXPECT_EQ(limit.Take("192.0.2.2", t0), 0);  // another address has its own bucket
  EXPECT_EQ(limit.Take("192.0.2.1", t0 + std::chrono::seconds(61)), 0);
  EXPECT_GT(limit.Take("192.0.2.1", t0 + std::chrono::seconds(61)), 0);
}

TEST(RegistrationLimit, AnIpv6SlashSixtyFourIsOneAddressAndMappedIpv4IsItsIpv4) {
  RegistrationLimit limit({/*burst=*/2, std::chrono::seconds(60), /*max_addresses=*/100});
  auto t0 = std::chrono::steady_clock::time_point{} + std::chrono::hours(1);
  EXPECT_EQ(limit.Take("2001:db8:1:2::1", t0), 0);
  EXPECT_EQ(limit.Take("2001:db8:1:2:ffff::9", t0), 0);
  EXPECT_GT(limit.Take("2001:db8:1:2::7", t0), 0);
  EXPECT_EQ(limit.Take("2001:db8:1:3::1", t0), 0);
  EXPECT_EQ(limit.Take("::ffff:192.0.2.1", t0), 0);
  EXPECT_EQ(limit.Take("192.0.2.1", t0), 0);
  EXPECT_GT(limit.Take("::ffff:192.0.2.1", t0), 0);
  EXPECT_EQ(limit.Take("::ffff:192.0.2.2", t0), 0);
}

TEST(RegistrationLimit, TrackedAddressesAreBounded) {
  RegistrationLimit limit({/*burst=*/1, std::chrono::seconds(60), /*max_addresses=*/2});
  auto t0 = std::chrono::steady_clock::time_point{} + std::chrono::hours(1);
  EXPECT_EQ(limit.Take("192.0.2.1", t0), 0);
  EXPECT_EQ(limit.Take("192.0.2.2", t0), 0);
  EXPECT_GT(limit.Take("192.0.2.3", t0), 0);  // both buckets busy: a new address waits
  // Once the first two refilled, they are forgotten and the new address gets a bucket.
  EXPECT_EQ(limit.Take("192.0.2.3", t0 + std::chrono::seconds(61)), 0);
}

TEST(ClientMetadata, ADeepBodyIsRefusedNamingTheField) {
  ClientMetadata client;
  ClientMetadataError problem;
  std::string deep =
      R"({"redirect_uris":)" + std::string(200000, '[') + std::string(200000, ']') + "}";
  EXPECT_FALSE(ParseClientMetadata(deep, client, problem));
  EXPECT_EQ(problem.error, "invalid_client_metadata");
  EXPECT_EQ(problem.description,
            "the body nests arrays and objects deeper than 64 levels, in redirect_uris");
}

TEST(ClientMetadata, HttpRedirectsOnlyToLoopbackAddresses) {
  EXPECT_TRUE(AcceptableRedirect("http://127.0.0.1:9/cb"));
  EXPECT_TRUE(AcceptableRedirect("http://localhost/cb"));
  EXPECT_TRUE(AcceptableRedirect("http://[::1]:8/cb"));
  EXPECT_FALSE(AcceptableRedirect("http://127.evil.example/cb"));
  EXPECT_FALSE(AcceptableRedirect("http://127.0.0.1.evil.example:9/cb"));
  EXPECT_TRUE(AcceptableRedirect("https://a.example/cb"));
  EXPECT_TRUE(AcceptableRedirect("com.example.app:/cb"));
  ClientMetadata client;
  ClientMetadataError problem;
  ASSERT_TRUE(ParseClientMetadata(
      R"({"client_name":"x","redirect_uris":["http://127.0.0.1:9/cb"],"grant_types":["authorization_code"]})",
      client, problem));
  EXPECT_EQ(client.name, "x");
  EXPECT_EQ(client.redirect_uris, std::vector<std::string>{"http://127.0.0.1:9/cb"});
}

TEST(SessionStore, OneOrganizationFillingItsSessionsEvictsOnlyItsOwn) {
  SessionStore sessions(/*per_org=*/3, /*total=*/100);
  std::string b = sessions.Create("org_b", "2025-11-25");
  std::vector<std::string> a;
  for (int i = 0; i < 10; ++i) a.push_back(sessions.Create("org_a", "2025-11-25"));
  EXPECT_EQ(sessions.Touch(b, "org_b"), "2025-11-25");
  // org_a keeps its three most recent sessions.
  for (int i = 0; i < 7; ++i) EXPECT_EQ(sessions.Touch(a[i], "org_a"), std::nullopt) << i;
  for (int i = 7; i < 10; ++i) EXPECT_EQ(sessions.Touch(a[i], "org_a"), "2025-11-25") << i;
}

TEST(SessionStore, WhenAllAreFullTheLargestOrganizationGivesWay) {
  SessionStore sessions(/*per_org=*/5, /*total=*/6);
  std::string b = sessions.Create("org_b", "v");
  std::vector<std::string> a;
  for (int i = 0; i < 5; ++i) a.push_back(sessions.Create("org_a", "v"));
  std::string c = sessions.Create("org_c", "v");
  EXPECT_EQ(sessions.Touch(b, "org_b"), "v");
  EXPECT_EQ(sessions.Touch(c, "org_c"), "v");
  EXPECT_EQ(sessions.Touch(a[0], "org_a"), std::nullopt);
  EXPECT_EQ(sessions.Touch(a[1], "org_a"), "v");
}

TEST(SessionStore, BindsSessionsToTheirOrganization) {
  SessionStore sessions;
  std::string id = sessions.Create("org_a", "2025-11-25");
  EXPECT_EQ(sessions.Touch(id, "org_a"), "2025-11-25");
  EXPECT_EQ(sessions.Touch(id, "org_b"), std::nullopt);
  auto flag = sessions.BeginCall(id, "7");
  bool told = false;
  flag->OnSet([&told] { told = true; });
  sessions.Cancel(id, "7");
  EXPECT_TRUE(flag->IsSet());
  EXPECT_TRUE(told);
  EXPECT_FALSE(sessions.End(id, "org_b"));
  EXPECT_TRUE(sessions.End(id, "org_a"));
  EXPECT_EQ(sessions.Touch(id, "org_a"), std::nullopt);
}

}  // namespace
}  // namespace adapt::mcp

#include "mcp/oauth_text.h"

namespace adapt::mcp {
namespace {

TEST(OAuthText, S256MatchesRfc7636AppendixB) {
  EXPECT_EQ(S256Challenge("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"),
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM");
}

TEST(OAuthText, FormsRoundTrip) {
  auto f = DecodeForm("a=1+2&b=%2Fx%3Fy&c&a=ignored&bad=%zz");
  EXPECT_EQ(f["a"], "1 2");
  EXPECT_EQ(f["b"], "/x?y");
  EXPECT_EQ(f["c"], "");
  EXPECT_EQ(f["bad"], "%zz");
  EXPECT_EQ(WithQuery("https://a.example/cb?x=1", {{"code", "a b"}, {"state", "&"}}),
            "https://a.example/cb?x=1&code=a%20b&state=%26");
}

}  // namespace
}  // namespace adapt::mcp
