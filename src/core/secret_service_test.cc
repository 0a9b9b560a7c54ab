// SecretService over a real SQLite store: values sealed at rest, never in views, versions,
// per-organization keys, sandbox capture.
#include "core/secret_service.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <condition_variable>
#include <filesystem>
#include <future>
#include <mutex>
#include <nlohmann/json.hpp>

#include "base/hex.h"
#include "base/ids.h"
#include "core/sandbox_request.h"
#include "core/secret_cipher.h"
#include "os/temp_dir.h"
#include "store/memory_store.h"
#include "store/store.h"

namespace adapt::core {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

const std::string kMaster(32, 'k');

// Pins the derivation: secrets sealed by earlier builds must keep opening. Expected value from
// `openssl kdf -keylen 32 -kdfopt digest:SHA512 ... HKDF` (salt "adapt-secrets-v1", info
// "org:org_a") and, independently, Python's hmac module.
TEST(SecretCipher, DerivesAFixedHkdfSha512Key) {
  auto key = DeriveSecretKey(kMaster, "org_a");
  ASSERT_TRUE(key.ok());
  EXPECT_EQ(HexEncode(*key), "e0a9aa8d1d907e197d75924383804880c9475567bd4820bc5b78c45882ba713f");
}

TEST(SecretCipher, SealsAndOpensOnlyWithTheSameKeyAndName) {
  auto key = DeriveSecretKey(kMaster, "org_a");
  auto other = DeriveSecretKey(kMaster, "org_b");
  ASSERT_TRUE(key.ok() && other.ok());
  EXPECT_NE(*key, *other);
  auto sealed = SealSecret(*key, "NAME", "hunter2-value");
  ASSERT_TRUE(sealed.ok());
  EXPECT_EQ(sealed->find("hunter2"), std::string::npos);
  EXPECT_EQ(*OpenSecret(*key, "NAME", *sealed), "hunter2-value");
  EXPECT_FALSE(OpenSecret(*other, "NAME", *sealed).ok());
  EXPECT_FALSE(OpenSecret(*key, "OTHER", *sealed).ok());
  std::string flipped = *sealed;
  flipped[30] = flipped[30] == '0' ? '1' : '0';
  EXPECT_FALSE(OpenSecret(*key, "NAME", flipped).ok());
  EXPECT_NE(*SealSecret(*key, "NAME", "x"), *SealSecret(*key, "NAME", "x"));  // fresh nonces
  EXPECT_EQ(*OpenSecret(*key, "E", *SealSecret(*key, "E", "")), "");
}

// Opening keeps a context per thread with its key set up: opens under other keys, failed
// opens and opens in between leave every later one right.
TEST(SecretCipher, OpensInAnyOrderOfKeysAndFailures) {
  auto a = DeriveSecretKey(std::string(32, 'm'), "org_a");
  auto b = DeriveSecretKey(std::string(32, 'm'), "org_b");
  ASSERT_TRUE(a.ok() && b.ok());
  auto sealed_a = SealSecret(*a, "X", "value-a");
  auto sealed_b = SealSecret(*b, "X", "value-b");
  ASSERT_TRUE(sealed_a.ok() && sealed_b.ok());
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(*OpenSecret(*a, "X", *sealed_a), "value-a");
    EXPECT_EQ(*OpenSecret(*a, "X", *sealed_a), "value-a");
    EXPECT_FALSE(OpenSecret(*a, "X", *sealed_b).ok());
    EXPECT_FALSE(OpenSecret(*a, "Y", *sealed_a).ok());
    EXPECT_EQ(*OpenSecret(*a, "X", *sealed_a), "value-a");
    EXPECT_EQ(*OpenSecret(*b, "X", *sealed_b), "value-b");
    EXPECT_FALSE(OpenSecret(*b, "X", *sealed_a).ok());
    EXPECT_EQ(*OpenSecret(*b, "X", *sealed_b), "value-b");
  }
}

