#include "base/request_fingerprint.h"

#include <gtest/gtest.h>

#include "base/ids.h"

namespace adapt {
namespace {

// One test: the key is process-wide, set once.
TEST(RequestFingerprint, IsASha256UntilAKeyIsSetThenTheHmacUnderIt) {
  EXPECT_EQ(RequestFingerprint("what do ya want for nothing?"),
            Sha256Hex("what do ya want for nothing?"));
  SetRequestFingerprintKey("Jefe");
  // RFC 4231, test case 2.
  EXPECT_EQ(RequestFingerprint("what do ya want for nothing?"),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
  EXPECT_NE(RequestFingerprint("{\"value\":\"1234\"}"), Sha256Hex("{\"value\":\"1234\"}"));
}

}  // namespace
}  // namespace adapt
