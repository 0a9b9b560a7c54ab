#include "base/markup.h"

#include <gtest/gtest.h>

namespace adapt {
namespace {

TEST(EscapeMarkup, EscapesTheFiveSpecialCharactersAndNothingElse) {
  EXPECT_EQ(EscapeMarkup("<a href=\"x\">&'"), "&lt;a href=&quot;x&quot;&gt;&amp;&#39;");
  EXPECT_EQ(EscapeMarkup("plain caf\xc3\xa9 / key"), "plain caf\xc3\xa9 / key");
  EXPECT_EQ(EscapeMarkup(""), "");
  EXPECT_EQ(EscapeMarkup("&amp;"), "&amp;amp;");  // never decodes: escaping twice shows twice
}

}  // namespace
}  // namespace adapt
