// POST /v1/sandboxes as REST sends it: the JSON mapper (api/sandbox_json.h) and the core's
// validation behind it, errors naming REST's fields.
#include "api/sandbox_json.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "core/sandbox_limits.h"

namespace adapt::api {
namespace {

using nlohmann::json;
namespace limits = core::limits;

constexpr const char* kDefaultImage = "debian:12";

// The validated create, its config shown as REST shows a sandbox's settings.
struct Parsed {
  json config;
  std::map<std::string, std::string> env;
  std::vector<std::string> secrets;
};

Result<Parsed> Parse(const json& body) {
  ASSIGN_OR_RETURN(core::CreateSandbox req, CreateSandboxFromJson(body));
  ASSIGN_OR_RETURN(core::NewSandbox made,
                   core::ValidateCreateSandbox(req, kDefaultImage, RestSandboxFields()));
  core::Sandbox view;
  view.config = made.config;
  if (made.config.startup) view.startup.emplace().settings = *made.config.startup;
  return Parsed{SandboxToJson(view), made.env, made.secrets};
}

json MustParseConfig(const json& body) {
  auto r = Parse(body);
  EXPECT_TRUE(r.ok()) << body.dump() << ": " << r.status().message();
  return r.ok() ? r->config : json();
}

// Expects `body` to be refused with `code`, naming `field`.
void ExpectRefused(const json& body, Code code, const std::string& field) {
  auto r = Parse(body);
  ASSERT_FALSE(r.ok()) << body.dump() << " was accepted";
  EXPECT_EQ(r.status().code(), code) << body.dump() << ": " << r.status().message();
  EXPECT_EQ(r.status().field(), field) << body.dump() << ": " << r.status().message();
  EXPECT_FALSE(r.status().message().empty());
}

void ExpectInvalid(const json& body, const std::string& field) {
  ExpectRefused(body, Code::kInvalidArgument, field);
}

struct Bound {
  const char* field;
  int64_t min, max, fallback;
};

const Bound kBounds[] = {
    {"cpu", 1, 32, 1},
    {"memoryMiB", 128, 65536, 1024},
    {"diskMiB", 64, 131072, 2048},
    {"ttlSeconds", 1, 86400, 3600},
};

TEST(CreateSandboxFromJson, SeedLimitsAreTheContract) {
  EXPECT_EQ(limits::kCpuMin, 1);
  EXPECT_EQ(limits::kCpuMax, 32);
  EXPECT_EQ(limits::kMemoryMiBMin, 128);
  EXPECT_EQ(limits::kMemoryMiBMax, 65536);
  EXPECT_EQ(limits::kDiskMiBMin, 64);
  EXPECT_EQ(limits::kDiskMiBMax, 131072);
  EXPECT_EQ(limits::kTtlSecondsMin, 1);
  EXPECT_EQ(limits::kTtlSecondsMax, 86400);
  EXPECT_EQ(limits::kMaxLabels, 32u);
}

TEST(CreateSandboxFromJson, EveryLimitAcceptsItsBounds) {
  for (const auto& b : kBounds) {
    EXPECT_EQ(MustParseConfig({{b.field, b.min}})[b.field], b.min) << b.field;
    EXPECT_EQ(MustParseConfig({{b.field, b.max}})[b.field], b.max) << b.field;
  }
}

TEST(CreateSandboxFromJson, EveryLimitRefusesValuesBeyondItsBoundsNamingTheField) {
  for (const auto& b : kBounds) {
    SCOPED_TRACE(b.field);
    ExpectInvalid({{b.field, b.min - 1}}, b.field);
    ExpectInvalid({{b.field, b.max + 1}}, b.field);
    ExpectInvalid({{b.field, -1}}, b.field);
    ExpectInvalid({{b.field, INT64_MIN}}, b.field);
    ExpectInvalid({{b.field, UINT64_MAX}}, b.field);
  }
}

TEST(CreateSandboxFromJson, LimitsMustBeIntegers) {
  for (const auto& b : kBounds) {
    SCOPED_TRACE(b.field);
    ExpectInvalid({{b.field, 1.5}}, b.field);
    ExpectInvalid({{b.field, "2"}}, b.field);
    ExpectInvalid({{b.field, true}}, b.field);
    ExpectInvalid({{b.field, json::array({2})}}, b.field);
  }
  ExpectInvalid(json::parse(R"({"cpu": 2.0})"), "cpu");
}

TEST(CreateSandboxFromJson, IdleTimeoutIsOptionalAndBounded) {
  EXPECT_TRUE(MustParseConfig(json::object())["idleTimeoutSeconds"].is_null());
  EXPECT_TRUE(MustParseConfig({{"idleTimeoutSeconds", nullptr}})["idleTimeoutSeconds"].is_null());
  EXPECT_EQ(MustParseConfig({{"idleTimeoutSeconds", 10}})["idleTimeoutSeconds"], 10);
  EXPECT_EQ(MustParseConfig({{"idleTimeoutSeconds", 86400}})["idleTimeoutSeconds"], 86400);
  for (const json& bad : {json(9), json(86401), json(-1), json(1.5), json("60"), json(true)})
    ExpectInvalid({{"idleTimeoutSeconds", bad}}, "idleTimeoutSeconds");
}

TEST(CreateSandboxFromJson, EmptyBodyGetsEveryDefault) {
  auto r = Parse(json::object());
  ASSERT_TRUE(r.ok()) << r.status().message();
  const json& c = r->config;
  for (const auto& b : kBounds) EXPECT_EQ(c[b.field], b.fallback) << b.field;
  EXPECT_EQ(c["labels"], json::object());
  EXPECT_EQ(c["image"], kDefaultImage);
  EXPECT_TRUE(c["imageId"].is_null());
  EXPECT_EQ(c["network"]["egress"], "open") << "seed 001: public internet is the default";
  EXPECT_TRUE(c["startup"].is_null()) << "no startup: an interactive sandbox";
  EXPECT_EQ(c["securityProfile"], "restricted");
  EXPECT_EQ(c["startupClass"], "instant");
  EXPECT_TRUE(r->env.empty());
  EXPECT_FALSE(c.contains("env"));
}

TEST(CreateSandboxFromJson, SeedExampleIsAccepted) {
  json c = MustParseConfig(json::parse(R"({"cpu": 2, "memoryMiB": 4096, "diskMiB": 8192,
      "ttlSeconds": 3600, "labels": {"name": "research-worker", "project": "research"}})"));
  EXPECT_EQ(c["cpu"], 2);
  EXPECT_EQ(c["memoryMiB"], 4096);
  EXPECT_EQ(c["diskMiB"], 8192);
  EXPECT_EQ(c["ttlSeconds"], 3600);
  EXPECT_EQ(c["labels"], json({{"name", "research-worker"}, {"project", "research"}}));
}

TEST(CreateSandboxFromJson, BodyMustBeAnObject) {
  EXPECT_EQ(Parse(json::array()).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(Parse(json("x")).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(Parse(json(nullptr)).status().code(), Code::kInvalidArgument);
}

TEST(CreateSandboxFromJson, NullTtlDisablesExpiry) {
  json c = MustParseConfig(json::parse(R"({"ttlSeconds": null})"));
  ASSERT_TRUE(c.contains("ttlSeconds"));
  EXPECT_TRUE(c["ttlSeconds"].is_null());
}

TEST(CreateSandboxFromJson, UnknownFieldsAreRefusedByName) {
  ExpectInvalid({{"cpus", 2}}, "cpus");
  auto r = Parse({{"bogus", 1}});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("bogus"), std::string::npos);
  ExpectInvalid({{"startup", {{"mode", "image"}, {"shell", true}}}}, "startup.shell");
  ExpectInvalid({{"network", {{"egress", "none"}, {"rate", 1}}}}, "network.rate");
}

TEST(CreateSandboxFromJson, ThirtyTwoLabelsAreAllowedThirtyThreeAreNot) {
  json labels = json::object();
  for (int i = 0; i < 32; ++i) labels["k" + std::to_string(i)] = "v";
  EXPECT_EQ(MustParseConfig({{"labels", labels}})["labels"].size(), 32u);
  labels["k32"] = "v";
  ExpectInvalid({{"labels", labels}}, "labels");
}

TEST(CreateSandboxFromJson, PlatformLabelKeysAreReserved) {
  ExpectInvalid({{"labels", {{"platform.owner", "me"}}}}, "labels.platform.owner");
  // Only the prefix is reserved.
  EXPECT_TRUE(Parse({{"labels", {{"my.platform.owner", "me"}}}}).ok());
  EXPECT_TRUE(Parse({{"labels", {{"platform", "x"}}}}).ok());
}

TEST(CreateSandboxFromJson, LabelKeysAndValuesAreBoundedStrings) {
  EXPECT_TRUE(Parse({{"labels", {{std::string(63, 'k'), std::string(256, 'v')}}}}).ok());
  EXPECT_FALSE(Parse({{"labels", {{std::string(64, 'k'), "v"}}}}).ok());
  EXPECT_FALSE(Parse({{"labels", {{"", "v"}}}}).ok());
  ExpectInvalid({{"labels", {{"name", std::string(257, 'v')}}}}, "labels.name");
  ExpectInvalid({{"labels", {{"name", 5}}}}, "labels.name");
  ExpectInvalid({{"labels", json::array({"a"})}}, "labels");
  EXPECT_EQ(MustParseConfig({{"labels", nullptr}})["labels"], json::object());
}

TEST(CreateSandboxFromJson, ImageAndImageIdTogetherAreABadRequest) {
  ExpectInvalid({{"image", "debian:12"}, {"imageId", "img_abc"}}, "imageId");
}

TEST(CreateSandboxFromJson, ImageIdAloneIsUnsupportedHere) {
  ExpectInvalid({{"imageId", "abc"}}, "imageId");
  ExpectInvalid({{"imageId", 5}}, "imageId");
}

TEST(CreateSandboxFromJson, ImageReferenceIsKeptOrValidated) {
  EXPECT_EQ(MustParseConfig({{"image", "python:3.12-slim"}})["image"], "python:3.12-slim");
  EXPECT_EQ(MustParseConfig({{"image", nullptr}})["image"], kDefaultImage);
  ExpectInvalid({{"image", ""}}, "image");
  ExpectInvalid({{"image", 12}}, "image");
  ExpectInvalid({{"image", std::string(513, 'a')}}, "image");
}

TEST(CreateSandboxFromJson, NetworkEgressModes) {
  EXPECT_EQ(MustParseConfig({{"network", {{"egress", "none"}}}})["network"]["egress"], "none");
  EXPECT_EQ(MustParseConfig({{"network", {{"egress", "open"}}}})["network"]["egress"], "open");
  EXPECT_EQ(MustParseConfig({{"network", json::object()}})["network"]["egress"], "open");
  json allow = MustParseConfig({{"network", {{"egress", "allowlist"}}}})["network"];
  EXPECT_EQ(allow["egress"], "allowlist");
  EXPECT_TRUE(allow["allow"].empty());
  EXPECT_TRUE(allow["dns"].is_null()) << "restricted mode has no DNS unless asked for";
  ExpectInvalid({{"network", {{"egress", "bogus"}}}}, "network.egress");
  ExpectInvalid({{"network", {{"egress", 1}}}}, "network.egress");
  ExpectInvalid({{"network", "none"}}, "network");
}

TEST(CreateSandboxFromJson, AllowlistRulesAreExactPublicAddressesAndPorts) {
  json c = MustParseConfig(json::parse(R"({"network": {"egress": "allowlist", "dns": "1.1.1.1",
      "allow": [{"protocol": "tcp", "address": "1.1.1.1", "port": 443},
                {"protocol": "udp", "address": "2606:4700:0:0::1111", "port": 65535}]}})"));
  EXPECT_EQ(c["network"]["allow"][0]["address"], "1.1.1.1");
  EXPECT_EQ(c["network"]["allow"][1]["address"], "2606:4700::1111");
  EXPECT_EQ(c["network"]["allow"][1]["port"], 65535);
  EXPECT_EQ(c["network"]["dns"], "1.1.1.1");
  auto rule = [](json r) {
    return json{{"network", {{"egress", "allowlist"}, {"allow", json::array({r})}}}};
  };
  json good = {{"protocol", "tcp"}, {"address", "1.1.1.1"}, {"port", 443}};
  auto with = [&](const char* k, json v) {
    json r = good;
    r[k] = v;
    return rule(r);
  };
  for (const char* a : {"10.0.0.1", "192.168.1.1", "172.16.0.1", "127.0.0.1", "169.254.169.254",
                        "100.64.0.1", "0.0.0.0", "224.0.0.1", "255.255.255.255", "::1", "fe80::1",
                        "fc00::1", "::ffff:169.254.169.254", "64:ff9b::a9fe:a9fe", "1.1.1.0/24",
                        "one.one.one.one", "", " 1.1.1.1"})
    ExpectInvalid(with("address", a), "network.allow[0].address");
  ExpectInvalid(with("port", 0), "network.allow[0].port");
  ExpectInvalid(with("port", 65536), "network.allow[0].port");
  ExpectInvalid(with("port", "443"), "network.allow[0].port");
  ExpectInvalid(with("protocol", "icmp"), "network.allow[0].protocol");
  ExpectInvalid(with("extra", 1), "network.allow[0].extra");
  json no_port = good;
  no_port.erase("port");
  ExpectInvalid(rule(no_port), "network.allow[0].port");
  json many = json::array();
  for (int i = 0; i < 64; ++i) many.push_back(good);
  EXPECT_TRUE(Parse({{"network", {{"egress", "allowlist"}, {"allow", many}}}}).ok());
  many.push_back(good);
  ExpectInvalid({{"network", {{"egress", "allowlist"}, {"allow", many}}}}, "network.allow");
  ExpectInvalid({{"network", {{"egress", "allowlist"}, {"dns", "10.0.0.53"}}}}, "network.dns");
  ExpectInvalid({{"network", {{"egress", "allowlist"}, {"dns", "dns.google"}}}}, "network.dns");
}

TEST(CreateSandboxFromJson, HostnameRulesAreValidatedAndKeepDns) {
  auto host = [](json h) {
    return json{{"network", {{"egress", "allowlist"}, {"hostnames", json::array({h})}}}};
  };
  for (const char* bad :
       {"*.openai.com", "api..com", "1.1.1.1", "ex ample.com", "bücher.de", "", "api.openai.com.",
        "localhost", "-a.com", "a-.com", "api.-x.com", "api.x-"})
    ExpectInvalid(host({{"hostname", bad}, {"port", 443}}), "network.hostnames[0].hostname");
  EXPECT_TRUE(Parse(host({{"hostname", "xn--bcher-kva.de"}, {"port", 443}})).ok());
  EXPECT_TRUE(Parse(host({{"hostname", "a-b.c-d.io"}, {"port", 443}})).ok());
  ExpectInvalid(host({{"hostname", "api.openai.com"}, {"port", 0}}), "network.hostnames[0].port");
  ExpectInvalid(host({{"hostname", "api.openai.com"}, {"port", 65536}}),
                "network.hostnames[0].port");
  ExpectInvalid(host({{"hostname", "api.openai.com"}}), "network.hostnames[0].port");
  ExpectInvalid(host({{"hostname", "api.openai.com"}, {"port", 443}, {"sni", "x"}}),
                "network.hostnames[0].sni");
  auto ok = Parse(host({{"hostname", "API.OpenAI.com"}, {"port", 443}}));
  ASSERT_TRUE(ok.ok()) << ok.status().message();
  EXPECT_EQ(ok->config["network"]["hostnames"][0]["hostname"], "api.openai.com");
  EXPECT_TRUE(Parse(host({{"hostname", "xn--bcher-kva.de"}, {"port", 8443}})).ok());
  json many = json::array();
  for (int i = 0; i < 64; ++i) many.push_back({{"hostname", "a.example.com"}, {"port", 443}});
  EXPECT_TRUE(Parse({{"network", {{"egress", "allowlist"}, {"hostnames", many}}}}).ok());
  many.push_back({{"hostname", "a.example.com"}, {"port", 443}});
  ExpectInvalid({{"network", {{"egress", "allowlist"}, {"hostnames", many}}}}, "network.hostnames");
  // DNS cannot be disabled while hostname rules are present.
  json no_dns = host({{"hostname", "api.openai.com"}, {"port", 443}});
  no_dns["network"]["dns"] = nullptr;
  ExpectInvalid(no_dns, "network.dns");
}

TEST(CreateSandboxFromJson, RulesWithoutAllowlistAreRefused) {
  ExpectInvalid(json::parse(R"({"network": {"egress": "none",
      "allow": [{"protocol": "tcp", "address": "1.1.1.1", "port": 443}]}})"),
                "network.allow");
  ExpectInvalid(json::parse(R"({"network": {"hostnames": [{"hostname": "a.com", "port": 443}]}})"),
                "network.hostnames");
  ExpectInvalid(json::parse(R"({"network": {"egress": "none", "dns": "1.1.1.1"}})"), "network.dns");
  EXPECT_TRUE(
      Parse(json::parse(R"({"network": {"egress": "none", "allow": [], "dns": null}})")).ok());
}

