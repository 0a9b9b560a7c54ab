#include "storage/sigv4.h"

#include <time.h>

#include <algorithm>
#include <cctype>
#include <set>
#include <sstream>
#include <vector>

#include "base/hex.h"
#include "base/ids.h"
#include "base/percent.h"
#include "storage/object_hash.h"

namespace adapt::storage {
namespace {

Status Malformed(const std::string& why) {
  return Status(Code::kUnauthenticated, "malformed SigV4 Authorization header: " + why);
}

std::string Trim(std::string s) {
  size_t b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  size_t e = s.find_last_not_of(" \t");
  s = s.substr(b, e - b + 1);
  // Collapse runs of spaces, as SigV4's canonical headers want.
  std::string out;
  for (char c : s) {
    if (c == ' ' && !out.empty() && out.back() == ' ') continue;
    out.push_back(c);
  }
  return out;
}

// SigV4 decodes a query name or value leniently, and '+' stands for itself, not a space.
std::string Decode(const std::string& s) { return PercentDecodeLenient(s, PlusSign::kLiteral); }

std::string CanonicalQuery(const std::string& raw, bool presigned) {
  std::vector<std::pair<std::string, std::string>> params;
  std::stringstream in(raw);
  std::string item;
  while (std::getline(in, item, '&')) {
    if (item.empty()) continue;
    size_t eq = item.find('=');
    std::string k = eq == std::string::npos ? item : item.substr(0, eq);
    std::string v = eq == std::string::npos ? "" : item.substr(eq + 1);
    if (presigned && Decode(k) == "X-Amz-Signature") continue;
    params.emplace_back(PercentEncode(Decode(k)), PercentEncode(Decode(v)));
  }
  std::sort(params.begin(), params.end());
  std::string out;
  for (const auto& [k, v] : params) out += (out.empty() ? "" : "&") + k + "=" + v;
  return out;
}

std::string Sha256OfText(const std::string& s) { return Sha256Hex(s); }

}  // namespace

Result<SigV4Authorization> ParseSigV4Authorization(const std::string& header) {
  static const std::string kAlg = "AWS4-HMAC-SHA256 ";
  if (header.compare(0, kAlg.size(), kAlg) != 0) return Malformed("not AWS4-HMAC-SHA256");
  SigV4Authorization a;
  std::string credential;
  std::stringstream in(header.substr(kAlg.size()));
  std::string part;
  while (std::getline(in, part, ',')) {
    part = Trim(part);
    size_t eq = part.find('=');
    if (eq == std::string::npos) return Malformed("a part without '='");
    std::string name = part.substr(0, eq), value = part.substr(eq + 1);
    if (name == "Credential")
      credential = value;
    else if (name == "SignedHeaders")
      a.signed_headers = value;
    else if (name == "Signature")
      a.signature = value;
  }
  std::vector<std::string> scope;
  std::stringstream cs(credential);
  while (std::getline(cs, part, '/')) scope.push_back(part);
  if (scope.size() != 5 || scope[4] != "aws4_request") return Malformed("bad Credential scope");
  if (a.signed_headers.empty() || a.signature.empty()) return Malformed("missing parts");
  a.access_key = scope[0];
  a.date = scope[1];
  a.region = scope[2];
  a.service = scope[3];
  return a;
}

std::string SigV4Signature(const SigV4Authorization& auth, const SigV4Request& r,
                           const std::string& secret) {
  std::string canonical_headers;
  std::stringstream names(auth.signed_headers);
  std::string name;
  while (std::getline(names, name, ';')) {
    auto it = r.headers->find(name);
    canonical_headers += name + ":" + (it == r.headers->end() ? "" : Trim(it->second)) + "\n";
  }
  std::string canonical = r.method + "\n" + PercentEncode(r.path, true) + "\n" +
                          CanonicalQuery(r.raw_query, r.presigned) + "\n" + canonical_headers +
                          "\n" + auth.signed_headers + "\n" + r.payload_hash;
  std::string amz_date = r.amz_date;
  if (amz_date.empty()) {
    auto date_it = r.headers->find("x-amz-date");
    if (date_it != r.headers->end()) amz_date = date_it->second;
  }
  std::string to_sign =
      "AWS4-HMAC-SHA256\n" + amz_date + "\n" + SigV4Scope(auth) + "\n" + Sha256OfText(canonical);
  return HexEncode(HmacSha256(SigV4SigningKey(auth, secret), to_sign));
}

std::string SigV4Scope(const SigV4Authorization& auth) {
  return auth.date + "/" + auth.region + "/" + auth.service + "/aws4_request";
}

std::string SigV4SigningKey(const SigV4Authorization& auth, const std::string& secret) {
  std::string k = HmacSha256("AWS4" + secret, auth.date);
  k = HmacSha256(k, auth.region);
  k = HmacSha256(k, auth.service);
  return HmacSha256(k, "aws4_request");
}

Result<SigV4Authorization> ParseSigV4Query(const std::map<std::string, std::string>& query) {
  auto get = [&query](const char* name) {
    auto it = query.find(name);
    return it == query.end() ? std::string() : it->second;
  };
  auto bad = [](const std::string& why) {
    return Status(Code::kUnauthenticated, "malformed presigned URL: " + why);
  };
  if (get("X-Amz-Algorithm") != "AWS4-HMAC-SHA256")
    return bad("X-Amz-Algorithm must be AWS4-HMAC-SHA256");
  SigV4Authorization a;
  std::vector<std::string> scope;
  std::stringstream cs(get("X-Amz-Credential"));
  std::string part;
  while (std::getline(cs, part, '/')) scope.push_back(part);
  if (scope.size() != 5 || scope[4] != "aws4_request") return bad("bad X-Amz-Credential scope");
  a.access_key = scope[0];
  a.date = scope[1];
  a.region = scope[2];
  a.service = scope[3];
  a.signed_headers = get("X-Amz-SignedHeaders");
  a.signature = get("X-Amz-Signature");
  a.amz_date = get("X-Amz-Date");
  if (a.signed_headers.empty() || a.signature.empty() || a.amz_date.empty())
    return bad("X-Amz-SignedHeaders, X-Amz-Signature and X-Amz-Date are required");
  const std::string expires = get("X-Amz-Expires");
  if (expires.empty() || expires.size() > 6 ||
      !std::all_of(expires.begin(), expires.end(), ::isdigit))
    return bad("X-Amz-Expires must be 1..604800 seconds");
  a.expires_seconds = std::stoll(expires);
  if (a.expires_seconds < 1 || a.expires_seconds > 604800)
    return bad("X-Amz-Expires must be 1..604800 seconds");
  return a;
}

std::string UnsignedAmzHeader(const SigV4Authorization& auth,
                              const std::map<std::string, std::string>& headers) {
  std::set<std::string> signed_names;
  std::stringstream names(auth.signed_headers);
  std::string name;
  while (std::getline(names, name, ';')) signed_names.insert(name);
  for (const auto& [header, value] : headers) {
    if (header.rfind("x-amz-", 0) != 0) continue;
    if (header == "x-amz-date" || header == "x-amz-content-sha256") continue;
    if (!signed_names.count(header)) return header;
  }
  return "";
}

int64_t ParseAmzDate(const std::string& text) {
  struct tm tm {};
  if (text.size() != 16) return -1;
  const char* end = strptime(text.c_str(), "%Y%m%dT%H%M%SZ", &tm);
  if (end == nullptr || *end != '\0') return -1;
  return static_cast<int64_t>(timegm(&tm));
}

}  // namespace adapt::storage
