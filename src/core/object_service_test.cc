// ObjectService over a MemoryStore, the filesystem object store in a temporary directory and a
// FakeRuntime: objects per organization (list, text, signed links), a sandbox's artifacts, the
// workspace copy's refusals (by the name asked for, and by the file the sandbox reports it
// opened, with a host shell standing in for the agent; real sandboxes: tests/e2e), and
// attaching the storage gateway to a sandbox.
#include "core/object_service.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <boost/asio/post.hpp>
#include <boost/asio/thread_pool.hpp>
#include <future>
#include <map>

#include "base/hex.h"
#include "base/percent.h"
#include "core/core_test_fixture.h"
#include "storage/object_store_fixture.h"

namespace adapt::core {
namespace {

using runtime::FakeRuntime;

using storage::testing_support::FromString;

// A stand-in for the agent's `get PATH --header --opened-path`: it opened `opened` and sends
// `data`.
std::vector<std::string> AgentOpened(const std::string& opened, const std::string& data) {
  return {"/bin/sh",
          "-c",
          "printf '%s %s\\n%s' \"$1\" \"$2\" \"$3\"",
          "agent",
          std::to_string(data.size()),
          HexEncode(opened),
          data};
}

// The query parameters of a signed link.
std::map<std::string, std::string> QueryOf(const std::string& url) {
  std::map<std::string, std::string> out;
  std::string q = url.substr(url.find('?') + 1);
  size_t start = 0;
  while (start <= q.size()) {
    size_t amp = q.find('&', start);
    std::string part = q.substr(start, amp == std::string::npos ? std::string::npos : amp - start);
    size_t eq = part.find('=');
    out[part.substr(0, eq)] = PercentDecode(part.substr(eq + 1), PlusSign::kSpace).value_or("");
    if (amp == std::string::npos) break;
    start = amp + 1;
  }
  return out;
}

class ObjectServiceTest : public testing_support::CoreTest {
 protected:
  void SetUp() override {
    CoreTest::SetUp();
    objects_ = std::make_unique<storage::ObjectStore>(store_, dir_ + "/objects");
    ASSERT_TRUE(objects_->Init().ok());
    tokens_ = std::make_unique<storage::StorageTokens>(store_, dir_ + "/storage.key");
    ASSERT_TRUE(tokens_->Init().ok());
    files_ = std::make_unique<FileService>(store_, runtime_);
    lifecycle_ = std::make_unique<SandboxLifecycle>(store_, runtime_, *images_, events_);
    sandboxes_ = std::make_unique<SandboxService>(store_, runtime_, *lifecycle_, *images_, workers_,
                                                  testing_support::kTestImage);
    service_ =
        std::make_unique<ObjectService>(store_, store_, *objects_, *tokens_, *files_, *sandboxes_);
    service_->SetGatewayPort(9000);
    service_->SetApiBase("http://127.0.0.1:8080");
  }
  void TearDown() override {
    workers_.join();
    CoreTest::TearDown();
  }

  Principal Caller() { return Principal{org_, "key_1", false}; }
  Principal Stranger() { return Principal{"org_other", "key_2", false}; }

  void PutObject(const std::string& key, const std::string& text, const Principal& who) {
    auto r = service_->Put(who, key, "text/plain", FromString(text));
    ASSERT_TRUE(r.ok()) << r.status().message();
  }

  void Drain() {
    std::promise<void> done;
    boost::asio::post(workers_, [&done] { done.set_value(); });
    done.get_future().wait();
  }

  // A sandbox of the caller's with a recorded network whose host end is 10.88.0.1.
  store::SandboxRecord WithNetwork(const std::string& status) {
    store::SandboxRecord r = Insert(NewSandbox(status));
    store::NetworkRecord n;
    n.sandbox_id = r.id;
    n.slot = 0;
    n.address = "10.88.0.2";
    n.host_address = "10.88.0.1";
    EXPECT_TRUE(store_.PutNetwork(n).ok());
    return r;
  }

