// The storage gateway's handler over a MemoryStore and a real ObjectStore: a body is read only
// once its sender is authenticated, DeleteObjects reports each key in S3's terms, and ListParts
// gives each part its own time.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <string>

#include "api/object_routes.h"
#include "os/temp_dir.h"
#include "storage/host_failure.h"
#include "storage/object_store.h"
#include "storage/object_store_fixture.h"
#include "storage/site_service.h"
#include "storage/storage_tokens.h"
#include "store/memory_store.h"

namespace adapt::api {
namespace {

// A streamed body that counts the reads the handler makes of it.
class CountedBody final : public RequestBody {
 public:
  explicit CountedBody(std::string data) : data_(std::move(data)) {}
  long Read(char* buf, size_t n) override {
    ++reads;
    size_t take = std::min(n, data_.size() - off_);
    std::copy_n(data_.data() + off_, take, buf);
    off_ += take;
    return static_cast<long>(take);
  }
  int reads = 0;

 private:
  std::string data_;
  size_t off_ = 0;
};

using storage::testing_support::FromString;

class S3GatewayTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(objects_.Init().ok());
    ASSERT_TRUE(tokens_.Init().ok());
    auto made = tokens_.Create("org_a", "t", 3600);
    ASSERT_TRUE(made.ok()) << made.status().message();
    bearer_ = "Bearer " + made->token;
  }

  // A request on `target` ("/objects/key?query"), its body streamed (the listener streams
  // every body) and, unless `authorization` is empty, signed with it.
  HttpRequest Request(const std::string& method, const std::string& target,
                      std::shared_ptr<CountedBody> body, const std::string& authorization) {
    HttpRequest req;
    req.method = method;
    req.target = target;
    size_t q = target.find('?');
    req.path = target.substr(0, q);
    if (q != std::string::npos) {
      std::string query = target.substr(q + 1);
      size_t eq = query.find('=');
      req.query[query.substr(0, eq)] = eq == std::string::npos ? "" : query.substr(eq + 1);
    }
    req.headers["host"] = "127.0.0.1";
    if (!authorization.empty()) req.headers["authorization"] = authorization;
    req.body_stream = std::move(body);
    return req;
  }

  os::TempDir tmp_{"s3-gateway"};
  store::MemoryStore store_;
  storage::ObjectStore objects_{store_, tmp_.path() + "/objects"};
  storage::StorageTokens tokens_{store_, tmp_.path() + "/storage.key"};
  storage::SiteService sites_{store_, objects_, ""};
  ObjectApi api_{objects_, tokens_, sites_, 0, nullptr, OrgCounter(12)};
  StorageGateway gateway_{api_};
  std::string bearer_;
};

const char* kDeleteAandMissing =
    "<Delete><Object><Key>a</Key></Object><Object><Key>missing</Key></Object></Delete>";

TEST_F(S3GatewayTest, AnUnauthenticatedPostIsRefusedBeforeAnyOfItsBodyIsRead) {
  for (const std::string& authorization :
       {std::string(), std::string("Bearer tok_nobody.secret"),
        std::string("AWS4-HMAC-SHA256 Credential=nobody/20260101/us-east-1/s3/aws4_request, "
                    "SignedHeaders=host, Signature=" +
                    std::string(64, '0'))}) {
    auto body = std::make_shared<CountedBody>(std::string(1 << 20, 'x'));
    HttpResponse r = gateway_.Handle(Request("POST", "/objects?delete", body, authorization));
    EXPECT_EQ(r.status, 403) << authorization << ": " << r.body;
    EXPECT_EQ(body->reads, 0) << authorization;
  }
}

