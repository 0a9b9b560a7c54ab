// The XML of the storage gateway's S3 subset: escaping for responses, and the few request
// bodies it reads (CompleteMultipartUpload, DeleteObjects), found by tag.
#pragma once

#include <string>
#include <vector>

namespace adapt::api {

// &amp; &lt; &gt; &quot; &apos; and &#39; back to their characters.
std::string XmlUnescape(const std::string& s);
// The texts of every <tag>...</tag> in `xml`, in order, unescaped.
std::vector<std::string> XmlElements(const std::string& xml, const std::string& tag);
// "Tue, 29 Nov 2026 19:30:00 GMT" for `millis` since the epoch (Last-Modified).
std::string HttpDate(int64_t millis);

}  // namespace adapt::api
