#include "cli/text_input.h"

#include "base/text.h"

namespace adapt::cli {

std::optional<std::string> ReadAtMost(std::istream& in, size_t limit) {
  std::string data;
  char buffer[64 * 1024];
  while (data.size() <= limit && in.read(buffer, sizeof buffer).gcount() > 0)
    data.append(buffer, static_cast<size_t>(in.gcount()));
  if (data.size() > limit) return std::nullopt;
  return data;
}

bool IsPlainText(const std::string& data) {
  return IsValidUtf8(data) && data.find('\0') == std::string::npos;
}

}  // namespace adapt::cli