TEST_F(S3GatewayTest, DeleteObjectsReadsItsBodyOnceAuthenticatedAndAMissingKeyIsDeleted) {
  ASSERT_TRUE(objects_.Put("org_a", "a", "", FromString("x")).ok());
  auto body = std::make_shared<CountedBody>(kDeleteAandMissing);
  HttpResponse r = gateway_.Handle(Request("POST", "/objects?delete", body, bearer_));
  EXPECT_EQ(r.status, 200) << r.body;
  EXPECT_GT(body->reads, 0);
  EXPECT_NE(r.body.find("<Deleted><Key>a</Key></Deleted>"), std::string::npos) << r.body;
  EXPECT_NE(r.body.find("<Deleted><Key>missing</Key></Deleted>"), std::string::npos) << r.body;
  EXPECT_EQ(r.body.find("<Error>"), std::string::npos) << r.body;
  EXPECT_EQ(objects_.Head("org_a", "a").status().code(), Code::kNotFound);
}

TEST_F(S3GatewayTest, DeleteObjectsGivesEachFailedKeyS3sCodeAndNoHostPath) {
  auto delete_two = [&] {
    auto body = std::make_shared<CountedBody>(kDeleteAandMissing);
    return gateway_.Handle(Request("POST", "/objects?delete", body, bearer_));
  };
  store_.FailWrites(Status(Code::kInternal, "deleting object: /var/lib/adapt/adapt.db is locked"));
  HttpResponse r = delete_two();
  EXPECT_EQ(r.status, 200) << r.body;
  EXPECT_NE(r.body.find("<Error><Key>a</Key><Code>InternalError</Code><Message>" +
                        std::string(storage::kObjectStoreFailed) + "</Message></Error>"),
            std::string::npos)
      << r.body;
  EXPECT_NE(r.body.find("<Error><Key>missing</Key><Code>InternalError</Code>"), std::string::npos)
      << r.body;
  EXPECT_EQ(r.body.find("/var/lib"), std::string::npos) << r.body;
  store_.FailWrites(Status(Code::kPermissionDenied, "the organization is closed"));
  r = delete_two();
  EXPECT_NE(r.body.find("<Error><Key>a</Key><Code>AccessDenied</Code>"), std::string::npos)
      << r.body;
  store_.FailWrites(std::nullopt);
  auto bad = std::make_shared<CountedBody>("<Delete><Object><Key>../up</Key></Object></Delete>");
  r = gateway_.Handle(Request("POST", "/objects?delete", bad, bearer_));
  EXPECT_NE(r.body.find("<Error><Key>../up</Key><Code>InvalidArgument</Code>"), std::string::npos)
      << r.body;
}

TEST_F(S3GatewayTest, DeleteObjectsTakesAtMostAThousandKeysAndQuietListsFailuresOnly) {
  ASSERT_TRUE(objects_.Put("org_a", "a", "", FromString("x")).ok());
  std::string many = "<Delete>";
  for (int i = 0; i < 1001; ++i) many += "<Object><Key>a</Key></Object>";
  auto body = std::make_shared<CountedBody>(many + "</Delete>");
  HttpResponse r = gateway_.Handle(Request("POST", "/objects?delete", body, bearer_));
  EXPECT_EQ(r.status, 400) << r.body;
  EXPECT_NE(r.body.find("MalformedXML"), std::string::npos) << r.body;
  EXPECT_TRUE(objects_.Head("org_a", "a").ok()) << "nothing was deleted";

  auto quiet = std::make_shared<CountedBody>(
      "<Delete><Quiet>true</Quiet><Object><Key>a</Key></Object></Delete>");
  r = gateway_.Handle(Request("POST", "/objects?delete", quiet, bearer_));
  EXPECT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.body.find("<Deleted>"), std::string::npos) << r.body;
  EXPECT_EQ(objects_.Head("org_a", "a").status().code(), Code::kNotFound);
}