TEST(CreateSandboxFromJson, CommandModeNeedsANonEmptyArgv) {
  ExpectInvalid({{"startup", {{"mode", "command"}}}}, "startup.argv");
  ExpectInvalid({{"startup", {{"mode", "command"}, {"argv", json::array()}}}}, "startup.argv");
  ExpectInvalid({{"startup", {{"mode", "command"}, {"argv", {""}}}}}, "startup.argv");
  ExpectInvalid({{"startup", {{"mode", "command"}, {"argv", "ls -l"}}}}, "startup.argv");
  ExpectInvalid({{"startup", {{"mode", "command"}, {"argv", {"ls", 1}}}}}, "startup.argv");
  ExpectInvalid({{"startup", {{"mode", "command"}, {"argv", {std::string("a\0b", 3)}}}}},
                "startup.argv");
}

TEST(CreateSandboxFromJson, CommandModeIsNormalized) {
  json s = MustParseConfig(json::parse(
      R"J({"startup": {"argv": ["python", "-c", "print('hello')"], "cwd": "/srv", "user": "1000:1000"}})J"))
      ["startup"];
  EXPECT_EQ(s["mode"], "command") << "argv alone implies command mode";
  EXPECT_EQ(s["argv"], json({"python", "-c", "print('hello')"}));
  EXPECT_TRUE(s["args"].is_null());
  EXPECT_TRUE(s["entrypoint"].is_null());
  EXPECT_EQ(s["cwd"], "/srv");
  EXPECT_EQ(s["user"], "1000:1000");
}

