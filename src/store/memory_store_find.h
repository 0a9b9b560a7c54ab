// FindIf: the MemoryStore files' lookup of one row in a vector (nullptr when none matches).
#pragma once

#include <algorithm>
#include <vector>

namespace adapt::store {

template <typename T, typename Pred>
T* FindIf(std::vector<T>& v, Pred pred) {
  auto it = std::find_if(v.begin(), v.end(), pred);
  return it == v.end() ? nullptr : &*it;
}

}  // namespace adapt::store