TEST_F(S3GatewayTest, AListingRefusesATokenItDidNotGiveAndAMaxKeysThatIsNotANumber) {
  ASSERT_TRUE(objects_.Put("org_a", "a", "", FromString("x")).ok());
  auto list = [&](std::map<std::string, std::string> query) {
    HttpRequest req = Request("GET", "/objects", nullptr, bearer_);
    req.query = std::move(query);
    return gateway_.Handle(req);
  };
  // Read as "from the start", a token that is not hex would make a client list the same page
  // for ever.
  for (const char* token : {"zz", "abc"}) {
    HttpResponse r = list({{"list-type", "2"}, {"continuation-token", token}});
    EXPECT_EQ(r.status, 400) << token << ": " << r.body;
  }
  for (const char* keys : {"12abc", " 5", "+5", "-1", ""}) {
    HttpResponse r = list({{"list-type", "2"}, {"max-keys", keys}});
    EXPECT_EQ(r.status, 400) << keys << ": " << r.body;
  }
  HttpResponse r = list({{"list-type", "2"}, {"max-keys", "5"}});
  EXPECT_EQ(r.status, 200) << r.body;
  EXPECT_NE(r.body.find("<Key>a</Key>"), std::string::npos) << r.body;
}

TEST_F(S3GatewayTest, AnXmlBodyOverFourMiBIsRefusedAndADeclaredOneIsNotRead) {
  auto declared = std::make_shared<CountedBody>("<Delete></Delete>");
  HttpRequest req = Request("POST", "/objects?delete", declared, bearer_);
  req.headers["content-length"] = std::to_string((4 << 20) + 1);
  HttpResponse r = gateway_.Handle(req);
  EXPECT_EQ(r.status, 400) << r.body;
  EXPECT_NE(r.body.find("MaxMessageLengthExceeded"), std::string::npos) << r.body;
  EXPECT_EQ(declared->reads, 0);
  // Chunked (no length declared): refused as it passes the bound.
  auto sent = std::make_shared<CountedBody>(std::string((4 << 20) + 1, ' '));
  r = gateway_.Handle(Request("POST", "/objects?delete", sent, bearer_));
  EXPECT_EQ(r.status, 400) << r.body;
  EXPECT_NE(r.body.find("MaxMessageLengthExceeded"), std::string::npos) << r.body;
}

TEST_F(S3GatewayTest, ListPartsAnswersTheTimeEachPartWasStored) {
  auto id = objects_.CreateUpload("org_a", "mp", "");
  ASSERT_TRUE(id.ok());
  ASSERT_TRUE(objects_.PutPart("org_a", *id, "mp", 1, FromString("part")).ok());
  std::filesystem::last_write_time(
      tmp_.path() + "/objects/uploads/" + *id + "/00001",
      std::chrono::file_clock::from_sys(std::chrono::sys_time<std::chrono::milliseconds>(
          std::chrono::milliseconds(1577836800000))));  // 2020-01-01
  HttpResponse r = gateway_.Handle(Request("GET", "/objects/mp?uploadId=" + *id, nullptr, bearer_));
  EXPECT_EQ(r.status, 200) << r.body;
  EXPECT_NE(r.body.find("<LastModified>2020-01-01T00:00:00.000Z</LastModified>"), std::string::npos)
      << r.body;
}

TEST_F(S3GatewayTest, UploadsOfAllOrganizationsTogetherLeaveTheGatewaysOtherWorkersFree) {
  api_.body_uploads = OrgCounter(12, 2);
  // Two other organizations' slow uploads take the uploads' share of the workers.
  auto b = api_.body_uploads.TryTake("org_b");
  auto c = api_.body_uploads.TryTake("org_c");
  ASSERT_TRUE(b && c);
  auto body = std::make_shared<CountedBody>("data");
  HttpResponse r = gateway_.Handle(Request("PUT", "/objects/k", body, bearer_));
  EXPECT_EQ(r.status, 503) << r.body;
  EXPECT_NE(r.body.find("<Code>SlowDown</Code>"), std::string::npos) << r.body;
  EXPECT_NE(r.body.find("as many uploads as it can at once"), std::string::npos) << r.body;
  EXPECT_EQ(body->reads, 0);
  // A listing needs no upload place.
  EXPECT_EQ(gateway_.Handle(Request("GET", "/objects?list-type=2", nullptr, bearer_)).status, 200);
  c.reset();
  body = std::make_shared<CountedBody>("data");
  r = gateway_.Handle(Request("PUT", "/objects/k", body, bearer_));
  EXPECT_EQ(r.status, 200) << r.body;
}

}  // namespace
}  // namespace adapt::api
