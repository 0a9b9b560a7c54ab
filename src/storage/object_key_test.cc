#include "storage/object_key.h"

#include <gtest/gtest.h>

#include "storage/sigv4.h"

namespace adapt::storage {
namespace {

TEST(ObjectKey, AcceptsOrdinaryKeys) {
  EXPECT_TRUE(ValidateObjectKey("a").ok());
  EXPECT_TRUE(ValidateObjectKey("dir/sub/file.txt").ok());
  EXPECT_TRUE(ValidateObjectKey("caf\xc3\xa9 100%.txt").ok());
  EXPECT_TRUE(ValidateObjectKey("a..b/c.d").ok());
  EXPECT_TRUE(ValidateObjectKey(std::string(1024, 'k')).ok());
}

TEST(ObjectKey, RefusesTraversalPlainAndEncoded) {
  for (const char* bad :
       {"..", "../x", "a/../b", "a/..", "./a", "a/./b", "/abs", "a//b", "a/", "%2e%2e/x",
        "a/%2E%2e/b", "a%2f..%2fb", "..%2fx", "a%5c..%5cb", "a\\b", ""}) {
    Status st = ValidateObjectKey(bad);
    EXPECT_FALSE(st.ok()) << bad;
    EXPECT_EQ(st.field(), "key") << bad;
  }
}

TEST(ObjectKey, RefusesControlCharactersBadUtf8AndLongKeys) {
  EXPECT_FALSE(ValidateObjectKey(std::string("a\0b", 3)).ok());
  EXPECT_FALSE(ValidateObjectKey("a\nb").ok());
  EXPECT_FALSE(ValidateObjectKey("\xff\xfe").ok());
  EXPECT_FALSE(ValidateObjectKey("\xc0\xae\xc0\xae/x").ok());  // overlong '.'
  EXPECT_FALSE(ValidateObjectKey(std::string(1025, 'k')).ok());
}

TEST(ObjectKey, PrefixesMayEndWithASlash) {
  EXPECT_TRUE(ValidateObjectPrefix("").ok());
  EXPECT_TRUE(ValidateObjectPrefix("dir/").ok());
  EXPECT_TRUE(ValidateObjectPrefix("dir/fi").ok());
  EXPECT_FALSE(ValidateObjectPrefix("../").ok());
  EXPECT_FALSE(ValidateObjectPrefix("/").ok());
}

TEST(SigV4, MatchesAwsDocumentedGetObjectExample) {
  // The GET Object example of the S3 SigV4 documentation ("Example: GET Object").
  std::map<std::string, std::string> headers = {
      {"host", "examplebucket.s3.amazonaws.com"},
      {"range", "bytes=0-9"},
      {"x-amz-content-sha256", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
      {"x-amz-date", "20130524T000000Z"}};
  auto auth = ParseSigV4Authorization(
      "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request,"
      "SignedHeaders=host;range;x-amz-content-sha256;x-amz-date,"
      "Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41");
  ASSERT_TRUE(auth.ok()) << auth.status().message();
  EXPECT_EQ(auth->access_key, "AKIAIOSFODNN7EXAMPLE");
  SigV4Request req{"GET", "/test.txt", "", &headers, headers["x-amz-content-sha256"]};
  EXPECT_EQ(SigV4Signature(*auth, req, "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"),
            auth->signature);
  // Any change to what was signed changes the signature.
  SigV4Request other{"GET", "/test.txt2", "", &headers, headers["x-amz-content-sha256"]};
  EXPECT_NE(SigV4Signature(*auth, other, "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"),
            auth->signature);
}

TEST(SigV4, RefusesMalformedHeaders) {
  EXPECT_FALSE(ParseSigV4Authorization("Bearer x").ok());
  EXPECT_FALSE(ParseSigV4Authorization("AWS4-HMAC-SHA256 Credential=a/b").ok());
  EXPECT_EQ(ParseAmzDate("20130524T000000Z"), 1369353600);
  EXPECT_EQ(ParseAmzDate("2013-05-24"), -1);
}

}  // namespace
}  // namespace adapt::storage
