#include "base/redaction.h"

#include <algorithm>
#include <map>

#include "base/text.h"

namespace adapt {
namespace {

// The longest k < pattern.size() such that text ends with pattern[0..k): Knuth-Morris-Pratt
// over the text's last pattern.size() - 1 bytes, linear in the pattern's length.
size_t LongestPrefixEndingText(std::string_view pattern, std::string_view text) {
  size_t n = pattern.size();
  if (n < 2 || text.empty()) return 0;
  std::vector<size_t> fail(n, 0);
  for (size_t i = 1, k = 0; i < n; ++i) {
    while (k > 0 && pattern[i] != pattern[k]) k = fail[k - 1];
    if (pattern[i] == pattern[k]) ++k;
    fail[i] = k;
  }
  size_t k = 0;
  for (char c : text.substr(text.size() - std::min(text.size(), n - 1))) {
    while (k > 0 && c != pattern[k]) k = fail[k - 1];
    if (c == pattern[k]) ++k;
  }
  return k;  // below n: a whole match needs n bytes, and at most n - 1 were read
}

std::string Reversed(std::string_view s) { return std::string(s.rbegin(), s.rend()); }

// Where the values occur in `text`, as [start, end) spans that do not overlap; longer values
// first.
std::map<size_t, size_t> SecretSpans(std::string_view text,
                                     const std::vector<std::string>& secrets) {
  std::map<size_t, size_t> spans;
  std::vector<const std::string*> order;
  for (const auto& s : secrets)
    if (!s.empty()) order.push_back(&s);
  std::stable_sort(order.begin(), order.end(), [](const std::string* a, const std::string* b) {
    return a->size() > b->size();
  });
  for (const std::string* secret : order) {
    for (size_t pos = text.find(*secret); pos != std::string_view::npos;) {
      size_t end = pos + secret->size();
      auto next = spans.lower_bound(end);  // the first span starting at or after `end`
      bool overlaps = next != spans.begin() && std::prev(next)->second > pos;
      if (!overlaps) spans[pos] = end;
      pos = text.find(*secret, overlaps ? pos + 1 : end);
    }
  }
  return spans;
}

}  // namespace

size_t LongestSecret(const std::vector<std::string>& secrets) {
  size_t longest = 0;
  for (const auto& s : secrets) longest = std::max(longest, s.size());
  return longest;
}

size_t SecretStartAtEnd(std::string_view text, const std::vector<std::string>& secrets) {
  size_t held = 0;
  for (const auto& s : secrets) held = std::max(held, LongestPrefixEndingText(s, text));
  return held;
}

std::string Redact(std::string_view text, const std::vector<std::string>& secrets) {
  std::string out;
  size_t cur = 0;
  for (const auto& [start, end] : SecretSpans(text, secrets)) {
    out.append(text.substr(cur, start - cur));
    out += kRedactionMask;
    cur = end;
  }
  out.append(text.substr(cur));
  return out;
}

std::string RedactWindow(std::string_view text, size_t from,
                         const std::vector<std::string>& secrets, bool cut_before) {
  from = std::min(from, text.size());
  size_t lead = 0;
  if (cut_before) {
    // A value's end at the start: its reverse's start at the end of the reversed head.
    size_t head = std::min(text.size(), LongestSecret(secrets));
    std::string reversed_head = Reversed(text.substr(0, head));
    for (const auto& s : secrets)
      lead = std::max(lead, LongestPrefixEndingText(Reversed(s), reversed_head));
  }
  std::string out;
  size_t cur = from;
  if (lead > cur) {
    out += kRedactionMask;
    cur = lead;
  }
  for (const auto& [start, end] : SecretSpans(text, secrets)) {
    if (end <= cur) continue;
    if (start > cur) out += SanitizeUtf8(text.substr(cur, start - cur));
    out += kRedactionMask;
    cur = end;
  }
  out += SanitizeUtf8(text.substr(cur));
  return out;
}

}  // namespace adapt
