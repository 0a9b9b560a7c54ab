// Warm pool specs and which creates a booted sandbox can serve.
#include "core/warm_pool_spec.h"

#include <gtest/gtest.h>

#include "core/sandbox_request.h"

namespace adapt::core {
namespace {

template <typename F>
CreateSandbox With(F set) {
  CreateSandbox req;
  set(req);
  return req;
}

const std::string kDns = "1.1.1.1";

SandboxConfig Config(const CreateSandbox& create) {
  auto req = ValidateCreateSandbox(create, "debian:12");
  EXPECT_TRUE(req.ok()) << req.status().message();
  return req.ok() ? req->config : SandboxConfig{};
}

TEST(PoolSpecTest, ParsesImageSizeAndShapeWithCreateDefaults) {
  auto spec = ParsePoolSpec("debian:12=2");
  ASSERT_TRUE(spec.ok()) << spec.status().message();
  EXPECT_EQ(spec->image, "debian:12");
  EXPECT_EQ(spec->size, 2);
  EXPECT_EQ(spec->cpu, 1);
  EXPECT_EQ(spec->memory_mib, 1024);
  EXPECT_EQ(spec->disk_mib, 2048);
  auto shaped = ParsePoolSpec("registry.example/x:1=3,cpu=2,memoryMiB=512,diskMiB=4096");
  ASSERT_TRUE(shaped.ok()) << shaped.status().message();
  EXPECT_EQ(shaped->image, "registry.example/x:1");
  EXPECT_EQ(shaped->cpu, 2);
  EXPECT_EQ(shaped->memory_mib, 512);
  EXPECT_EQ(shaped->disk_mib, 4096);
  EXPECT_NE(spec->Key(), shaped->Key());
}

TEST(PoolSpecTest, RefusesMalformedSpecs) {
  for (const char* bad :
       {"debian:12", "=2", "debian:12=x", "debian:12=65", "debian:12=1,cpu=0", "debian:12=1,gpu=1",
        "debian:12=1,cpu=1,cpu=2", "debian:12=1,memoryMiB", "debian:12=1,diskMiB=1"}) {
    EXPECT_FALSE(ParsePoolSpec(bad).ok()) << bad;
  }
}

TEST(PoolSpecTest, ListsSplitOnSemicolonsDropEmptyPoolsAndRefuseDuplicates) {
  auto specs = ParsePoolSpecs({"debian:12=1;debian:12=2,cpu=2", "alpine:3=0"});
  ASSERT_TRUE(specs.ok()) << specs.status().message();
  ASSERT_EQ(specs->size(), 2u);
  EXPECT_EQ((*specs)[1].cpu, 2);
  EXPECT_FALSE(ParsePoolSpecs({"debian:12=1", "debian:12=2"}).ok());
  EXPECT_TRUE(ParsePoolSpecs({})->empty());
}

TEST(PoolFitTest, DefaultCreateFitsTheDefaultPool) {
  PoolFit fit = FitForPool(Config({}), kDns);
  EXPECT_EQ(fit.reason, "");
  EXPECT_EQ(fit.key, ParsePoolSpec("debian:12=1")->Key());
  // env, labels, ttl and allowlist policies are applied on claim: same pool.
  CreateSandbox applied_create;
  applied_create.env = {{"A", "1"}};
  applied_create.labels = {{"team", "x"}};
  applied_create.ttl_seconds = 60;
  applied_create.network.emplace().egress = "allowlist";
  PoolFit applied = FitForPool(Config(applied_create), kDns);
  EXPECT_EQ(applied.key, fit.key);
  PoolFit shaped = FitForPool(Config(With([](auto& r) { r.cpu = 2; })), kDns);
  EXPECT_EQ(shaped.key, ParsePoolSpec("debian:12=1,cpu=2")->Key());
}

TEST(PoolFitTest, BootTimeSettingsSayWhy) {
  PoolFit startup = FitForPool(Config(With([](auto& r) {
                                 r.startup.emplace().mode = "command";
                                 r.startup->argv = {true, std::vector<std::string>{"true"}};
                               })),
                               kDns);
  EXPECT_EQ(startup.key, "");
  EXPECT_NE(startup.reason.find("startup"), std::string::npos);
  PoolFit durable = FitForPool(Config(With([](auto& r) { r.startup_class = "durable"; })), kDns);
  EXPECT_NE(durable.reason.find("durable"), std::string::npos);
  PoolFit dns =
      FitForPool(Config(With([](auto& r) { r.network.emplace().dns = "192.0.2.1"; })), kDns);
  EXPECT_NE(dns.reason.find("network.dns"), std::string::npos);
  // Open egress recorded with the default resolver (what a create that names none gets) is
  // what a member has; another resolver, or the default named for an allowlist, is not.
  SandboxConfig open_default = Config({});
  open_default.network.dns = kDns;
  EXPECT_EQ(FitForPool(open_default, kDns).reason, "");
  EXPECT_EQ(FitForPool(open_default, kDns).key, FitForPool(Config({}), kDns).key);
  EXPECT_NE(FitForPool(open_default, "9.9.9.9").reason.find("network.dns"), std::string::npos);
  PoolFit allow_dns = FitForPool(Config(With([](auto& r) {
                                   r.network.emplace().egress = "allowlist";
                                   r.network->dns = "1.1.1.1";
                                 })),
                                 kDns);
  EXPECT_NE(allow_dns.reason.find("network.dns"), std::string::npos);
  // Open egress with network.dns null boots with no resolver; a member has the default one.
  PoolFit no_dns =
      FitForPool(Config(With([](auto& r) { r.network.emplace().dns_cleared = true; })), kDns);
  EXPECT_EQ(no_dns.key, "");
  EXPECT_NE(no_dns.reason.find("network.dns null"), std::string::npos);
  PoolFit none =
      FitForPool(Config(With([](auto& r) { r.network.emplace().egress = "none"; })), kDns);
  EXPECT_EQ(none.key, "");
  EXPECT_NE(none.reason.find("egress none"), std::string::npos);
  PoolFit developer =
      FitForPool(Config(With([](auto& r) { r.security_profile = "developer"; })), kDns);
  EXPECT_EQ(developer.key, "");
  EXPECT_NE(developer.reason.find("restricted"), std::string::npos);
}

}  // namespace
}  // namespace adapt::core
