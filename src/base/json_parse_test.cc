#include "base/json_parse.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace adapt {
namespace {

std::string Nested(int depth) { return std::string(depth, '[') + "1" + std::string(depth, ']'); }

TEST(ParseJson, SixtyFourLevelsAreAcceptedSixtyFiveAreNot) {
  auto ok = ParseJson(Nested(64), "the body");
  ASSERT_TRUE(ok.ok()) << ok.status().message();
  EXPECT_EQ(ok->dump(), Nested(64));
  auto deep = ParseJson(Nested(65), "the body");
  ASSERT_FALSE(deep.ok());
  EXPECT_EQ(deep.status().code(), Code::kInvalidArgument);
  EXPECT_EQ(deep.status().message(), "the body nests arrays and objects deeper than 64 levels");
  EXPECT_EQ(deep.status().field(), "");
}

TEST(ParseJson, ANameGivenTwiceInOneObjectIsRefusedWhereverItIs) {
  auto top = ParseJson(R"({"cpu":1,"memoryMiB":512,"cpu":64})", "the request body");
  ASSERT_FALSE(top.ok());
  EXPECT_EQ(top.status().code(), Code::kInvalidArgument);
  EXPECT_EQ(top.status().field(), "cpu");
  EXPECT_EQ(top.status().message(), "the request body gives the name 'cpu' twice in one object");
  auto nested = ParseJson(R"({"image":"x","env":{"A":"1","B":"2","A":"3"},"z":1})", "the body");
  ASSERT_FALSE(nested.ok());
  EXPECT_EQ(nested.status().field(), "env");
  EXPECT_EQ(nested.status().message(), "the body gives the name 'A' twice in one object, in env");
  auto in_array = ParseJson(R"([{"a":1},{"a":2,"a":3}])", "the body");
  ASSERT_FALSE(in_array.ok());
  EXPECT_EQ(in_array.status().field(), "");
}

TEST(ParseJson, TheSameNameInSiblingOrNestedObjectsIsFine) {
  auto ok =
      ParseJson(R"({"a":{"a":{"a":1}},"b":[{"a":1},{"a":2}],"c":{"a":1},"d":{"a":2}})", "the body");
  ASSERT_TRUE(ok.ok()) << ok.status().message();
  EXPECT_EQ((*ok)["b"][1]["a"], 2);
  // Names that differ only by an escape are the same name.
  EXPECT_FALSE(ParseJson(R"({"k":1,"\u006b":2})", "the body").ok());
}

TEST(ParseJson, NamesTheTopLevelMemberTheNestingWasFoundIn) {
  std::string body = R"({"name":"x","labels":{"a":)" + Nested(200) + "}}";
  auto deep = ParseJson(body, "the request body");
  ASSERT_FALSE(deep.ok());
  EXPECT_EQ(deep.status().field(), "labels");
  EXPECT_EQ(deep.status().message(),
            "the request body nests arrays and objects deeper than 64 levels, in labels");
  // Objects count as levels too.
  std::string objects;
  for (int i = 0; i < 70; ++i) objects += R"({"k":)";
  objects += "1" + std::string(70, '}');
  EXPECT_FALSE(ParseJson(objects, "x").ok());
}

TEST(ParseJson, TwoHundredThousandLevelsAreRefusedWithoutRecursion) {
  // 400 KB, the body that once overflowed a worker's stack; unbalanced as well as balanced.
  for (const std::string& text : {Nested(200000), std::string(400000, '[')}) {
    auto deep = ParseJson(text, "the body");
    ASSERT_FALSE(deep.ok());
    EXPECT_NE(deep.status().message().find("deeper than 64"), std::string::npos);
  }
}

TEST(ParseJson, ATighterLimitCanBeAsked) {
  EXPECT_TRUE(ParseJson(R"({"a":[1]})", "x", 2).ok());
  EXPECT_FALSE(ParseJson(R"({"a":[[1]]})", "x", 2).ok());
}

TEST(ParseJson, InvalidTextIsAnErrorAndValidTextRoundTrips) {
  for (const char* bad : {"", "{", "[1,]", "{\"a\":1} x", "nul", "\"\\uZZZZ\""}) {
    auto r = ParseJson(bad, "the body");
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.status().message(), "the body is not valid JSON") << bad;
  }
  auto r = ParseJson(R"({"a":[1,2,{"b":null}],"c":"d","e":1.5,"a2":true})", "x");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)["a"][2]["b"], nullptr);
  EXPECT_EQ((*r)["c"], "d");
  EXPECT_EQ(ParseJson("null", "x")->is_null(), true);
  EXPECT_EQ(*ParseJson("3", "x"), 3);
}

TEST(ParseJsonArray, HandsOverEachElementInOrderKeepingNone) {
  std::vector<std::string> seen;
  Status st =
      ParseJsonArray(R"([{"a":[1,2]},3,"x",[4,[5]],null])", "the reply", [&](nlohmann::json&& e) {
        seen.push_back(e.dump());
        return Status::Ok();
      });
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(seen, (std::vector<std::string>{R"({"a":[1,2]})", "3", R"("x")", "[4,[5]]", "null"}));
}

TEST(ParseJsonArray, TheFirstRefusalIsTheResultAndNothingMoreIsTaken) {
  int taken = 0;
  Status st = ParseJsonArray("[1,2,3,4]", "the reply", [&](nlohmann::json&& e) {
    ++taken;
    return e == 2 ? InvalidArgument("", "two is not allowed") : Status::Ok();
  });
  EXPECT_EQ(st.message(), "two is not allowed");
  EXPECT_EQ(taken, 2);
}

TEST(ParseJsonArray, NotAnArrayTooDeepOrNotJsonAreErrors) {
  auto none = [](nlohmann::json&&) { return Status::Ok(); };
  int members = 0;
  Status object = ParseJsonArray(R"({"a":1,"b":[2]})", "the reply", [&](nlohmann::json&&) {
    ++members;  // an object's members are not elements
    return Status::Ok();
  });
  EXPECT_EQ(object.message(), "the reply is not a JSON array");
  EXPECT_EQ(members, 0);
  EXPECT_EQ(ParseJsonArray(Nested(65), "the reply", none).message(),
            "the reply nests arrays and objects deeper than 64 levels");
  EXPECT_EQ(ParseJsonArray("[1,", "the reply", none).message(), "the reply is not valid JSON");
  EXPECT_EQ(ParseJsonArray(R"([{"a":1,"a":2}])", "the reply", none).message(),
            "the reply gives the name 'a' twice in one object");
  EXPECT_TRUE(ParseJsonArray("[]", "the reply", none).ok());
}

TEST(ParseJsonArray, AMillionTinyElementsAreNeverHeldAtOnce) {
  // Twenty times its text's size as one value; taken one at a time, each is gone when the
  // next comes (what the callback sees is its own, moved-from by nobody else).
  std::string text = "[";
  for (int i = 0; i < 1000000; ++i) text += i ? ",{}" : "{}";
  text += "]";
  size_t count = 0;
  Status st = ParseJsonArray(text, "the reply", [&](nlohmann::json&& e) {
    ++count;
    return e.is_object() && e.empty() ? Status::Ok() : InvalidArgument("", "not {}");
  });
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(count, 1000000u);
}

}  // namespace
}  // namespace adapt
