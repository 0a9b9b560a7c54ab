#include "api/s3_xml.h"

#include <time.h>

namespace adapt::api {

std::string XmlUnescape(const std::string& s) {
  static const std::pair<const char*, char> kEntities[] = {{"&amp;", '&'},   {"&lt;", '<'},
                                                           {"&gt;", '>'},    {"&quot;", '"'},
                                                           {"&apos;", '\''}, {"&#39;", '\''}};
  std::string out;
  for (size_t i = 0; i < s.size();) {
    bool matched = false;
    if (s[i] == '&') {
      for (const auto& [name, ch] : kEntities) {
        std::string n(name);
        if (s.compare(i, n.size(), n) == 0) {
          out.push_back(ch);
          i += n.size();
          matched = true;
          break;
        }
      }
      if (!matched && s.compare(i, 2, "&#") == 0) {
        size_t semi = s.find(';', i);
        if (semi != std::string::npos && semi - i < 10) {
          bool hex = s[i + 2] == 'x';
          try {
            long v = std::stol(s.substr(i + (hex ? 3 : 2), semi - i - (hex ? 3 : 2)), nullptr,
                               hex ? 16 : 10);
            if (v > 0 && v < 128) {
              out.push_back(static_cast<char>(v));
              i = semi + 1;
              matched = true;
            }
          } catch (...) {
          }
        }
      }
    }
    if (!matched) out.push_back(s[i++]);
  }
  return out;
}

std::vector<std::string> XmlElements(const std::string& xml, const std::string& tag) {
  std::vector<std::string> out;
  const std::string open = "<" + tag + ">", close = "</" + tag + ">";
  size_t at = 0;
  for (;;) {
    size_t b = xml.find(open, at);
    if (b == std::string::npos) return out;
    b += open.size();
    size_t e = xml.find(close, b);
    if (e == std::string::npos) return out;
    out.push_back(XmlUnescape(xml.substr(b, e - b)));
    at = e + close.size();
  }
}

std::string HttpDate(int64_t millis) {
  time_t t = static_cast<time_t>(millis / 1000);
  struct tm tm {};
  gmtime_r(&t, &tm);
  char buf[64];
  strftime(buf, sizeof buf, "%a, %d %b %Y %H:%M:%S GMT", &tm);
  return buf;
}

}  // namespace adapt::api
