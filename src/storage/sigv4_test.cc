#include "storage/sigv4.h"

#include <gtest/gtest.h>

namespace adapt::storage {
namespace {

SigV4Authorization Signing(const std::string& signed_headers) {
  SigV4Authorization auth;
  auth.signed_headers = signed_headers;
  return auth;
}

TEST(UnsignedAmzHeader, ACopySourceBesideAPresignedPutsHostIsNamed) {
  std::map<std::string, std::string> headers = {{"host", "gw"},
                                                {"x-amz-copy-source", "/objects/secret"}};
  EXPECT_EQ(UnsignedAmzHeader(Signing("host"), headers), "x-amz-copy-source");
}

TEST(UnsignedAmzHeader, SignedAmzHeadersPass) {
  std::map<std::string, std::string> headers = {
      {"host", "gw"}, {"x-amz-copy-source", "/objects/a"}, {"x-amz-decoded-content-length", "5"}};
  EXPECT_EQ(
      UnsignedAmzHeader(Signing("host;x-amz-copy-source;x-amz-decoded-content-length"), headers),
      "");
}

TEST(UnsignedAmzHeader, DateAndPayloadHashNeedNotBeListed) {
  std::map<std::string, std::string> headers = {
      {"host", "gw"}, {"x-amz-date", "20260101T000000Z"}, {"x-amz-content-sha256", "UNSIGNED"}};
  EXPECT_EQ(UnsignedAmzHeader(Signing("host"), headers), "");
}

TEST(UnsignedAmzHeader, OtherUnsignedHeadersAreNotItsConcern) {
  std::map<std::string, std::string> headers = {
      {"host", "gw"}, {"user-agent", "aws-cli"}, {"x-amzn-trace-id", "t"}, {"expect", "100"}};
  EXPECT_EQ(UnsignedAmzHeader(Signing("host"), headers), "");
}

TEST(UnsignedAmzHeader, AListedNameMustMatchWholly) {
  std::map<std::string, std::string> headers = {{"host", "gw"}, {"x-amz-meta-a", "1"}};
  EXPECT_EQ(UnsignedAmzHeader(Signing("host;x-amz-meta-ab"), headers), "x-amz-meta-a");
}

}  // namespace
}  // namespace adapt::storage