  boost::asio::thread_pool workers_{1};
  std::unique_ptr<storage::ObjectStore> objects_;
  std::unique_ptr<storage::StorageTokens> tokens_;
  std::unique_ptr<FileService> files_;
  std::unique_ptr<SandboxLifecycle> lifecycle_;
  std::unique_ptr<SandboxService> sandboxes_;
  std::unique_ptr<ObjectService> service_;
};

TEST_F(ObjectServiceTest, ListingSeesOnlyTheCallersObjectsAndRollsUpByDelimiter) {
  PutObject("docs/a.txt", "a", Caller());
  PutObject("docs/sub/b.txt", "b", Caller());
  PutObject("docs/c.txt", "c", Stranger());
  auto list = service_->List(Caller(), {"docs/", "/", {100, ""}});
  ASSERT_TRUE(list.ok()) << list.status().message();
  ASSERT_EQ(list->items.size(), 1u);
  EXPECT_EQ(list->items[0].key, "docs/a.txt");
  EXPECT_EQ(list->common_prefixes, (std::vector<std::string>{"docs/sub/"}));
  auto bad = service_->List(Caller(), {"", "", {0, ""}});
  EXPECT_EQ(bad.status().code(), Code::kInvalidArgument);
  EXPECT_EQ(bad.status().field(), "limit");
  EXPECT_EQ(service_->List(Caller(), {"", "", {201, ""}}).status().field(), "limit");
  EXPECT_EQ(service_->List(Caller(), {"", "", {5, "c12"}}).status().field(), "cursor");
}

// Key order, a page at a time: a key written between pages after the cursor's key is on a
// later page, one before it is not, and none is repeated.
TEST_F(ObjectServiceTest, KeyOrderedPagesSeeEachKeyOnceAcrossAWriteBetweenPages) {
  for (const char* key : {"p/b", "p/d"}) PutObject(key, "x", Caller());
  auto first = service_->List(Caller(), {"p/", "", {1, ""}});
  ASSERT_TRUE(first.ok()) << first.status().message();
  ASSERT_EQ(first->items.size(), 1u);
  EXPECT_EQ(first->items[0].key, "p/b");
  ASSERT_TRUE(first->next_cursor);
  PutObject("p/a", "x", Caller());
  PutObject("p/c", "x", Caller());
  std::vector<std::string> rest;
  std::string cursor = *first->next_cursor;
  for (int i = 0; i < 5 && !cursor.empty(); ++i) {
    auto page = service_->List(Caller(), {"p/", "", {1, cursor}});
    ASSERT_TRUE(page.ok()) << page.status().message();
    for (const auto& o : page->items) rest.push_back(o.key);
    cursor = page->next_cursor.value_or("");
  }
  EXPECT_EQ(rest, (std::vector<std::string>{"p/c", "p/d"}));
}

TEST_F(ObjectServiceTest, ReadTextReturnsTextAndRefusesBinaryTooLargeAndOthersObjects) {
  PutObject("notes.md", "# hello\n", Caller());
  PutObject("blob.bin", std::string("\x00\x01\xff", 3), Caller());
  auto text = service_->ReadText(Caller(), "notes.md", 1024);
  ASSERT_TRUE(text.ok()) << text.status().message();
  EXPECT_EQ(text->text, "# hello\n");
  EXPECT_EQ(service_->ReadText(Caller(), "notes.md", 4).status().code(), Code::kPayloadTooLarge);
  auto binary = service_->ReadText(Caller(), "blob.bin", 1024);
  EXPECT_EQ(binary.status().code(), Code::kInvalidArgument);
  EXPECT_EQ(binary.status().field(), "key");
  EXPECT_EQ(service_->ReadText(Stranger(), "notes.md", 1024).status().code(), Code::kNotFound);
}

TEST_F(ObjectServiceTest, ASignedLinkOpensExactlyItsObjectAndATamperedOneNothing) {
  PutObject("out/report.txt", "report", Caller());
  auto link = service_->Link(Caller(), {"out/report.txt", 600, ""});
  ASSERT_TRUE(link.ok()) << link.status().message();
  EXPECT_EQ(link->name, "report.txt");
  EXPECT_EQ(link->url.rfind("http://127.0.0.1:8080/v1/objects/download?", 0), 0u) << link->url;
  EXPECT_GT(link->expires_at_ms, NowMillis());
  auto q = QueryOf(link->url);
  SignedDownload signed_link{q["org"], q["key"], std::stoll(q["expires"]), q["signature"]};
  auto opened = service_->OpenByLink(signed_link);
  ASSERT_TRUE(opened.ok()) << opened.status().message();
  EXPECT_EQ(opened->first.key, "out/report.txt");
  signed_link.key = "out/other.txt";
  EXPECT_EQ(service_->OpenByLink(signed_link).status().code(), Code::kUnauthenticated);

  auto bad_ttl = service_->Link(Caller(), {"out/report.txt", 0, ""});
  EXPECT_EQ(bad_ttl.status().field(), "ttl_seconds");
  EXPECT_EQ(service_->Link(Stranger(), {"out/report.txt", 600, ""}).status().code(),
            Code::kNotFound);
  EXPECT_EQ(service_->Link(Caller(), {"out/missing.txt", 600, ""}).status().code(),
            Code::kNotFound);
}

TEST_F(ObjectServiceTest, ArtifactsAreTheSandboxsPrefixAndOnlyForItsOrganization) {
  store::SandboxRecord sbx = Insert(NewSandbox("running"));
  std::string prefix = "artifacts/" + sbx.id + "/";
  PutObject(prefix + "result.csv", "a,b\n", Caller());
  PutObject("artifacts/sbx_other/x.csv", "x", Caller());
  auto list = service_->ListArtifacts(Caller(), sbx.id);
  ASSERT_TRUE(list.ok()) << list.status().message();
  EXPECT_EQ(list->prefix, prefix);
  ASSERT_EQ(list->items.size(), 1u);
  EXPECT_EQ(list->items[0].key, prefix + "result.csv");
  EXPECT_FALSE(list->next_cursor);
  auto text = service_->ReadArtifactText(Caller(), sbx.id, "result.csv", 1024);
  ASSERT_TRUE(text.ok()) << text.status().message();
  EXPECT_EQ(text->text, "a,b\n");
  EXPECT_EQ(service_->ListArtifacts(Stranger(), sbx.id).status().code(), Code::kNotFound);
  EXPECT_EQ(service_->ReadArtifactText(Stranger(), sbx.id, "result.csv", 1024).status().code(),
            Code::kNotFound);
  EXPECT_EQ(service_->ListArtifacts(Caller(), "../" + sbx.id).status().code(), Code::kNotFound);
}

TEST_F(ObjectServiceTest, ArtifactsComeAPageAtATimeInKeyOrderWithTheObjectsCursor) {
  store::SandboxRecord sbx = Insert(NewSandbox("running"));
  std::string prefix = "artifacts/" + sbx.id + "/";
  for (const char* name : {"c.txt", "a.txt", "b.txt"}) PutObject(prefix + name, "x", Caller());
  auto first = service_->ListArtifacts(Caller(), sbx.id, {2, ""});
  ASSERT_TRUE(first.ok()) << first.status().message();
  ASSERT_EQ(first->items.size(), 2u);
  EXPECT_EQ(first->items[0].key, prefix + "a.txt");
  EXPECT_EQ(first->items[1].key, prefix + "b.txt");
  ASSERT_TRUE(first->next_cursor);
  auto second = service_->ListArtifacts(Caller(), sbx.id, {2, *first->next_cursor});
  ASSERT_TRUE(second.ok()) << second.status().message();
  ASSERT_EQ(second->items.size(), 1u);
  EXPECT_EQ(second->items[0].key, prefix + "c.txt");
  EXPECT_FALSE(second->next_cursor);
  EXPECT_EQ(service_->ListArtifacts(Caller(), sbx.id, {0, ""}).status().field(), "limit");
  EXPECT_EQ(service_->ListArtifacts(Caller(), sbx.id, {2, "c5"}).status().field(), "cursor");
}

TEST_F(ObjectServiceTest, AWorkspaceCopyThatLooksLikeACredentialOrCannotBeReadStoresNothing) {
  store::SandboxRecord sbx = Insert(NewSandbox("running"));
  auto secret = service_->CopyFromWorkspace(Caller(), {sbx.id, "/workspace/.env", ""});
  EXPECT_EQ(secret.status().code(), Code::kInvalidArgument);
  EXPECT_EQ(secret.status().field(), "workspace_path");
  auto key = service_->CopyFromWorkspace(Caller(), {sbx.id, "/workspace/id_rsa", ""});
  EXPECT_EQ(key.status().field(), "workspace_path");
  EXPECT_EQ(runtime_.CountCalls(FakeRuntime::Op::kExec), 0);
  // Another organization's sandbox is not found; the runtime is never asked.
  EXPECT_EQ(service_->CopyFromWorkspace(Stranger(), {sbx.id, "out.txt", ""}).status().code(),
            Code::kNotFound);
  EXPECT_EQ(runtime_.CountCalls(FakeRuntime::Op::kExec), 0);
  // The runtime cannot read the file: the error is the runtime's, and nothing is stored.
  EXPECT_FALSE(service_->CopyFromWorkspace(Caller(), {sbx.id, "out.txt", ""}).ok());
  auto list = service_->List(Caller(), {"", "", {100, ""}});
  ASSERT_TRUE(list.ok());
  EXPECT_TRUE(list->items.empty());
}

TEST_F(ObjectServiceTest, AWorkspaceCopyJudgesTheFileTheSandboxOpenedNotTheNameAskedFor) {
  store::SandboxRecord sbx = Insert(NewSandbox("running"));
  // report.txt -> /etc/shadow: outside /workspace.
  runtime_.ServeNextExec(AgentOpened("/etc/shadow", "root:$6$abc:19000:0:99999:7:::\n"));
  auto shadow = service_->CopyFromWorkspace(Caller(), {sbx.id, "report.txt", ""});
  EXPECT_EQ(shadow.status().code(), Code::kInvalidArgument);
  EXPECT_EQ(shadow.status().field(), "workspace_path");
  EXPECT_EQ(shadow.status().message(),
            "/workspace/report.txt resolves to /etc/shadow, outside /workspace; it is not copied "
            "to object storage");
  // notenv -> .env, and a .env unlinked once opened: credentials by name.
  for (const char* opened :
       {"/workspace/.env", "/workspace/.env (deleted)", "/workspace/home/.ssh/config"}) {
    runtime_.ServeNextExec(AgentOpened(opened, "TOKEN=abc\n"));
    auto env = service_->CopyFromWorkspace(Caller(), {sbx.id, "notenv", ""});
    EXPECT_EQ(env.status().field(), "workspace_path") << opened;
    EXPECT_NE(env.status().message().find("looks like a credential file"), std::string::npos)
        << env.status().message();
  }
  // An agent that does not say which file it opened (one older than the flag) is not believed,
  // and told so.
  runtime_.ServeNextExec({"/bin/sh", "-c", "printf '7\\nreport\\n'"});
  auto unsaid = service_->CopyFromWorkspace(Caller(), {sbx.id, "report.txt", ""});
  EXPECT_EQ(unsaid.status().code(), Code::kUnsupported);
  EXPECT_NE(unsaid.status().message().find("cannot say which file it opened"), std::string::npos)
      << unsaid.status().message();
  auto list = service_->List(Caller(), {"", "", {100, ""}});
  ASSERT_TRUE(list.ok());
  EXPECT_TRUE(list->items.empty());
  // A link that stays inside /workspace to an ordinary file is copied.
  runtime_.ServeNextExec(AgentOpened("/workspace/out/report.txt", "report\n"));
  auto saved = service_->CopyFromWorkspace(Caller(), {sbx.id, "latest.txt", ""});
  ASSERT_TRUE(saved.ok()) << saved.status().message();
  EXPECT_EQ(saved->key, "artifacts/" + sbx.id + "/latest.txt");
  EXPECT_EQ(saved->size, 7u);
}

TEST_F(ObjectServiceTest, AttachingGivesTheSandboxTheGatewayAndOneLiveToken) {
  store::SandboxRecord sbx = WithNetwork("provisioning");
  auto first = service_->AttachToSandbox(Caller(), sbx.id, 3600);
  ASSERT_TRUE(first.ok()) << first.status().message();
  EXPECT_EQ(first->endpoint, "http://10.88.0.1:9000");
  EXPECT_FALSE(first->restarted);  // provisioning: its first boot sees the variables
  std::map<std::string, std::string> env = Stored(sbx.id).env;
  EXPECT_EQ(env[kStorageEndpointVariable], "http://10.88.0.1:9000");
  EXPECT_EQ(env[kStorageTokenVariable].rfind(first->token_id + ".", 0), 0u);

  auto second = service_->AttachToSandbox(Caller(), sbx.id, 3600);
  ASSERT_TRUE(second.ok()) << second.status().message();
  auto tokens = tokens_->List(org_);
  ASSERT_TRUE(tokens.ok());
  int live = 0;
  for (const auto& t : *tokens) {
    if (t.sandbox_id != sbx.id) continue;
    if (t.revoked_at == 0) {
      ++live;
      EXPECT_EQ(t.id, second->token_id);
    }
  }
  EXPECT_EQ(live, 1);
}

TEST_F(ObjectServiceTest, AttachingToARunningSandboxRestartsItOnce) {
  store::SandboxRecord sbx = WithNetwork("provisioning");
  lifecycle_->Provision(sbx.id);
  ASSERT_EQ(StatusOf(sbx.id), "running");
  auto out = service_->AttachToSandbox(Caller(), sbx.id, 3600);
  ASSERT_TRUE(out.ok()) << out.status().message();
  EXPECT_TRUE(out->restarted);
  Drain();
  EXPECT_EQ(StatusOf(sbx.id), "running");
  EXPECT_EQ(runtime_.CountCalls(FakeRuntime::Op::kLaunch, sbx.id), 2);
  EXPECT_EQ(Stored(sbx.id).env[kStorageEndpointVariable], "http://10.88.0.1:9000");
}

TEST_F(ObjectServiceTest, AttachingToAStoppedSandboxRecordsTheVariablesWithoutARestart) {
  store::SandboxRecord sbx = WithNetwork("provisioning");
  lifecycle_->Provision(sbx.id);
  ASSERT_TRUE(lifecycle_->Stop(org_, sbx.id, /*restart=*/false).ok());
  ASSERT_EQ(StatusOf(sbx.id), "hibernated");
  auto out = service_->AttachToSandbox(Caller(), sbx.id, 3600);
  ASSERT_TRUE(out.ok()) << out.status().message();
  EXPECT_FALSE(out->restarted);
  Drain();
  EXPECT_EQ(StatusOf(sbx.id), "hibernated");
  EXPECT_EQ(runtime_.CountCalls(FakeRuntime::Op::kLaunch, sbx.id), 1);
  EXPECT_EQ(Stored(sbx.id).env[kStorageEndpointVariable], "http://10.88.0.1:9000");
}

TEST_F(ObjectServiceTest, AttachingIsRefusedForEndedSandboxesNoNetworkBadTtlAndOthersSandboxes) {
  store::SandboxRecord ended = WithNetwork("failed");
  EXPECT_EQ(service_->AttachToSandbox(Caller(), ended.id, 3600).status().code(), Code::kConflict);
  store::SandboxRecord offline = Insert(NewSandbox("provisioning"));
  auto no_net = service_->AttachToSandbox(Caller(), offline.id, 3600);
  EXPECT_EQ(no_net.status().code(), Code::kConflict);
  EXPECT_NE(no_net.status().message().find("no network"), std::string::npos);
  EXPECT_EQ(service_->AttachToSandbox(Caller(), offline.id, 0).status().field(), "ttl_seconds");
  EXPECT_EQ(service_->AttachToSandbox(Stranger(), ended.id, 3600).status().code(), Code::kNotFound);
  auto tokens = tokens_->List(org_);
  ASSERT_TRUE(tokens.ok());
  EXPECT_TRUE(tokens->empty());
  EXPECT_TRUE(Stored(offline.id).env.empty());
}

}  // namespace
}  // namespace adapt::core
