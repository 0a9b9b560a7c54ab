#include "api/request_parsing.h"

#include <gtest/gtest.h>

#include <string>

#include "api/http_request_decoding.h"

namespace adapt::api {
namespace {

using nlohmann::json;

HttpRequest WithBody(const std::string& body) {
  HttpRequest r;
  r.method = "POST";
  r.path = "/v1/sandboxes";
  r.body = body;
  return r;
}

HttpRequest WithQuery(std::map<std::string, std::string> query) {
  HttpRequest r;
  r.method = "GET";
  r.path = "/v1/sandboxes";
  r.query = std::move(query);
  return r;
}

// A body the server read whole is read as the stream would have been, to its end.
TEST(RequestBodyReader, ReadsAWholeBodyWhenNoneStreams) {
  HttpRequest r = WithBody("hello, world");
  auto read = RequestBodyReader(r);
  r.body.clear();  // the reader holds its own copy
  std::string got;
  char buf[5];
  for (long n; (n = read(buf, sizeof buf)) > 0;) got.append(buf, static_cast<size_t>(n));
  EXPECT_EQ(got, "hello, world");
  EXPECT_EQ(read(buf, sizeof buf), 0);
}

TEST(RoutedPath, JoinsTheSegmentsTheRouterMatches) {
  EXPECT_EQ(RoutedPath("/v1/sandboxes/sbx_1/files"), "/v1/sandboxes/sbx_1/files");
  EXPECT_EQ(RoutedPath("/v1//sandboxes/sbx_1/files/"), "/v1/sandboxes/sbx_1/files");
  EXPECT_EQ(RoutedPath("/v1/sandboxes/sbx_1/fil%65s"), "/v1/sandboxes/sbx_1/files");
  EXPECT_EQ(RoutedPath("/v1/%zz"), "/v1/%zz");  // kept as sent
  EXPECT_EQ(RoutedPath("//"), "/");
  EXPECT_EQ(RoutedPath(""), "/");
}

TEST(ParseJsonBody, NestingPastSixtyFourLevelsIsA400NamingTheField) {
  std::string deep =
      R"({"cpu":1,"labels":)" + std::string(200000, '[') + std::string(200000, ']') + "}";
  auto r = ParseJsonBody(WithBody(deep));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::kInvalidArgument);
  EXPECT_EQ(r.status().field(), "labels");
  EXPECT_EQ(r.status().message(),
            "the request body nests arrays and objects deeper than 64 levels, in labels");
  std::string ok = R"({"labels":)" + std::string(63, '[') + std::string(63, ']') + "}";
  EXPECT_TRUE(ParseJsonBody(WithBody(ok)).ok());
}

TEST(ParseJsonBody, EmptyOrBlankBodyIsAnEmptyObject) {
  for (const char* body : {"", " ", "\r\n\t "}) {
    auto r = ParseJsonBody(WithBody(body));
    ASSERT_TRUE(r.ok()) << "'" << body << "': " << r.status().message();
    EXPECT_EQ(*r, json::object());
  }
}

TEST(ParseRequiredJsonBody, EmptyOrBlankBodyIsA400ButAnObjectIsTaken) {
  for (const char* body : {"", " ", "\r\n\t "})
    EXPECT_EQ(ParseRequiredJsonBody(WithBody(body)).status().code(), Code::kInvalidArgument)
        << "'" << body << "'";
  auto r = ParseRequiredJsonBody(WithBody("{}"));
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(*r, json::object());
}

TEST(ParseJsonBody, ObjectIsReturned) {
  auto r = ParseJsonBody(WithBody(R"({"cpu": 2, "labels": {"name": "x"}})"));
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(*r, json({{"cpu", 2}, {"labels", {{"name", "x"}}}}));
}

TEST(ParseJsonBody, MalformedJsonIsInvalidArgument) {
  for (const char* body : {"{", "{\"cpu\": }", "not json", "{\"a\":1} trailing", "{'a': 1}"}) {
    auto r = ParseJsonBody(WithBody(body));
    ASSERT_FALSE(r.ok()) << body;
    EXPECT_EQ(r.status().code(), Code::kInvalidArgument) << body;
    EXPECT_FALSE(r.status().message().empty());
  }
}

TEST(ParseJsonBody, NonObjectJsonIsInvalidArgument) {
  for (const char* body : {"[]", "[{\"cpu\": 2}]", "\"text\"", "42", "null", "true"}) {
    auto r = ParseJsonBody(WithBody(body));
    ASSERT_FALSE(r.ok()) << body;
    EXPECT_EQ(r.status().code(), Code::kInvalidArgument) << body;
  }
}

TEST(QueryInt, AbsentGivesTheFallback) {
  auto r = QueryInt(WithQuery({}), "limit", 50);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, 50);
}

TEST(QueryInt, ParsesIntegers) {
  EXPECT_EQ(*QueryInt(WithQuery({{"limit", "20"}}), "limit", 50), 20);
  EXPECT_EQ(*QueryInt(WithQuery({{"limit", "0"}}), "limit", 50), 0);
  EXPECT_EQ(*QueryInt(WithQuery({{"limit", "-3"}}), "limit", 50), -3);
  EXPECT_EQ(*QueryInt(WithQuery({{"other", "x"}, {"limit", "7"}}), "limit", 50), 7);
}

TEST(QueryInt, RejectsAnythingButAWholeInteger) {
  for (const char* bad : {"", "abc", "12abc", "1.5", " 5", "5 ", "+5", "0x10", "99999999999"}) {
    auto r = QueryInt(WithQuery({{"limit", bad}}), "limit", 50);
    ASSERT_FALSE(r.ok()) << "'" << bad << "'";
    EXPECT_EQ(r.status().code(), Code::kInvalidArgument) << bad;
    EXPECT_EQ(r.status().field(), "limit") << bad;
  }
}

TEST(DeleteConfirmation, ComesFromTheBodyOrTheQueryAndIsEmptyWithoutEither) {
  EXPECT_EQ(*DeleteConfirmation(WithBody(R"({"confirm":"data"})"), "the name"), "data");
  EXPECT_EQ(*DeleteConfirmation(WithQuery({{"confirm", "data"}}), "the name"), "data");
  EXPECT_EQ(*DeleteConfirmation(WithBody(""), "the name"), "");
}

TEST(DeleteConfirmation, OtherMembersAndNonStringsAreRefusedNamingTheField) {
  auto other = DeleteConfirmation(WithBody(R"({"confirm":"data","force":true})"), "the name");
  ASSERT_FALSE(other.ok());
  EXPECT_EQ(other.status().field(), "force");
  auto number = DeleteConfirmation(WithBody(R"({"confirm":7})"), "the storage's name");
  ASSERT_FALSE(number.ok());
  EXPECT_EQ(number.status().field(), "confirm");
  EXPECT_NE(number.status().message().find("the storage's name"), std::string::npos);
}

}  // namespace
}  // namespace adapt::api
