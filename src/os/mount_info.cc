#include "os/mount_info.h"

#include <sstream>

#include "os/files.h"

namespace adapt::os {
namespace {

// mountinfo escapes spaces and other bytes as \ooo.
std::string Unescape(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 3 < s.size()) {
      out += static_cast<char>(std::stoi(s.substr(i + 1, 3), nullptr, 8));
      i += 3;
    } else {
      out += s[i];
    }
  }
  return out;
}

}  // namespace

std::vector<MountInfo> ReadMountInfo(const std::string& file) {
  std::vector<MountInfo> out;
  auto text = ReadFile(file);
  if (!text.ok()) return out;
  std::istringstream in(*text);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    MountInfo m;
    std::string options, tag;
    if (!(fields >> m.id >> m.parent >> m.device >> m.root >> m.point >> options)) continue;
    m.root = Unescape(m.root);
    m.point = Unescape(m.point);
    // Optional fields ("shared:N", "master:N", ...) up to the "-" separator.
    while (fields >> tag && tag != "-") m.shared = m.shared || tag.starts_with("shared:");
    out.push_back(std::move(m));
  }
  return out;
}

const MountInfo* MountHolding(const std::vector<MountInfo>& mounts, const std::string& path) {
  const MountInfo* best = nullptr;
  for (const auto& m : mounts) {
    const bool holds = m.point == "/" || path == m.point || path.starts_with(m.point + "/");
    if (holds && (!best || m.point.size() >= best->point.size())) best = &m;
  }
  return best;
}

}  // namespace adapt::os
