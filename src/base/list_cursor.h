// API.md's list contract, shared by every list: a page request (`limit` 1..200, default 50, and
// an opaque `cursor`) and a page (items, the next page's cursor or none), newest first.
//
// Cursors are opaque to clients and checked on the way in. Two kinds, one codec:
//   "c<seq>": a position in a list ordered by the store's insertion sequence (newest first);
//             the next page holds the rows whose seq is below it, so rows inserted between
//             pages never appear on a later page and none is skipped or repeated.
//   "k<hex>": a position in a list ordered by key (object storage, S3's order); the next page
//             holds the keys after it.
// Plain std, no state: safe from any thread.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"

namespace adapt {

constexpr int kDefaultPageLimit = 50;
constexpr int kMaxPageLimit = 200;

// One page of a list, as a client asked for it.
struct PageRequest {
  int limit = kDefaultPageLimit;  // 1..kMaxPageLimit
  std::string cursor;             // empty: the first page
};

template <typename T>
struct Page {
  std::vector<T> items;
  std::optional<std::string> next_cursor;  // unset on the last page
};

// InvalidArgument on field "limit" unless 1 <= limit <= kMaxPageLimit.
Status CheckPageLimit(int limit);

// Empty: the first page. Anything this server did not issue is a 400 on field "cursor".
Result<std::optional<int64_t>> ParseListCursor(const std::string& cursor);

// The cursor of the next page: unset on the last page.
std::optional<std::string> NextListCursor(const std::optional<int64_t>& next_seq);

// A key-ordered list's cursor: the last key of a page (the next page starts after it).
// Empty: the first page (""); a sequence cursor or anything else not issued here is a 400.
Result<std::string> ParseKeyListCursor(const std::string& cursor);
std::string KeyListCursor(const std::string& last_key);

// One newest-first page of `rows` (in any order; `seq_of(row)` is each row's insertion
// sequence, unique within the list), for a list whose store hands over all of its rows.
// Fails on a bad limit or cursor.
template <typename T, typename SeqOf>
Result<Page<T>> PageNewestFirst(std::vector<T> rows, const PageRequest& request, SeqOf seq_of) {
  RETURN_IF_ERROR(CheckPageLimit(request.limit));
  ASSIGN_OR_RETURN(std::optional<int64_t> before, ParseListCursor(request.cursor));
  std::erase_if(rows, [&](const T& row) { return before && seq_of(row) >= *before; });
  std::sort(rows.begin(), rows.end(),
            [&](const T& a, const T& b) { return seq_of(a) > seq_of(b); });
  Page<T> page;
  if (static_cast<int>(rows.size()) > request.limit) {
    rows.resize(request.limit);
    page.next_cursor = NextListCursor(seq_of(rows.back()));
  }
  page.items = std::move(rows);
  return page;
}

// The same page with each item turned into what the caller shows (a record into its view),
// so that only the items of the page are looked at.
template <typename T, typename ToView>
auto MapPage(Page<T> page, ToView to_view) -> Page<decltype(to_view(page.items.front()))> {
  Page<decltype(to_view(page.items.front()))> out;
  for (auto& item : page.items) out.items.push_back(to_view(item));
  out.next_cursor = std::move(page.next_cursor);
  return out;
}

// One key-ordered page of `rows` (in any order; `key_of(row)` is unique within the list), for
// a list with no insertion order (plans: a catalogue named by id). Fails on a bad limit or
// cursor.
template <typename T, typename KeyOf>
Result<Page<T>> PageByKey(std::vector<T> rows, const PageRequest& request, KeyOf key_of) {
  RETURN_IF_ERROR(CheckPageLimit(request.limit));
  ASSIGN_OR_RETURN(std::string after, ParseKeyListCursor(request.cursor));
  std::erase_if(rows, [&](const T& row) { return !after.empty() && key_of(row) <= after; });
  std::sort(rows.begin(), rows.end(),
            [&](const T& a, const T& b) { return key_of(a) < key_of(b); });
  Page<T> page;
  if (static_cast<int>(rows.size()) > request.limit) {
    rows.resize(request.limit);
    page.next_cursor = KeyListCursor(key_of(rows.back()));
  }
  page.items = std::move(rows);
  return page;
}

}  // namespace adapt
