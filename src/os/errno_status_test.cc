#include "os/errno_status.h"

#include <gtest/gtest.h>

#include <cerrno>

namespace adapt::os {
namespace {

const char* kWhat = "writing /var/lib/adapt/sandboxes/sbx_a/disk.img";

TEST(ErrnoStatusTest, TheMessageNamesWhatFailedForTheOperator) {
  Status full = ErrnoStatus(kWhat, ENOSPC);
  EXPECT_EQ(full.code(), Code::kResourceExhausted);
  EXPECT_EQ(full.message(), std::string(kWhat) + ": No space left on device");
  EXPECT_EQ(ErrnoStatus(kWhat, ENOENT).code(), Code::kNotFound);
  EXPECT_EQ(ErrnoStatus(kWhat, EIO).code(), Code::kInternal);
}

TEST(ErrnoStatusTest, ClientsAreToldTheConditionNeverTheHostsPaths) {
  for (int err : {ENOENT, ENOSPC, EMFILE, ENFILE, ENOMEM}) {
    Status st = ErrnoStatus(kWhat, err);
    ASSERT_FALSE(st.client_message().empty()) << err;
    EXPECT_EQ(st.client_message().find("/var/lib"), std::string::npos) << st.client_message();
    // Context added on the way up is the operator's too.
    EXPECT_EQ(st.WithContext("creating sandbox sbx_a").client_message(), st.client_message());
  }
  EXPECT_NE(ErrnoStatus(kWhat, ENOSPC).client_message().find("disk is full"), std::string::npos);
}

}  // namespace
}  // namespace adapt::os