TEST(CreateSandboxFromJson, ArgsAndEntrypointAreRefusedInCommandMode) {
  ExpectInvalid({{"startup", {{"mode", "command"}, {"argv", {"ls"}}, {"args", {"-l"}}}}},
                "startup.args");
  ExpectInvalid({{"startup", {{"mode", "command"}, {"argv", {"ls"}}, {"entrypoint", {"sh"}}}}},
                "startup.entrypoint");
}

TEST(CreateSandboxFromJson, ArgvIsRefusedInImageMode) {
  ExpectInvalid({{"startup", {{"mode", "image"}, {"argv", {"ls"}}}}}, "startup.argv");
}

TEST(CreateSandboxFromJson, ImageModeKeepsOverridesIncludingEmptyArrays) {
  json s = MustParseConfig({{"startup", {{"mode", "image"}}}})["startup"];
  EXPECT_EQ(s["mode"], "image");
  EXPECT_TRUE(s["argv"].is_null());
  EXPECT_TRUE(s["args"].is_null());
  EXPECT_TRUE(s["entrypoint"].is_null());

  s = MustParseConfig(
      {{"startup",
        {{"mode", "image"}, {"args", json::array()}, {"entrypoint", {"/bin/sh"}}}}})["startup"];
  EXPECT_EQ(s["args"], json::array()) << "an empty array clears, so it must survive as []";
  EXPECT_EQ(s["entrypoint"], json({"/bin/sh"}));
  EXPECT_EQ(MustParseConfig({{"startup", json::object()}})["startup"]["mode"], "image");
  ExpectInvalid({{"startup", {{"args", "x"}}}}, "startup.args");
}

