// SandboxService::Create over a MemoryStore and a FakeRuntime: the row is written provisioning
// and the worker brings it to running (or failed with the runtime's error); an Idempotency-Key
// replays or conflicts; the per-organization cap counts live sandboxes; ids are per organization.
#include <gtest/gtest.h>

#include <boost/asio/post.hpp>
#include <boost/asio/thread_pool.hpp>
#include <future>

#include "core/sandbox_service.h"
#include "core/sandbox_service_fixture.h"
#include "net/policy.h"

namespace adapt::core {
namespace {

using runtime::FakeRuntime;

class SandboxCreateTest : public testing_support::SandboxServiceFixture {
 protected:
  // The smallest request that boots here: the test image, no network (no NetworkManager).
  CreateSandbox Request() {
    CreateSandbox req;
    req.image = testing_support::kTestImage;
    req.network = NetworkRequest{};
    req.network->egress = "none";
    return req;
  }
};

TEST_F(SandboxCreateTest, ACreateIsRecordedProvisioningAndTheWorkerBringsItToRunning) {
  CreateSandbox req = Request();
  req.labels = {{"name", "web"}};
  auto created = service_->Create(Caller(), req, std::nullopt);
  ASSERT_TRUE(created.ok()) << created.status().message();
  EXPECT_EQ(created->status, "provisioning");
  EXPECT_EQ(created->config.image, testing_support::kTestImage);
  EXPECT_EQ(created->config.labels.at("name"), "web");
  Drain();
  EXPECT_EQ(StatusOf(created->id), "running");
  EXPECT_TRUE(runtime_.Running(created->id));
  EXPECT_EQ(runtime_.CountCalls(FakeRuntime::Op::kLaunch, created->id), 1);
  auto read = service_->Get(Caller(), created->id);
  ASSERT_TRUE(read.ok()) << read.status().message();
  EXPECT_EQ(read->status, "running");
  EXPECT_FALSE(read->error.has_value());
}

TEST_F(SandboxCreateTest, ARuntimeFailureFailsTheSandboxWithTheRuntimesError) {
  runtime_.FailNext(FakeRuntime::Op::kLaunch, Internal("runsc create: no space left on device"));
  auto created = service_->Create(Caller(), Request(), std::nullopt);
  ASSERT_TRUE(created.ok()) << created.status().message();
  Drain();
  store::SandboxRecord r = Stored(created->id);
  EXPECT_EQ(r.status, "failed");
  EXPECT_EQ(r.termination_reason, "failed");
  EXPECT_NE(r.error.find("no space left on device"), std::string::npos) << r.error;
  EXPECT_FALSE(runtime_.Running(created->id));
}

TEST_F(SandboxCreateTest, AnInvalidRequestCreatesNothing) {
  CreateSandbox req = Request();
  req.cpu = 999;
  auto created = service_->Create(Caller(), req, std::nullopt);
  EXPECT_EQ(created.status().code(), Code::kInvalidArgument);
  Drain();
  EXPECT_EQ(runtime_.CountCalls(FakeRuntime::Op::kLaunch), 0);
  auto page = service_->List(Caller(), {});
  ASSERT_TRUE(page.ok());
  EXPECT_TRUE(page->items.empty());
}

TEST_F(SandboxCreateTest, TheSameIdempotencyKeyAndRequestReplayTheFirstSandbox) {
  IdempotencyRequest key{"retry-1", "fingerprint-a"};
  auto first = service_->Create(Caller(), Request(), key);
  ASSERT_TRUE(first.ok()) << first.status().message();
  auto again = service_->Create(Caller(), Request(), key);
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_EQ(again->id, first->id);
  Drain();
  EXPECT_EQ(runtime_.CountCalls(FakeRuntime::Op::kLaunch), 1);
  auto page = service_->List(Caller(), {});
  ASSERT_TRUE(page.ok());
  EXPECT_EQ(page->items.size(), 1u);
}

TEST_F(SandboxCreateTest, TheSameIdempotencyKeyWithAnotherRequestIsAConflict) {
  ASSERT_TRUE(service_->Create(Caller(), Request(), IdempotencyRequest{"k", "a"}).ok());
  auto other = service_->Create(Caller(), Request(), IdempotencyRequest{"k", "b"});
  EXPECT_EQ(other.status().code(), Code::kConflict);
  auto empty = service_->Create(Caller(), Request(), IdempotencyRequest{"", "a"});
  EXPECT_EQ(empty.status().code(), Code::kInvalidArgument);
  Drain();
  EXPECT_EQ(runtime_.CountCalls(FakeRuntime::Op::kLaunch), 1);
}

TEST_F(SandboxCreateTest, TheOrganizationsCapCountsLiveSandboxesOnly) {
  service_->set_max_sandboxes_per_org(1);
  auto first = service_->Create(Caller(), Request(), std::nullopt);
  ASSERT_TRUE(first.ok()) << first.status().message();
  auto second = service_->Create(Caller(), Request(), std::nullopt);
  EXPECT_EQ(second.status().code(), Code::kResourceExhausted);
  Drain();
  // Another organization has a cap of its own.
  auto other = store_.CreateOrg({NewId("org"), "globex", false, NowMillis()});
  ASSERT_TRUE(other.ok());
  EXPECT_TRUE(service_->Create(Principal{other->id, "key_2", false}, Request(), std::nullopt).ok());
  // A deleted sandbox no longer counts.
  ASSERT_TRUE(service_->Delete(Caller(), first->id).ok());
  auto third = service_->Create(Caller(), Request(), std::nullopt);
  EXPECT_TRUE(third.ok()) << third.status().message();
  Drain();
}

TEST_F(SandboxCreateTest, OpenEgressRecordsTheResolverItUses) {
  service_->set_default_dns("1.1.1.1");
  auto dns_of = [&](const std::function<void(NetworkRequest&)>& shape) {
    CreateSandbox req = Request();
    req.network = NetworkRequest{};
    shape(*req.network);
    auto created = service_->Create(Caller(), req, std::nullopt);
    EXPECT_TRUE(created.ok()) << created.status().message();
    return created.ok() ? created->config.network.dns : std::optional<std::string>("(failed)");
  };
  // Seed 001: "Public internet mode defaults to 1.1.1.1".
  EXPECT_EQ(dns_of([](NetworkRequest&) {}), "1.1.1.1");
  // "... or null to disable DNS": recorded as disabled, so that the boot's egress policy (which
  // gives a record with no resolver adaptd's --dns) writes none into /etc/resolv.conf.
  EXPECT_EQ(dns_of([](NetworkRequest& n) { n.dns_cleared = true; }), std::nullopt);
  {
    CreateSandbox req = Request();
    req.network = NetworkRequest{};
    req.network->dns_cleared = true;
    auto created = service_->Create(Caller(), req, std::nullopt);
    ASSERT_TRUE(created.ok()) << created.status().message();
    const store::NetworkConfig stored = Stored(created->id).config.network;
    EXPECT_TRUE(stored.dns_disabled);
    auto policy = net::PolicyFor(stored, "1.1.1.1");
    ASSERT_TRUE(policy.ok()) << policy.status().message();
    EXPECT_EQ(policy->dns, "");
    auto usual = net::PolicyFor(store::NetworkConfig{}, "1.1.1.1");
    ASSERT_TRUE(usual.ok());
    EXPECT_EQ(usual->dns, "1.1.1.1");
  }
  EXPECT_EQ(dns_of([](NetworkRequest& n) { n.dns = "9.9.9.9"; }), "9.9.9.9");
  // Restricted mode has no DNS unless asked for; hostname rules' default answers only their
  // names, which a named resolver would not.
  EXPECT_EQ(dns_of([](NetworkRequest& n) { n.egress = "allowlist"; }), std::nullopt);
  EXPECT_EQ(dns_of([](NetworkRequest& n) {
              n.egress = "allowlist";
              n.hostnames = std::vector<HostnameRuleRequest>{{"api.example.com", 443}};
            }),
            std::nullopt);
  EXPECT_EQ(dns_of([](NetworkRequest& n) { n.egress = "none"; }), std::nullopt);
  // adaptd run with no open-mode resolver (--dns ''): none recorded.
  service_->set_default_dns("");
  EXPECT_EQ(dns_of([](NetworkRequest&) {}), std::nullopt);
  Drain();
}

TEST_F(SandboxCreateTest, AnotherOrganizationsSandboxIsNotFound) {
  auto created = service_->Create(Caller(), Request(), std::nullopt);
  ASSERT_TRUE(created.ok()) << created.status().message();
  Drain();
  Principal stranger{"org_other", "key_2", false};
  EXPECT_EQ(service_->Get(stranger, created->id).status().code(), Code::kNotFound);
  EXPECT_EQ(service_->Stop(stranger, created->id).status().code(), Code::kNotFound);
  EXPECT_EQ(service_->Delete(stranger, created->id).status().code(), Code::kNotFound);
  auto page = service_->List(stranger, {});
  ASSERT_TRUE(page.ok());
  EXPECT_TRUE(page->items.empty());
  EXPECT_EQ(StatusOf(created->id), "running");
}

}  // namespace
}  // namespace adapt::core
