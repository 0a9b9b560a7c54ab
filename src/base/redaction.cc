#include "base/redaction.h"

#include <algorithm>
#include <deque>
#include <utility>

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

// Every byte of `text` that is part of an occurrence of some value, as [start, end) spans in
// order, occurrences that overlap merged into one: an Aho-Corasick automaton over the values,
// linear in the text and the values' total length however either repeats (the owner of a
// sandbox chooses both its env and its output; a plain search per value is quadratic on
// "aaa...ab" against "aaaa...").
class SecretMatcher {
 public:
  explicit SecretMatcher(const std::vector<std::string>& secrets) {
    nodes_.emplace_back();
    for (const auto& secret : secrets) {
      if (secret.empty()) continue;
      int state = 0;
      for (unsigned char c : secret) {
        int next = Child(state, c);
        if (next < 0) {
          next = static_cast<int>(nodes_.size());
          nodes_[state].next.push_back({c, next});
          nodes_.emplace_back();
        }
        state = next;
      }
      nodes_[state].longest = std::max(nodes_[state].longest, secret.size());
    }
    // Breadth first: a node's failure link is the longest proper suffix of its string that is
    // a node too, and it ends the values its failure link ends.
    std::deque<int> queue;
    for (auto [c, child] : nodes_[0].next) queue.push_back(child);
    while (!queue.empty()) {
      int node = queue.front();
      queue.pop_front();
      for (auto [c, child] : nodes_[node].next) {
        int fail = nodes_[node].fail;
        while (fail != 0 && Child(fail, c) < 0) fail = nodes_[fail].fail;
        int target = Child(fail, c);
        nodes_[child].fail = target >= 0 && target != child ? target : 0;
        nodes_[child].longest = std::max(nodes_[child].longest, nodes_[nodes_[child].fail].longest);
        queue.push_back(child);
      }
    }
  }

  std::vector<std::pair<size_t, size_t>> Spans(std::string_view text) const {
    std::vector<std::pair<size_t, size_t>> spans;
    int state = 0;
    for (size_t i = 0; i < text.size(); ++i) {
      auto c = static_cast<unsigned char>(text[i]);
      while (state != 0 && Child(state, c) < 0) state = nodes_[state].fail;
      state = std::max(Child(state, c), 0);
      size_t len = nodes_[state].longest;  // the longest value ending here covers the others
      if (len == 0) continue;
      std::pair<size_t, size_t> span{i + 1 - len, i + 1};
      while (!spans.empty() && spans.back().second > span.first) {
        span.first = std::min(span.first, spans.back().first);
        spans.pop_back();
      }
      spans.push_back(span);
    }
    return spans;
  }

 private:
  struct Node {
    std::vector<std::pair<unsigned char, int>> next;
    int fail = 0;
    size_t longest = 0;  // of the values that end at this node's string
  };

  int Child(int node, unsigned char c) const {
    for (auto [key, child] : nodes_[node].next)
      if (key == c) return child;
    return -1;
  }

  std::vector<Node> nodes_;
};

std::vector<std::pair<size_t, size_t>> SecretSpans(std::string_view text,
                                                   const std::vector<std::string>& secrets) {
  return SecretMatcher(secrets).Spans(text);
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