TEST(CreateSandboxFromJson, StartupModeCwdAndUserAreValidated) {
  ExpectInvalid({{"startup", {{"mode", "shell"}}}}, "startup.mode");
  ExpectInvalid({{"startup", {{"cwd", "relative/dir"}}}}, "startup.cwd");
  ExpectInvalid({{"startup", {{"cwd", ""}}}}, "startup.cwd");
  ExpectInvalid({{"startup", {{"user", ""}}}}, "startup.user");
  ExpectInvalid({{"startup", {{"user", 1000}}}}, "startup.user");
  ExpectInvalid({{"startup", "python"}}, "startup");
}

TEST(CreateSandboxFromJson, EnvNamesAreValidated) {
  auto ok = Parse({{"env", {{"PATH", "/bin"}, {"_private", "x"}, {"a1", ""}}}});
  ASSERT_TRUE(ok.ok()) << ok.status().message();
  EXPECT_EQ(ok->env,
            (std::map<std::string, std::string>{{"PATH", "/bin"}, {"_private", "x"}, {"a1", ""}}));
  EXPECT_EQ(ok->config.dump().find("/bin"), std::string::npos) << "env values stay out of config";

  ExpectInvalid({{"env", {{"1ABC", "x"}}}}, "env.1ABC");
  ExpectInvalid({{"env", {{"A-B", "x"}}}}, "env.A-B");
  ExpectInvalid({{"env", {{"A=B", "x"}}}}, "env.A=B");
  ExpectInvalid({{"env", {{"", "x"}}}}, "env.");
  ExpectInvalid({{"env", {{"A", 1}}}}, "env.A");
  ExpectInvalid({{"env", {{"A", std::string("x\0y", 3)}}}}, "env.A");
  ExpectInvalid({{"env", json::array({"A=1"})}}, "env");
}

