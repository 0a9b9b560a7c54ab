#!/usr/bin/env python3
"""Where adaptd's CPU goes under api_bench: buckets the samples of a `perf record` of adaptd by
the innermost frame that names a step of the request (the key check, the row read, the JSON,
the hop to the worker pool, ...), as bench/README.md "api" reports them.

    perf record -F 499 --call-graph dwarf -p $(pgrep -f 'build/bin/adaptd') -o get.data -- sleep 8
    python3 bench/api/profile_buckets.py get.data

Malloc and free count toward the step that called them; their total is printed apart. Shares
are of adaptd's whole CPU (its I/O threads and workers). Needs perf; standard library only.
"""

import collections
import re
import subprocess
import sys

# Innermost (leaf-most) match wins: the step a sample was spent in.
STEPS = [
    ("auth: key hash (sha256)", r"Sha256Hex"),
    ("auth: FindApiKey", r"SqliteStore::FindApiKey"),
    ("auth: GetOrg", r"SqliteStore::GetOrg|SqliteStore::FindOrg"),
    ("auth: other", r"Auth::Authenticate|Router::Authenticate"),
    ("row: config JSON parse", r"DecodeSandboxConfig"),
    ("row: env open", r"DecodeEnvColumn"),
    ("row: result decode", r"DecodeSandboxResult"),
    ("row: other ReadSandbox", r"SqliteStore::ReadSandbox"),
    ("row: sqlite (query/step/locks)",
     r"SqliteStore::GetLocked|SqliteStore::GetSandbox|SqliteStore::ListSandboxes"),
    ("endpoints", r"EndpointsOf|ListEndpoints"),
    ("view (ViewOf)", r"core::ViewOf"),
    ("time text (FormatRfc3339)", r"FormatRfc3339"),
    ("JSON text writer", r"SandboxJsonText|SandboxPageJsonText|JsonText::"),
    ("SandboxToJson build", r"SandboxToJson|SandboxPageToJson"),
    ("core: record copies (SandboxService)", r"SandboxService::(Get|List)"),
    ("route handler (its own code)", r"AddSandboxRoutes"),
    ("JSON dump (JsonResponse)", r"JsonResponse|serializer<"),
    ("json destroy", r"json_value::destroy|~basic_json"),
    ("router match/other", r"Router::Handle"),
    ("handler other", r"ServerContext::Invoke"),
    ("write response", r"WriteResponse|write_op<|write_some_op"),
    ("read request", r"read_op<|read_some_op|ReadHeader|ReadHead|OnHeader|Dispatch|ToHttpRequest"),
    ("hop: futex wait/wake (thread handoff, locks)", r"futex|pthread_cond|pthread_mutex"),
    ("I/O: epoll", r"epoll_wait|epoll_reactor::run"),
    ("hop: asio post/strand", r"RunHandler|OnHandled|scheduler::run|strand"),
]


MALLOC = re.compile(r"(malloc|_int_malloc|_int_free|cfree.*|malloc_consolidate|unlink_chunk.*|"
                    r"__libc_malloc.*|__GI___libc_malloc.*)$")


def step_of(frames):
    for frame in frames:
        for name, rx in STEPS:
            if re.search(rx, frame):
                return name
    if any("finish_task_switch" in f or "schedule" in f for f in frames[:3]):
        return "kernel: context switch (stack not unwound)"
    return "other"


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    text = subprocess.run(["perf", "script", "-i", sys.argv[1], "-F", "comm,tid,ip,sym"],
                          capture_output=True, text=True, check=True).stdout
    steps = collections.Counter()
    total = malloc = switches = 0
    for block in text.split("\n\n"):
        lines = block.strip().split("\n")
        if len(lines) < 2:
            continue
        total += 1
        frames = [(line.strip().split(None, 1) + [""])[1] for line in lines[1:]]
        malloc += any(MALLOC.match(f) for f in frames[:3])
        switches += any("finish_task_switch" in f for f in frames[:2])
        steps[step_of(frames)] += 1
    if not total:
        sys.exit("no samples in " + sys.argv[1])
    print("%d samples; malloc/free %.1f%%, in context switches %.1f%%" %
          (total, 100.0 * malloc / total, 100.0 * switches / total))
    for name, n in steps.most_common():
        print("%5.1f%%  %s" % (100.0 * n / total, name))


if __name__ == "__main__":
    main()
