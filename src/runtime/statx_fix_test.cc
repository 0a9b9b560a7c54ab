#include "runtime/statx_fix.h"

#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "os/files.h"
#include "os/process.h"

#ifndef ADAPT_STATX_PRELOAD_PATH
#error "ADAPT_STATX_PRELOAD_PATH must name the built adapt-statx.so"
#endif

namespace adapt::runtime {
namespace {

TEST(PreloadListWithStatxFix, WithoutAListOfTheImageItIsTheFixAlone) {
  EXPECT_EQ(PreloadListWithStatxFix(""), "/.adapt/adapt-statx.so\n");
}

TEST(PreloadListWithStatxFix, TheImagesOwnEntriesStayFirst) {
  EXPECT_EQ(PreloadListWithStatxFix("/lib/a.so /lib/b.so"),
            "/lib/a.so /lib/b.so\n/.adapt/adapt-statx.so\n");
  EXPECT_EQ(PreloadListWithStatxFix("/lib/a.so\n"), "/lib/a.so\n/.adapt/adapt-statx.so\n");
}

// The dynamic section of the built library, read with <elf.h>: what readelf -d would show.
std::vector<Elf64_Dyn> DynamicEntries(const std::string& elf) {
  std::vector<Elf64_Dyn> out;
  if (elf.size() < sizeof(Elf64_Ehdr)) return out;
  Elf64_Ehdr eh;
  std::memcpy(&eh, elf.data(), sizeof eh);
  for (int i = 0; i < eh.e_phnum; ++i) {
    Elf64_Phdr ph;
    size_t at = eh.e_phoff + static_cast<size_t>(i) * eh.e_phentsize;
    if (at + sizeof ph > elf.size()) break;
    std::memcpy(&ph, elf.data() + at, sizeof ph);
    if (ph.p_type != PT_DYNAMIC) continue;
    for (size_t off = ph.p_offset; off + sizeof(Elf64_Dyn) <= ph.p_offset + ph.p_filesz;
         off += sizeof(Elf64_Dyn)) {
      Elf64_Dyn d;
      std::memcpy(&d, elf.data() + off, sizeof d);
      if (d.d_tag == DT_NULL) break;
      out.push_back(d);
    }
  }
  return out;
}

TEST(StatxPreload, NeedsNoLibraryAndNoSymbolVersionsSoAnyGlibcLoadsIt) {
  auto elf = os::ReadFile(ADAPT_STATX_PRELOAD_PATH);
  ASSERT_TRUE(elf.ok()) << elf.status().message();
  auto dyn = DynamicEntries(*elf);
  ASSERT_FALSE(dyn.empty());
  std::set<Elf64_Sxword> tags;
  for (const auto& d : dyn) tags.insert(d.d_tag);
  for (Elf64_Sxword forbidden : {DT_NEEDED, DT_VERNEED, DT_VERDEF, DT_VERSYM, DT_TEXTREL})
    EXPECT_EQ(tags.count(forbidden), 0u) << "dynamic tag " << forbidden;
  EXPECT_EQ(tags.count(DT_HASH), 1u) << "old glibc and musl look symbols up by DT_HASH";
}

TEST(StatxPreload, ItsStatxWorksAndSetsErrno) {
  void* lib = ::dlopen(ADAPT_STATX_PRELOAD_PATH, RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(lib, nullptr) << ::dlerror();
  using StatxFn = int (*)(int, const char*, int, unsigned, struct statx*);
  auto fn = reinterpret_cast<StatxFn>(::dlsym(lib, "statx"));
  ASSERT_NE(fn, nullptr);
  struct statx st {};
  ASSERT_EQ(fn(AT_FDCWD, "/", AT_NO_AUTOMOUNT, STATX_BASIC_STATS, &st), 0);
  EXPECT_TRUE(S_ISDIR(st.stx_mode));
  errno = 0;
  EXPECT_EQ(fn(AT_FDCWD, "/no/such/path", AT_NO_AUTOMOUNT, STATX_BASIC_STATS, &st), -1);
  EXPECT_EQ(errno, ENOENT);
  ::dlclose(lib);
}

TEST(StatxPreload, RunAsAProgramItIsTheProbeAndThisKernelAcceptsTheFlag) {
  auto r = os::RunCommand({ADAPT_STATX_PRELOAD_PATH});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_FALSE(r->status.signaled()) << r->status.signal;
  EXPECT_EQ(r->status.exit_code, 0) << r->output;
}

}  // namespace
}  // namespace adapt::runtime