TEST(CreateSandboxFromJson, GpuIsUnsupportedHere) {
  ExpectRefused({{"gpu", {{"type", "h100"}}}}, Code::kUnsupported, "gpu");
  EXPECT_TRUE(Parse({{"secrets", json::array()}}).ok());
  EXPECT_TRUE(Parse({{"gpu", nullptr}, {"storage", nullptr}, {"secrets", nullptr}}).ok());
  ExpectInvalid({{"gpu", "h100"}}, "gpu");
  ExpectInvalid({{"storage", 1}}, "storage");
  ExpectInvalid({{"secrets", "api-token"}}, "secrets");
}

TEST(CreateSandboxFromJson, SecretsAreNamesListedOnce) {
  auto req = Parse({{"secrets", {"API_TOKEN", "db_password"}}});
  ASSERT_TRUE(req.ok()) << req.status().message();
  EXPECT_EQ(req->secrets, (std::vector<std::string>{"API_TOKEN", "db_password"}));
  EXPECT_EQ(req->config["secrets"], json::array());  // the service records names and versions
  ExpectInvalid({{"secrets", {"api-token"}}}, "secrets[0]");
  ExpectInvalid({{"secrets", {"OK", 3}}}, "secrets[1]");
  ExpectInvalid({{"secrets", {"A", "A"}}}, "secrets[1]");
  ExpectInvalid({{"secrets", {""}}}, "secrets[0]");
  ExpectInvalid({{"secrets", {"1ABC"}}}, "secrets[0]");
  ExpectInvalid({{"secrets", {std::string(129, 'A')}}}, "secrets[0]");
  json many = json::array();
  for (int i = 0; i < 65; ++i) many.push_back("S" + std::to_string(i));
  ExpectInvalid({{"secrets", many}}, "secrets");
}