class SecretServiceTest : public testing::Test {
 protected:
  void SetUp() override {
    auto s = store::OpenSqliteStore(dir_ + "/adapt.db");
    ASSERT_TRUE(s.ok()) << s.status().message();
    store_ = std::move(*s);
    org_ = store_->CreateOrg({NewId("org"), "acme", false, 1000})->id;
    other_ = store_->CreateOrg({NewId("org"), "other", false, 1000})->id;
    service_ = std::make_unique<SecretService>(*store_, kMaster);
  }
  void TearDown() override {
    service_.reset();
    store_.reset();
  }
  os::TempDir tmp_{"secrets-test"};
  const std::string dir_ = tmp_.path();
  std::string org_, other_;
  std::unique_ptr<store::Store> store_;
  std::unique_ptr<SecretService> service_;
};

TEST_F(SecretServiceTest, SetMakesVersionsAndNeverShowsTheValue) {
  auto v1 = service_->Set(org_, {"API_TOKEN", "tok-one"});
  ASSERT_TRUE(v1.ok()) << v1.status().message();
  EXPECT_TRUE(v1->created);
  EXPECT_EQ(v1->secret.version, 1);
  auto v2 = service_->Set(org_, {"API_TOKEN", "tok-two"});
  ASSERT_TRUE(v2.ok());
  EXPECT_FALSE(v2->created);
  EXPECT_EQ(v2->secret.version, 2);
  EXPECT_EQ(v2->secret.name, "API_TOKEN");
  EXPECT_GE(v2->secret.updated_at, v2->secret.created_at);
  ASSERT_EQ(service_->List(org_, {})->items.size(), 1u);
  EXPECT_EQ(service_->Get(org_, "API_TOKEN")->version, 2);
  // At rest: sealed.
  auto row = store_->GetSecret(org_, "API_TOKEN");
  ASSERT_TRUE(row.ok());
  EXPECT_EQ(row->ciphertext.find("tok-two"), std::string::npos);
  EXPECT_EQ(*service_->Reveal(org_, "API_TOKEN", "f"), "tok-two");
}

// API.md's list contract: newest first by creation (a new value keeps a secret's place),
// limit 1..200, and a cursor that a secret made between pages does not disturb.
TEST_F(SecretServiceTest, ListIsNewestFirstAndPagesStablyAcrossACreateBetweenPages) {
  for (const char* name : {"ZED", "ALPHA", "MID"})
    ASSERT_TRUE(service_->Set(org_, {name, "v"}).ok());
  ASSERT_TRUE(service_->Set(org_, {"ZED", "v2"}).ok());
  auto first = service_->List(org_, {2, ""});
  ASSERT_TRUE(first.ok()) << first.status().message();
  ASSERT_EQ(first->items.size(), 2u);
  EXPECT_EQ(first->items[0].name, "MID");
  EXPECT_EQ(first->items[1].name, "ALPHA");
  ASSERT_TRUE(first->next_cursor);
  ASSERT_TRUE(service_->Set(org_, {"NEWER", "v"}).ok());
  auto second = service_->List(org_, {2, *first->next_cursor});
  ASSERT_TRUE(second.ok()) << second.status().message();
  ASSERT_EQ(second->items.size(), 1u);
  EXPECT_EQ(second->items[0].name, "ZED");
  EXPECT_FALSE(second->next_cursor);
  EXPECT_EQ(service_->List(org_, {0, ""}).status().field(), "limit");
  EXPECT_EQ(service_->List(org_, {201, ""}).status().field(), "limit");
  EXPECT_EQ(service_->List(org_, {5, "garbage"}).status().field(), "cursor");
}

TEST_F(SecretServiceTest, BadInputIsRefusedWithItsField) {
  auto field = [&](const SetSecret& request) {
    auto r = service_->Set(org_, request);
    return r.ok() ? std::string("ok") : r.status().field();
  };
  EXPECT_EQ(field({"bad-name", "x"}), "name");
  EXPECT_EQ(field({"", "x"}), "name");
  EXPECT_EQ(field({"A", std::string(32 * 1024 + 1, 'v')}), "value");
  EXPECT_EQ(field({"A", std::string("a\0b", 3)}), "value");
  EXPECT_EQ(field({"A", std::string(32 * 1024, 'v')}), "ok");
  EXPECT_EQ(service_->List(org_, {})->items.size(), 1u);
}

