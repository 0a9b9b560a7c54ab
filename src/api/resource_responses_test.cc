#include "api/resource_responses.h"

#include <gtest/gtest.h>

namespace adapt::api {
namespace {

TEST(ResourceResponses, JsonOrErrorAnswersTheJsonWithTheGivenStatus) {
  auto r = JsonOrError(201, Result<nlohmann::json>(nlohmann::json{{"name", "x"}}));
  EXPECT_EQ(r.status, 201);
  EXPECT_EQ(r.content_type, "application/json");
  EXPECT_EQ(nlohmann::json::parse(r.body), (nlohmann::json{{"name", "x"}}));
}

TEST(ResourceResponses, JsonOrErrorAnswersTheErrorInApiFormat) {
  auto r = JsonOrError(200, Result<nlohmann::json>(NotFound("secret x not found")));
  EXPECT_EQ(r.status, 404);
  auto body = nlohmann::json::parse(r.body);
  EXPECT_EQ(body["error"]["code"], "not_found");
  EXPECT_EQ(body["error"]["message"], "secret x not found");
}

TEST(ResourceResponses, AnInternalFailureIsAnsweredWithAReferenceNotItsMessage) {
  // An internal message is for the operator: host paths and tool output stay in the log.
  auto r = JsonOrError(200, Result<nlohmann::json>(Internal("nft: /etc/adapt/rules.nft: bad")));
  EXPECT_EQ(r.status, 500);
  auto body = nlohmann::json::parse(r.body);
  EXPECT_EQ(body["error"]["code"], "internal");
  std::string message = body["error"]["message"];
  EXPECT_EQ(message.find("/etc/adapt"), std::string::npos) << message;
  EXPECT_NE(message.find("reference err_"), std::string::npos) << message;
}

TEST(ResourceResponses, NoContentOrErrorIsAnEmpty204OrTheError) {
  auto ok = NoContentOrError(Status::Ok());
  EXPECT_EQ(ok.status, 204);
  EXPECT_TRUE(ok.body.empty());
  EXPECT_TRUE(ok.content_type.empty());
  auto bad = NoContentOrError(Conflict("volume v is attached"));
  EXPECT_EQ(bad.status, 409);
  EXPECT_EQ(nlohmann::json::parse(bad.body)["error"]["message"], "volume v is attached");
}

}  // namespace
}  // namespace adapt::api
