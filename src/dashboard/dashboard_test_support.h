// A MemoryStore with organization org_acme, a key for it and a user of it, for the dashboard's
// unit tests.
#pragma once

#include <gtest/gtest.h>

#include "core/auth.h"
#include "core/users.h"
#include "dashboard/dashboard_sessions.h"
#include "store/memory_store.h"

namespace adapt::dashboard {

class DashboardFixture : public testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(store_.CreateOrg({"org_acme", "acme", true, 1}).ok());
    const core::Principal admin{"org_admin", "key_admin", true};
    auto key = auth_.CreateKey(admin, "org_acme", "laptop");
    ASSERT_TRUE(key.ok());
    key_ = key->key;
    key_id_ = key->record.id;
    ASSERT_TRUE(users_.Add(admin, "org_acme", "ada@example.com", "a long password").ok());
  }

  store::MemoryStore store_;
  core::Auth auth_{store_};
  core::Users users_{store_};
  int64_t now_ = 1'000'000;
  DashboardSessions sessions_{store_, auth_, users_, [this] { return now_; }};
  std::string key_;
  std::string key_id_;
};

}  // namespace adapt::dashboard
