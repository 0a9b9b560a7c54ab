#include "cli/file_transfer.h"

#include <archive.h>
#include <archive_entry.h>
#include <curl/curl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <vector>

#include "base/archive_path.h"

namespace adapt::cli {
namespace {

namespace fs = std::filesystem;
using CurlPtr = std::unique_ptr<CURL, decltype(&curl_easy_cleanup)>;
using HeaderPtr = std::unique_ptr<curl_slist, decltype(&curl_slist_free_all)>;

struct DownloadSink {
  CURL* curl = nullptr;
  FILE* out = nullptr;
  bool checked = false;
  bool ok = false;
  std::string error_body;
};

size_t OnDownload(char* data, size_t size, size_t count, void* user) {
  auto& d = *static_cast<DownloadSink*>(user);
  size_t n = size * count;
  if (!d.checked) {
    long status = 0;
    curl_easy_getinfo(d.curl, CURLINFO_RESPONSE_CODE, &status);
    d.ok = status < 400;
    d.checked = true;
  }
  if (!d.ok) {
    if (d.error_body.size() < (1 << 20)) d.error_body.append(data, n);
    return n;
  }
  return std::fwrite(data, 1, n, d.out);
}

size_t OnBody(char* data, size_t size, size_t count, void* user) {
  auto& body = *static_cast<std::string*>(user);
  if (body.size() < (1 << 20)) body.append(data, size * count);
  return size * count;
}

Result<HttpResponse> Perform(const ApiClient& client, const char* method, const std::string& path,
                             FILE* in, long long size, const std::string& content_type, FILE* out,
                             const HeaderList& extra_headers = {}) {
  CurlPtr curl(curl_easy_init(), &curl_easy_cleanup);
  if (!curl) return Internal("cannot initialise libcurl");
  HeaderPtr headers(nullptr, &curl_slist_free_all);
  auto add = [&](const std::string& line) {
    headers.reset(curl_slist_append(headers.release(), line.c_str()));
  };
  add("Accept: application/json");
  if (!client.api_key().empty()) add("Authorization: Bearer " + client.api_key());
  if (in) add("Content-Type: " + content_type);
  for (const auto& [name, value] : extra_headers) add(name + ": " + value);
  add("Expect:");
  CURL* c = curl.get();
  char error_buffer[CURL_ERROR_SIZE] = {};
  std::string url = client.base_url() + path;
  curl_easy_setopt(c, CURLOPT_URL, url.c_str());
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers.get());
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, 10L);
  curl_easy_setopt(c, CURLOPT_ERRORBUFFER, error_buffer);
  DownloadSink d;
  d.curl = c;
  d.out = out;
  std::string body;
  if (in) {
    curl_easy_setopt(c, CURLOPT_UPLOAD, 1L);
    curl_easy_setopt(c, CURLOPT_READDATA, in);
    curl_easy_setopt(c, CURLOPT_INFILESIZE_LARGE, static_cast<curl_off_t>(size));
    curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, &OnBody);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &body);
  } else {
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, &OnDownload);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &d);
  }
  CURLcode rc = curl_easy_perform(c);
  if (rc != CURLE_OK) {
    std::string reason = error_buffer[0] ? error_buffer : curl_easy_strerror(rc);
    return Status(Code::kUnavailable,
                  "transfer with adaptd at " + client.base_url() + " failed: " + reason);
  }
  HttpResponse response;
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &response.status);
  response.body = in ? std::move(body) : std::move(d.error_body);
  return response;
}

Status ArchiveError(struct archive* a, const std::string& what) {
  const char* e = archive_error_string(a);
  return Internal(what + ": " + (e ? e : "libarchive error"));
}

}  // namespace

Result<HttpResponse> PutStream(const ApiClient& client, const std::string& path, FILE* in,
                               long long size, const std::string& content_type) {
  return Perform(client, "PUT", path, in, size, content_type, nullptr);
}

Result<HttpResponse> PostStream(const ApiClient& client, const std::string& path, FILE* in,
                                long long size, const std::string& content_type,
                                const HeaderList& headers) {
  return Perform(client, "POST", path, in, size, content_type, nullptr, headers);
}

Result<HttpResponse> GetStream(const ApiClient& client, const std::string& path, FILE* out) {
  return Perform(client, "GET", path, nullptr, 0, "", out);
}

