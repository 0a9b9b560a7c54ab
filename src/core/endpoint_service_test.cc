// EndpointService's typed verbs over a real SQLite store: creation checks, the organization's
// list, and removal by port or id (MCP's disable_sandbox_app, REST's DELETE ...?port=).
#include "core/endpoint_service.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <set>

#include "base/ids.h"
#include "base/time.h"
#include "os/temp_dir.h"
#include "store/store.h"

namespace adapt::core {
namespace {

class EndpointServiceTest : public testing::Test {
 protected:
  void SetUp() override {
    auto s = store::OpenSqliteStore(dir_ + "/adapt.db");
    ASSERT_TRUE(s.ok()) << s.status().message();
    store_ = std::move(*s);
    org_ = {store_->CreateOrg({NewId("org"), "acme", false, 1000})->id, "", false};
    other_ = {store_->CreateOrg({NewId("org"), "other", false, 1000})->id, "", false};
    network_ = std::make_unique<net::NetworkManager>(*store_, net::NetworkOptions{});
    service_ = std::make_unique<EndpointService>(*store_, *store_, *network_, EndpointOptions{});
    service_->SetPorts(8080, 443);
    sandbox_ = Sandbox("running");
  }
  void TearDown() override {
    service_.reset();
    network_.reset();
    store_.reset();
  }
  std::string Sandbox(const std::string& status) {
    store::SandboxRecord r;
    r.id = NewId("sbx");
    r.org_id = org_.org_id;
    r.status = status;
    r.config.network.egress = "open";
    r.created_at = r.updated_at = NowMillis();
    EXPECT_TRUE(store_->CreateSandbox(r, std::nullopt).ok());
    return r.id;
  }
  std::string Expose(int64_t port) {
    auto e = service_->Create(org_, sandbox_, {port});
    EXPECT_TRUE(e.ok()) << e.status().message();
    return e.ok() ? e->id : "";
  }

  os::TempDir tmp_{"endpoints-test"};
  const std::string dir_ = tmp_.path();
  std::string sandbox_;
  Principal org_, other_;
  std::unique_ptr<store::Store> store_;
  std::unique_ptr<net::NetworkManager> network_;
  std::unique_ptr<EndpointService> service_;
};

TEST_F(EndpointServiceTest, CreateGivesARandomHostnameAndItsUrls) {
  auto e = service_->Create(org_, sandbox_, {8000});
  ASSERT_TRUE(e.ok()) << e.status().message();
  EXPECT_EQ(e->sandbox_id, sandbox_);
  EXPECT_EQ(e->port, 8000);
  EXPECT_EQ(e->url, "https://" + e->hostname);  // 443: no port in the URL
  EXPECT_EQ(e->http_url, "http://" + e->hostname + ":8080");
  EXPECT_GT(e->created_at_ms, 0);
}

TEST_F(EndpointServiceTest, BadPortsAndStoppedSandboxesAreRefusedAndChangeNothing) {
  for (int64_t port : {0, -1, 65536}) {
    auto e = service_->Create(org_, sandbox_, {port});
    ASSERT_FALSE(e.ok());
    EXPECT_EQ(e.status().field(), "port");
  }
  EXPECT_EQ(service_->Create(org_, Sandbox("stopped"), {80}).status().code(), Code::kConflict);
  EXPECT_EQ(service_->Create(other_, sandbox_, {80}).status().code(), Code::kNotFound);
  EXPECT_TRUE(service_->List(org_, "")->empty());
}

TEST_F(EndpointServiceTest, RemoveByPortTakesEveryRouteToThatPortOnly) {
  std::string a = Expose(8000), b = Expose(8000), c = Expose(9000);
  auto removed = service_->Remove(org_, {sandbox_, std::nullopt, 8000});
  ASSERT_TRUE(removed.ok()) << removed.status().message();
  EXPECT_EQ(std::set<std::string>(removed->begin(), removed->end()), (std::set<std::string>{a, b}));
  auto left = service_->List(org_, sandbox_);
  ASSERT_TRUE(left.ok());
  ASSERT_EQ(left->size(), 1u);
  EXPECT_EQ((*left)[0].id, c);
  // Already gone: no error, nothing removed.
  EXPECT_TRUE(service_->Remove(org_, {sandbox_, std::nullopt, 8000})->empty());
  EXPECT_EQ(*service_->Remove(org_, {sandbox_, c, std::nullopt}), std::vector<std::string>{c});
  EXPECT_TRUE(service_->List(org_, sandbox_)->empty());
}

TEST_F(EndpointServiceTest, RemoveNeedsAnIdOrAPortAndTheCallersSandbox) {
  Expose(8000);
  EXPECT_EQ(service_->Remove(org_, {sandbox_, std::nullopt, std::nullopt}).status().code(),
            Code::kInvalidArgument);
  EXPECT_EQ(service_->Remove(other_, {sandbox_, std::nullopt, 8000}).status().code(),
            Code::kNotFound);
  EXPECT_EQ(service_->List(org_, sandbox_)->size(), 1u);
}

TEST_F(EndpointServiceTest, TheOrganizationsListHoldsEverySandboxesRoutesAndNoOneElses) {
  std::string a = Expose(8000);
  std::string second = sandbox_ = Sandbox("running");
  std::string b = Expose(8001);
  auto all = service_->List(org_, "");
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->size(), 2u);
  EXPECT_EQ(std::set<std::string>({(*all)[0].id, (*all)[1].id}), (std::set<std::string>{a, b}));
  EXPECT_TRUE(service_->List(other_, "")->empty());
  EXPECT_EQ(service_->List(other_, second).status().code(), Code::kNotFound);
}

TEST_F(EndpointServiceTest, PagesAreNewestFirstAndAnInsertBetweenPagesChangesNoLaterPage) {
  std::string a = Expose(8000), b = Expose(8001), c = Expose(8002);
  auto first = service_->List(org_, sandbox_, PageRequest{2, ""});
  ASSERT_TRUE(first.ok()) << first.status().message();
  ASSERT_EQ(first->items.size(), 2u);
  EXPECT_EQ(first->items[0].id, c);
  EXPECT_EQ(first->items[1].id, b);
  ASSERT_TRUE(first->next_cursor);
  Expose(8003);
  auto second = service_->List(org_, "", PageRequest{2, *first->next_cursor});
  ASSERT_TRUE(second.ok()) << second.status().message();
  ASSERT_EQ(second->items.size(), 1u);
  EXPECT_EQ(second->items[0].id, a);
  EXPECT_FALSE(second->next_cursor);
  EXPECT_EQ(service_->List(org_, sandbox_, PageRequest{0, ""}).status().field(), "limit");
  EXPECT_EQ(service_->List(org_, sandbox_, PageRequest{2, "x"}).status().field(), "cursor");
  EXPECT_TRUE(service_->List(other_, "", PageRequest{})->items.empty());
}

}  // namespace
}  // namespace adapt::core
