#include "storage/object_hash.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

namespace adapt::storage {
namespace {

// 3 MiB + 5 bytes of (i * 7 + 3) mod 256; digests from Python's hashlib.
std::string Pattern() {
  std::string d((3u << 20) + 5, '\0');
  for (size_t i = 0; i < d.size(); ++i) d[i] = static_cast<char>(i * 7 + 3);
  return d;
}
constexpr char kSha[] = "8e412f5c2133ab91c007c92ac99185bd7aeb01a1b4fc67f38cb9d9052f614a3f";
constexpr char kMd5[] = "88fa70d4a9d46da8b3561f475f808424";

TEST(ObjectHasher, UpdateGivesSha256AndMd5) {
  const std::string d = Pattern();
  ObjectHasher h;
  h.Update(d.data(), 1000);
  h.Update(d.data() + 1000, d.size() - 1000);
  std::string sha, md5;
  h.Finish(sha, md5);
  EXPECT_EQ(sha, kSha);
  EXPECT_EQ(md5, kMd5);
}

// Large pieces go to the helper thread, small ones stay inline; the digests are the same as
// one Update of the whole, and each piece's work runs once, while its piece is intact.
TEST(ObjectHasher, UpdateAlongsideGivesTheSameDigestsAndRunsTheWorkOnce) {
  const std::string d = Pattern();
  const size_t pieces[] = {10, 1u << 20, 100, (1u << 20) + 7, 65536, 65535};
  ObjectHasher h;
  std::string seen;
  size_t at = 0;
  int runs = 0;
  for (size_t i = 0; at < d.size(); ++i) {
    size_t n = std::min(pieces[i % 6], d.size() - at);
    std::string piece = d.substr(at, n);  // the caller's buffer, reused after the call
    Status st = h.UpdateAlongside(piece.data(), n, [&] {
      ++runs;
      seen.append(piece.data(), n);
      return Status::Ok();
    });
    ASSERT_TRUE(st.ok());
    piece.assign(n, 'x');  // the hasher must be done with it by now
    at += n;
  }
  std::string sha, md5;
  h.Finish(sha, md5);
  EXPECT_EQ(sha, kSha);
  EXPECT_EQ(md5, kMd5);
  EXPECT_TRUE(seen == d);
  EXPECT_GT(runs, 6);
}

TEST(ObjectHasher, UpdateAlongsideReturnsTheWorksFailure) {
  std::string big(1u << 20, 'a');
  ObjectHasher h;
  Status st = h.UpdateAlongside(big.data(), big.size(),
                                [] { return Status(Code::kInternal, "disk full"); });
  EXPECT_FALSE(st.ok());
  EXPECT_EQ(st.message(), "disk full");
  st = h.UpdateAlongside(big.data(), 10, [] { return Status(Code::kInternal, "small"); });
  EXPECT_EQ(st.message(), "small");
}

}  // namespace
}  // namespace adapt::storage