// A MemoryStore whose secret lists wait (up to 300 ms) for a second list: two sets of new
// names that both count before either inserts would each see room below the cap.
class StoreThatListsTogether : public store::MemoryStore {
 public:
  Result<std::vector<store::SecretRecord>> ListSecrets(const std::string& org_id) override {
    auto all = MemoryStore::ListSecrets(org_id);
    std::unique_lock lock(mu_);
    ++lists_;
    together_.notify_all();
    together_.wait_for(lock, 300ms, [&] { return lists_ >= 2; });
    return all;
  }

 private:
  std::mutex mu_;
  std::condition_variable together_;
  int lists_ = 0;
};

TEST(SecretServiceCap, TwoNewSecretsAtOnceDoNotPassTheCapTogether) {
  StoreThatListsTogether store;
  SecretService service(store, kMaster);
  for (size_t i = 0; i + 1 < kMaxSecretsPerOrg; ++i)
    ASSERT_TRUE(store.PutSecret({"org_a", "S" + std::to_string(i), 0, "sealed", 0, 0}).ok());
  auto set = [&](const char* name) { return service.Set("org_a", {name, "v"}); };
  auto one = std::async(std::launch::async, set, "LAST_ONE");
  auto two = std::async(std::launch::async, set, "LAST_TWO");
  auto a = one.get();
  auto b = two.get();
  EXPECT_NE(a.ok(), b.ok()) << "both or neither were stored";
  const auto& refused = a.ok() ? b : a;
  EXPECT_EQ(refused.status().code(), Code::kResourceExhausted) << refused.status().message();
  EXPECT_EQ(store.ListSecrets("org_a")->size(), kMaxSecretsPerOrg);
}

TEST_F(SecretServiceTest, OrganizationsSeeOnlyTheirOwnSecrets) {
  ASSERT_TRUE(service_->Set(org_, {"DB", "pw"}).ok());
  EXPECT_EQ(service_->Get(other_, "DB").status().code(), Code::kNotFound);
  EXPECT_EQ(service_->Delete(other_, "DB").code(), Code::kNotFound);
  auto cap = service_->Capture(other_, {"DB"}, "secrets");
  EXPECT_EQ(cap.status().code(), Code::kInvalidArgument);
  EXPECT_EQ(cap.status().field(), "secrets[0]");
  EXPECT_TRUE(service_->Delete(org_, "DB").ok());
  EXPECT_EQ(service_->Get(org_, "DB").status().code(), Code::kNotFound);
}

TEST_F(SecretServiceTest, AttachSecretsCapturesVersionsAndOverridesLocalEnv) {
  ASSERT_TRUE(service_->Set(org_, {"TOKEN", "v1"}).ok());
  ASSERT_TRUE(service_->Set(org_, {"TOKEN", "v2"}).ok());
  CreateSandbox create;
  create.env = {{"TOKEN", "local"}, {"MODE", "x"}};
  create.secrets = {"TOKEN"};
  auto req = ValidateCreateSandbox(create, "debian:12");
  ASSERT_TRUE(req.ok());
  ASSERT_TRUE(AttachSecrets(service_.get(), org_, *req).ok());
  EXPECT_EQ(req->env["TOKEN"], "v2");
  EXPECT_EQ(req->env["MODE"], "x");
  EXPECT_EQ(req->config.secrets, (std::vector<store::AttachedSecretConfig>{{"TOKEN", 2}}));
  CreateSandbox two;
  two.secrets = {"TOKEN", "NOPE"};
  auto missing = ValidateCreateSandbox(two, "debian:12");
  ASSERT_TRUE(missing.ok());
  Status st = AttachSecrets(service_.get(), org_, *missing);
  EXPECT_EQ(st.field(), "secrets[1]");
  EXPECT_EQ(AttachSecrets(nullptr, org_, *missing).code(), Code::kUnsupported);
}

}  // namespace
}  // namespace adapt::core