TEST(CreateSandboxFromJson, SecurityProfileAndStartupClass) {
  EXPECT_EQ(MustParseConfig({{"securityProfile", "developer"}})["securityProfile"], "developer");
  ExpectInvalid({{"securityProfile", "root"}}, "securityProfile");
  EXPECT_EQ(MustParseConfig({{"securityProfile", "restricted"}})["securityProfile"], "restricted");
  EXPECT_EQ(MustParseConfig({{"startupClass", "durable"}})["startupClass"], "durable");
  ExpectInvalid({{"startupClass", "fast"}}, "startupClass");
  EXPECT_EQ(MustParseConfig({{"startupClass", "instant"}})["startupClass"], "instant");
}

TEST(CreateSandboxFromJson, DurableSandboxesMountStorage) {
  json c = MustParseConfig({{"startupClass", "durable"}});
  EXPECT_EQ(c["storage"], "default");
  c = MustParseConfig({{"startupClass", "durable"}, {"storage", "data-1"}});
  EXPECT_EQ(c["storage"], "data-1");
  // Naming storage alone makes the sandbox durable.
  c = MustParseConfig({{"storage", "data-1"}});
  EXPECT_EQ(c["startupClass"], "durable");
  EXPECT_EQ(c["storage"], "data-1");
  EXPECT_TRUE(MustParseConfig(json::object())["storage"].is_null());
  EXPECT_TRUE(MustParseConfig({{"startupClass", "instant"}})["storage"].is_null());
}

TEST(CreateSandboxFromJson, InstantSandboxesHaveNoPersistentAttachment) {
  ExpectInvalid({{"startupClass", "instant"}, {"storage", "data"}}, "storage");
  ExpectInvalid({{"startupClass", "durable"}, {"storage", "Bad_Name"}}, "storage");
  ExpectInvalid({{"storage", ""}}, "storage");
  ExpectInvalid({{"storage", "../x"}}, "storage");
}

TEST(CreateSandboxFromJson, ArgvOverTheCommandLimitIsRefused) {
  // Each element counts its bytes plus a terminator.
  std::string half(limits::kMaxArgvBytes / 2 - 1, 'a');
  EXPECT_TRUE(Parse({{"startup", {{"argv", {half, half}}}}}).ok());
  ExpectInvalid({{"startup", {{"argv", {half, half + "a"}}}}}, "startup.argv");
}

}  // namespace
}  // namespace adapt::api
