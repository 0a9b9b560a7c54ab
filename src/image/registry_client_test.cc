// RegistryClient against a fake registry on loopback: the transfer deadline, the token
// service's answer, and registry-chosen text kept out of errors.
#include "image/registry_client.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>

#include "image/digest.h"
#include "image/fake_registry_test_support.h"

namespace adapt::image {
namespace {

using namespace std::chrono_literals;
using test_support::FakeRegistry;
using test_support::FakeReply;
using test_support::FakeRequest;

class RegistryClientTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto destinations = RegistryDestinations::Parse({"127.0.0.1"});
    ASSERT_TRUE(destinations.ok());
    destinations_ = *destinations;
    path_ = (std::filesystem::temp_directory_path() /
             ("adapt-registry-client-" + std::to_string(::getpid()) + "-" +
              ::testing::UnitTest::GetInstance()->current_test_info()->name()))
                .string();
  }
  void TearDown() override { std::filesystem::remove(path_); }

  RegistryClient Client(FakeRegistry& registry) {
    auto ref = ParseReference(registry.host() + "/x:1");
    EXPECT_TRUE(ref.ok());
    RegistryClient client(*ref, {}, destinations_);
    client.set_backoff_ms(1);
    return client;
  }

  RegistryDestinations destinations_;
  std::string path_;
};

// curl's low-speed floor (1 KiB/s) alone let a registry sending just above it hold a pull for
// days; each transfer now has a deadline (shortened here), and is not tried again past it.
TEST_F(RegistryClientTest, ABlobSentSlowerThanItsDeadlineAllowsIsAbandoned) {
  std::string blob(400, 'x');
  FakeRegistry registry([&](const FakeRequest&) {
    FakeReply reply{200, blob};
    reply.drip = 20ms;  // 8 s for the whole blob
    return reply;
  });
  RegistryClient client = Client(registry);
  client.set_transfer_time(300ms, 1 << 20);
  Status st = client.GetBlob({"", Sha256Of(blob), blob.size(), ""}, path_);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), Code::kUnavailable);
  EXPECT_NE(st.message().find("did not finish a transfer within"), std::string::npos)
      << st.message();
  EXPECT_FALSE(std::filesystem::exists(path_));
  // Not tried again past the deadline. At most one: under load the fake registry may not have
  // read the request before the client gave up on it.
  registry.Stop();
  EXPECT_LE(registry.requests().size(), 1u);
}

TEST_F(RegistryClientTest, ABlobWithinItsDeadlineArrives) {
  std::string blob(40, 'y');
  FakeRegistry registry([&](const FakeRequest&) {
    FakeReply reply{200, blob};
    reply.drip = 1ms;
    return reply;
  });
  RegistryClient client = Client(registry);
  client.set_transfer_time(30s, 1 << 20);
  Status st = client.GetBlob({"", Sha256Of(blob), blob.size(), ""}, path_);
  ASSERT_TRUE(st.ok()) << st.message();
}

// A registry asking for a bearer token, from a token service answering `token_answer`.
struct TokenRegistry {
  std::string token_answer;
  std::atomic<int> port = 0;
  FakeRegistry registry{[this](const FakeRequest& r) { return Answer(r); }};

  explicit TokenRegistry(std::string answer) : token_answer(std::move(answer)) {
    port = registry.port();
  }
  FakeReply Answer(const FakeRequest& r) {
    if (r.path.starts_with("/token")) return FakeReply{200, token_answer};
    if (!r.headers.count("authorization")) {
      FakeReply challenge{401};
      challenge.headers["WWW-Authenticate"] =
          "Bearer realm=\"http://127.0.0.1:" + std::to_string(port.load()) +
          "/token\",service=\"fake\"";
      return challenge;
    }
    FakeReply manifest{200, "{}"};
    manifest.headers["Content-Type"] = kOciManifest;
    return manifest;
  }
};

TEST_F(RegistryClientTest, ATokenIsTakenFromTheTokenServicesJson) {
  TokenRegistry tokens(R"({"token": "abc.def"})");
  auto manifest = Client(tokens.registry).GetManifest("1");
  ASSERT_TRUE(manifest.ok()) << manifest.status().message();
  EXPECT_EQ(tokens.registry.full_requests().back().headers["authorization"], "Bearer abc.def");
  TokenRegistry access(R"({"access_token": "xyz"})");
  EXPECT_TRUE(Client(access.registry).GetManifest("1").ok());
}

TEST_F(RegistryClientTest, ATokenAnswerThatIsNotAUsableTokenIsRefused) {
  for (std::string answer :
       {std::string(R"({"token": 5})"), std::string("[1, 2]"),
        std::string(100000, '[') + std::string(100000, ']'), std::string("not json")}) {
    TokenRegistry tokens(answer);
    auto manifest = Client(tokens.registry).GetManifest("1");
    ASSERT_FALSE(manifest.ok()) << answer.substr(0, 20);
    EXPECT_NE(manifest.status().message().find("sent no usable token"), std::string::npos)
        << manifest.status().message();
  }
}

// The token becomes an Authorization header: a line break in it would add headers of the
// token service's choosing to the registry request.
TEST_F(RegistryClientTest, ATokenWithALineBreakIsNeverSent) {
  TokenRegistry tokens(R"({"token": "abc\r\nX-Injected: yes"})");
  auto manifest = Client(tokens.registry).GetManifest("1");
  ASSERT_FALSE(manifest.ok());
  EXPECT_NE(manifest.status().message().find("sent no usable token"), std::string::npos)
      << manifest.status().message();
  for (const auto& request : tokens.registry.full_requests()) {
    EXPECT_FALSE(request.headers.count("x-injected")) << request.path;
    EXPECT_FALSE(request.headers.count("authorization")) << request.path;
  }
}

// Where a redirect leads is the registry's text: an error about what was found there does not
// quote it.
TEST_F(RegistryClientTest, AnOversizeManifestBehindARedirectIsRefusedWithoutItsAddress) {
  std::atomic<int> port = 0;
  FakeRegistry registry([&](const FakeRequest& r) {
    if (r.path.ends_with("/manifests/1")) {
      FakeReply redirect{302};
      redirect.headers["Location"] =
          "http://127.0.0.1:" + std::to_string(port.load()) + "/MARKER-lure";
      return redirect;
    }
    return FakeReply{200, std::string((4 << 20) + 1, ' ')};
  });
  port = registry.port();
  auto manifest = Client(registry).GetManifest("1");
  ASSERT_FALSE(manifest.ok());
  EXPECT_NE(manifest.status().message().find("over 4 MiB"), std::string::npos)
      << manifest.status().message();
  EXPECT_EQ(manifest.status().message().find("MARKER"), std::string::npos)
      << manifest.status().message();
}

}  // namespace
}  // namespace adapt::image