Status DownloadToFile(const ApiClient& client, const std::string& path, const std::string& local) {
  // A new file of a random name (mkstemp creates it exclusively): a name made beforehand, a
  // symlink a sandbox's directory brought here, say, is never followed.
  std::string part = local + ".adapt-part-XXXXXX";
  int fd = ::mkstemp(part.data());
  if (fd < 0) return Status(Code::kInvalidArgument, "cannot write " + local);
  // mkstemp makes it 0600; a download gets what a new file gets (0666 less the umask).
  mode_t mask = ::umask(0);
  ::umask(mask);
  ::fchmod(fd, 0666 & ~mask);
  std::unique_ptr<FILE, decltype(&std::fclose)> out(::fdopen(fd, "wb"), &std::fclose);
  if (!out) {
    ::close(fd);
    std::error_code ec;
    fs::remove(part, ec);
    return Status(Code::kInvalidArgument, "cannot write " + local);
  }
  auto answer = GetStream(client, path, out.get());
  Status st = answer.ok() ? ErrorFromResponse(*answer) : answer.status();
  if (std::fclose(out.release()) != 0 && st.ok()) st = Internal("writing " + local + " failed");
  std::error_code ec;
  if (!st.ok()) {
    fs::remove(part, ec);
    return st;
  }
  fs::rename(part, local, ec);
  if (ec) return Internal("cannot write " + local + ": " + ec.message());
  return Status::Ok();
}

Status WriteDirectoryTar(const std::string& dir, FILE* out) {
  std::unique_ptr<struct archive, decltype(&archive_write_free)> a(archive_write_new(),
                                                                   &archive_write_free);
  archive_write_set_format_pax_restricted(a.get());
  if (archive_write_open_FILE(a.get(), out) != ARCHIVE_OK)
    return ArchiveError(a.get(), "writing the archive");
  std::error_code ec;
  fs::path base = fs::path(dir).lexically_normal();
  if (!base.has_filename()) base = base.parent_path();  // "dir/"
  fs::recursive_directory_iterator it(base, fs::directory_options::none, ec), end;
  if (ec) return Status(Code::kInvalidArgument, "cannot read " + dir + ": " + ec.message());
  std::vector<char> buf(256 * 1024);
  for (; it != end; it.increment(ec)) {
    if (ec) return Internal("cannot read " + dir + ": " + ec.message());
    const fs::path& p = it->path();
    auto st = fs::symlink_status(p, ec);
    if (ec) continue;
    std::unique_ptr<archive_entry, decltype(&archive_entry_free)> e(archive_entry_new(),
                                                                    &archive_entry_free);
    archive_entry_set_pathname(e.get(), p.lexically_relative(base).generic_string().c_str());
    archive_entry_set_perm(e.get(), static_cast<mode_t>(st.permissions()) & 07777);
    auto mtime = fs::last_write_time(p, ec);
    if (!ec) {
      auto secs = std::chrono::duration_cast<std::chrono::seconds>(
          std::chrono::file_clock::to_sys(mtime).time_since_epoch());
      archive_entry_set_mtime(e.get(), secs.count(), 0);
    }
    FILE* data = nullptr;
    if (fs::is_symlink(st)) {
      archive_entry_set_filetype(e.get(), AE_IFLNK);
      archive_entry_set_symlink(e.get(), fs::read_symlink(p, ec).c_str());
    } else if (fs::is_directory(st)) {
      archive_entry_set_filetype(e.get(), AE_IFDIR);
    } else if (fs::is_regular_file(st)) {
      archive_entry_set_filetype(e.get(), AE_IFREG);
      archive_entry_set_size(e.get(), static_cast<la_int64_t>(fs::file_size(p)));
      data = std::fopen(p.c_str(), "rb");
      if (!data) return Status(Code::kInvalidArgument, "cannot read " + p.string());
    } else {
      continue;  // devices, FIFOs, sockets
    }
    if (archive_write_header(a.get(), e.get()) != ARCHIVE_OK) {
      if (data) std::fclose(data);
      return ArchiveError(a.get(), "archiving " + p.string());
    }
    if (data) {
      size_t n;
      while ((n = std::fread(buf.data(), 1, buf.size(), data)) > 0) {
        if (archive_write_data(a.get(), buf.data(), n) < 0) {
          std::fclose(data);
          return ArchiveError(a.get(), "archiving " + p.string());
        }
      }
      std::fclose(data);
    }
  }
  if (archive_write_close(a.get()) != ARCHIVE_OK) return ArchiveError(a.get(), "archiving");
  return Status::Ok();
}

