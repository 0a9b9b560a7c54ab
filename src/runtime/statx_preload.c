// adapt-statx.so: preloaded into the sandboxes of a runsc whose statx(2) refuses
// AT_NO_AUTOMOUNT with EINVAL (Debian's runsc 20221219 does; coreutils 9 always passes the
// flag, so `ls /` fails). Its `statx` retries without the flag, which changes nothing on a
// filesystem without automount points (there are none inside gVisor).
//
// It must load under whatever glibc an image carries, so it depends on none: built with
// -nostdlib, no DT_NEEDED, no versioned symbols, raw syscalls. errno is set through a weak
// reference to __errno_location (glibc and musl both define it; unversioned, so any glibc's
// binds). musl ignores /etc/ld.so.preload and static binaries load nothing, so neither ever
// sees this library.
//
// Executed directly (`runsc do .../adapt-statx.so`), it is the probe adaptd runs at start-up:
// exit 0 when statx accepts AT_NO_AUTOMOUNT, 1 when it refuses it but works without it,
// 2 otherwise. glibc's libc.so.6 is executable the same way; the kernel applies no
// relocations to it, so the probe's path uses none.

#define ADAPT_AT_FDCWD (-100)
#define ADAPT_AT_NO_AUTOMOUNT 0x800
#define ADAPT_STATX_BASIC_STATS 0x7ffu
#define ADAPT_EINVAL 22

#if defined(__x86_64__)
#define ADAPT_SYS_STATX 332
#define ADAPT_SYS_EXIT_GROUP 231
#elif defined(__aarch64__)
#define ADAPT_SYS_STATX 291
#define ADAPT_SYS_EXIT_GROUP 94
#else
#error "adapt-statx.so: add this architecture's syscall numbers and entry point"
#endif

struct statx;

extern int* __errno_location(void) __attribute__((weak));

static long raw_syscall5(long number, long a, long b, long c, long d, long e) {
#if defined(__x86_64__)
  long ret;
  register long r10 __asm__("r10") = d;
  register long r8 __asm__("r8") = e;
  __asm__ volatile("syscall"
                   : "=a"(ret)
                   : "a"(number), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8)
                   : "rcx", "r11", "memory");
  return ret;
#elif defined(__aarch64__)
  register long x8 __asm__("x8") = number;
  register long x0 __asm__("x0") = a;
  register long x1 __asm__("x1") = b;
  register long x2 __asm__("x2") = c;
  register long x3 __asm__("x3") = d;
  register long x4 __asm__("x4") = e;
  __asm__ volatile("svc 0" : "+r"(x0) : "r"(x8), "r"(x1), "r"(x2), "r"(x3), "r"(x4) : "memory");
  return x0;
#endif
}

static long raw_statx(int dirfd, const char* path, int flags, unsigned mask, void* buf) {
  return raw_syscall5(ADAPT_SYS_STATX, dirfd, (long)path, flags, (long)mask, (long)buf);
}

static long statx_tolerating_no_automount(int dirfd, const char* path, int flags, unsigned mask,
                                          void* buf) {
  long ret = raw_statx(dirfd, path, flags, mask, buf);
  if (ret == -ADAPT_EINVAL && (flags & ADAPT_AT_NO_AUTOMOUNT))
    ret = raw_statx(dirfd, path, flags & ~ADAPT_AT_NO_AUTOMOUNT, mask, buf);
  return ret;
}

__attribute__((visibility("default"))) int statx(int dirfd, const char* path, int flags,
                                                 unsigned mask, struct statx* buf) {
  long ret = statx_tolerating_no_automount(dirfd, path, flags, mask, buf);
  if (ret < 0 && ret > -4096) {
    if (__errno_location) *__errno_location() = (int)-ret;
    return -1;
  }
  return (int)ret;
}

__attribute__((noreturn, used)) void adapt_statx_probe_main(void) {
  // Large enough for struct statx (256 bytes) and aligned for it.
  unsigned long long buf[64];
  long ret = raw_statx(ADAPT_AT_FDCWD, "/", ADAPT_AT_NO_AUTOMOUNT, ADAPT_STATX_BASIC_STATS, buf);
  int code = 0;
  if (ret == -ADAPT_EINVAL)
    code = raw_statx(ADAPT_AT_FDCWD, "/", 0, ADAPT_STATX_BASIC_STATS, buf) == 0 ? 1 : 2;
  else if (ret != 0)
    code = 2;
  for (;;) raw_syscall5(ADAPT_SYS_EXIT_GROUP, code, 0, 0, 0, 0);
}

// The entry point when executed: the kernel leaves the stack 16-byte aligned with no return
// address, so align it as a call expects before entering C.
#if defined(__x86_64__)
__asm__(
    ".text\n"
    ".globl adapt_statx_probe_entry\n"
    ".hidden adapt_statx_probe_entry\n"
    ".type adapt_statx_probe_entry,@function\n"
    "adapt_statx_probe_entry:\n"
    "  xor %ebp, %ebp\n"
    "  and $-16, %rsp\n"
    "  call adapt_statx_probe_main\n"
    "  hlt\n");
#elif defined(__aarch64__)
__asm__(
    ".text\n"
    ".globl adapt_statx_probe_entry\n"
    ".hidden adapt_statx_probe_entry\n"
    ".type adapt_statx_probe_entry,%function\n"
    "adapt_statx_probe_entry:\n"
    "  mov x29, #0\n"
    "  mov x30, #0\n"
    "  bl adapt_statx_probe_main\n"
    "  brk #0\n");
#endif