// Archive names with ".." or a leading "/" would land outside the target; `clean` is the
// name relative to it.
bool IsSafeName(const std::string& name, std::string& clean) {
  return !name.starts_with("/") && CleanArchivePath(name, clean);
}

// Whether a symlink at `clean_name` (relative to the target) pointing to `link` stays inside
// the target, read lexically: relative, and never climbing above it. A link out (to
// /etc/passwd, or ../../.bashrc) would send a later write through it elsewhere.
bool LinkStaysInside(const std::string& clean_name, const std::string& link) {
  if (link.empty() || link.starts_with("/")) return false;
  std::vector<std::string> at;
  for (const auto& part : fs::path(clean_name).parent_path()) at.push_back(part.string());
  for (const auto& part : fs::path(link)) {
    std::string p = part.string();
    if (p.empty() || p == ".") continue;
    if (p != "..") {
      at.push_back(p);
    } else if (at.empty()) {
      return false;
    } else {
      at.pop_back();
    }
  }
  return true;
}

Status ExtractTar(FILE* in, const std::string& dir_arg, std::vector<std::string>* skipped) {
  std::error_code ec;
  // Absolute and normalised: the entries' safety is checked here, and libarchive's own
  // checks would refuse a target like "../out".
  std::string dir = fs::absolute(dir_arg).lexically_normal().string();
  fs::create_directories(dir, ec);
  if (ec) return Status(Code::kInvalidArgument, "cannot create " + dir + ": " + ec.message());
  std::unique_ptr<struct archive, decltype(&archive_read_free)> a(archive_read_new(),
                                                                  &archive_read_free);
  archive_read_support_format_tar(a.get());
  if (archive_read_open_FILE(a.get(), in) != ARCHIVE_OK)
    return ArchiveError(a.get(), "reading the archive");
  std::unique_ptr<struct archive, decltype(&archive_write_free)> disk(archive_write_disk_new(),
                                                                      &archive_write_free);
  // Without ARCHIVE_EXTRACT_PERM: modes are the entries' less the umask, and setuid, setgid
  // and sticky bits are dropped (a sandbox chooses them; a root user would get a setuid-root
  // binary).
  archive_write_disk_set_options(disk.get(),
                                 ARCHIVE_EXTRACT_TIME | ARCHIVE_EXTRACT_SECURE_SYMLINKS);
  archive_entry* e = nullptr;
  int r;
  while ((r = archive_read_next_header(a.get(), &e)) == ARCHIVE_OK) {
    std::string name = archive_entry_pathname(e);
    const char* hard_link = archive_entry_hardlink(e);
    std::string clean_name, clean_link;
    if (!IsSafeName(name, clean_name) || (hard_link && !IsSafeName(hard_link, clean_link)))
      return Internal("the archive entry " + name + " would land outside " + dir_arg);
    // Files, directories and links only: no device nodes, FIFOs or sockets.
    const auto type = archive_entry_filetype(e);
    if (type != AE_IFREG && type != AE_IFDIR && type != AE_IFLNK)
      return Internal("the archive entry " + name + " is not a file, directory or link");
    if (type == AE_IFLNK) {
      // Not made (a workspace's links to /usr are common: a venv's python): listed instead.
      const char* link = archive_entry_symlink(e);
      if (!link || !LinkStaysInside(clean_name, link)) {
        if (skipped) skipped->push_back(clean_name);
        archive_read_data_skip(a.get());
        continue;
      }
    }
    std::string target = (fs::path(dir) / clean_name).string();
    archive_entry_set_pathname(e, target.c_str());
    if (hard_link) {
      std::string h = (fs::path(dir) / clean_link).string();
      archive_entry_set_hardlink(e, h.c_str());
    }
    if (archive_write_header(disk.get(), e) != ARCHIVE_OK)
      return ArchiveError(disk.get(), "extracting " + name);
    const void* block;
    size_t size;
    la_int64_t offset;
    while ((r = archive_read_data_block(a.get(), &block, &size, &offset)) == ARCHIVE_OK) {
      if (archive_write_data_block(disk.get(), block, size, offset) != ARCHIVE_OK)
        return ArchiveError(disk.get(), "extracting " + name);
    }
    if (r != ARCHIVE_EOF) return ArchiveError(a.get(), "reading the archive");
    archive_write_finish_entry(disk.get());
  }
  if (r != ARCHIVE_EOF) return ArchiveError(a.get(), "reading the archive");
  return archive_write_close(disk.get()) == ARCHIVE_OK ? Status::Ok()
                                                       : ArchiveError(disk.get(), "extracting");
}

}  // namespace adapt::cli
