#!/usr/bin/env bash
# quickstart-check.sh: a new user's first minutes, end to end (test.sh's `quickstart` stage).
# Runs scripts/setup.sh as README.md says, but into a scratch prefix and state directory, with
# its adaptd on a free loopback port and its own network name and address pool, then runs the
# quick-start block of README.md's "The two commands" itself (taken from the README, so the
# README cannot drift from what works), checks each step, and tears everything down: the
# sandboxes, that adaptd, its network, the scratch directories.
# Needs root, the Release build (setup.sh rebuilds build/ incrementally) and the images:
# ADAPT_QUICKSTART_IMAGES_DIR (default build/images, test.sh's; setup.sh builds what is
# missing). The last line is "quickstart: N passed, N failed"; the exit status is 0 only when
# nothing failed.
set -uo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo" || exit 1

images_dir=${ADAPT_QUICKSTART_IMAGES_DIR:-$repo/build/images}
scratch=$(mktemp -d /tmp/adapt-quickstart.XXXXXX)
state_dir=$scratch/state
prefix=$scratch/prefix
network_name=qs$$
passed=0
failed=0

pass() { passed=$((passed + 1)); echo "quickstart: ok: $*"; }
fail() { failed=$((failed + 1)); echo "quickstart: FAILED: $*"; }
# check DESCRIPTION CMD...: one counted check.
check() {
  local what=$1
  shift
  if "$@"; then pass "$what"; else fail "$what"; fi
}

port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
url=http://127.0.0.1:$port
admin_key() { cat "$state_dir/admin.key" 2>/dev/null; }
api() {  # api METHOD PATH: adaptd's answer body, as the admin
  curl -sS --max-time 30 -X "$1" -H "Authorization: Bearer $(admin_key)" "$url$2"
}

adaptd_pid() { cat "$state_dir/adaptd.pid" 2>/dev/null; }

# Whatever happens above, nothing of this run stays on the machine.
teardown() {
  local pid ids id
  pid=$(adaptd_pid)
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
    ids=$(api GET "/v1/sandboxes?limit=200" | python3 -c \
      'import json, sys; print(" ".join(s["id"] for s in json.load(sys.stdin).get("items", [])))' 2>/dev/null)
    for id in $ids; do api DELETE "/v1/sandboxes/$id" >/dev/null 2>&1; done
    for id in $ids; do
      for _ in $(seq 1 120); do
        api GET "/v1/sandboxes/$id" 2>/dev/null | grep -q '"status":"deleted"' && break
        sleep 0.5
      done
    done
    kill -TERM "$pid"
    for _ in $(seq 1 120); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
    if kill -0 "$pid" 2>/dev/null; then
      fail "adaptd (pid $pid) stops within 60 s of SIGTERM"
      kill -KILL "$pid"
    else
      pass "adaptd stopped on SIGTERM"
    fi
  fi
  # Belt and braces after a failure: anything still running from the scratch state directory
  # (runsc, shims) was started by this run.
  local root=$state_dir/runsc cid p
  if [ -d "$root" ]; then
    for cid in $(runsc --root "$root" list -quiet 2>/dev/null); do
      fail "sandbox container $cid left running after its delete"
      runsc --root "$root" kill "$cid" KILL >/dev/null 2>&1
      runsc --root "$root" delete -force "$cid" >/dev/null 2>&1
    done
  fi
  for p in /proc/[0-9]*; do
    [ "${p#/proc/}" != $$ ] || continue
    if tr '\0' ' ' <"$p/cmdline" 2>/dev/null | grep -qF "$state_dir"; then
      kill -KILL "${p#/proc/}" 2>/dev/null
    fi
  done
  awk -v d="$scratch/" 'index($2, d) == 1 { print $2 }' /proc/mounts | sort -r |
    while read -r m; do umount -l "$m"; done
  # adaptd keeps its nftables table and namespaces across restarts on purpose; this one's go.
  ip netns list 2>/dev/null | awk '{print $1}' | grep "^$network_name-" | xargs -r -n1 ip netns del
  nft delete table inet "$network_name" 2>/dev/null
  rm -rf --one-file-system "$scratch"
  echo "quickstart: $passed passed, $failed failed"
  [ "$failed" -eq 0 ] || exit 1
}
trap teardown EXIT
trap 'exit 130' INT TERM

echo "quickstart: scripts/setup.sh into $scratch, adaptd on $url (network $network_name)"
setup_env=(
  ADAPT_PREFIX="$prefix" ADAPT_STATE_DIR="$state_dir" ADAPT_IMAGES_DIR="$images_dir"
  ADAPT_LISTEN="127.0.0.1:$port" ADAPT_INGRESS_HTTP=127.0.0.1:0 ADAPT_INGRESS_HTTPS=127.0.0.1:0
  ADAPT_STORAGE_LISTEN=127.0.0.1:0 ADAPT_DATABASE_LISTEN=127.0.0.1:0 ADAPT_NETWORK_NAME="$network_name"
  ADAPT_NETWORK_POOL=10.250.0.0/20 ADAPT_DNS=203.0.113.53
  ADAPT_SERVICE=background ADAPT_LOG="$scratch/adaptd.log"
)
if env "${setup_env[@]}" scripts/setup.sh; then
  pass "scripts/setup.sh (Release build, install, images, adaptd started)"
else
  fail "scripts/setup.sh exited non-zero"
  exit 1
fi
check "adaptd and adapt installed under the prefix, helpers in libexec/adapt" \
  test -x "$prefix/bin/adaptd" -a -x "$prefix/bin/adapt" -a -x "$prefix/libexec/adapt/adapt-shim" \
  -a -x "$prefix/libexec/adapt/adapt-pause" -a -x "$prefix/libexec/adapt/adapt-agent"
check "the installed adaptd answers $url/healthz" curl -fsS --max-time 5 "$url/healthz" -o /dev/null
check "the running adaptd is the installed one" \
  test "$(readlink "/proc/$(adaptd_pid)/exe")" = "$prefix/bin/adaptd"

# The fenced sh block of "## The two commands" that creates a sandbox: the quick start.
block=$(awk '
  /^## / { section = ($0 == "## The two commands") }
  section && /^```sh$/ { inside = 1; text = ""; next }
  section && inside && /^```$/ { inside = 0; if (text ~ /adapt sandbox create/) { printf "%s", text; exit } next }
  inside { text = text $0 "\n" }
' README.md)
# Logical lines: a line ending in a backslash continues on the next.
steps=()
current=
while IFS= read -r line; do
  if [[ $line == *\\ ]]; then
    current+="${line%\\} "
    continue
  fi
  current+=$line
  [[ $current =~ ^[[:space:]]*(#|$) ]] || steps+=("$current")
  current=
done <<<"$block"

verbs_present=1
for verb in create list get exec delete; do
  printf '%s\n' "${steps[@]}" | grep -qE "adapt sandbox $verb( |$)" || {
    echo "quickstart: README's quick start has no 'adapt sandbox $verb' line"
    verbs_present=0
  }
done
check "README's quick start (${#steps[@]} lines) creates, lists, gets, execs in and deletes a sandbox" \
  test "$verbs_present" = 1
# The README speaks of the default install; this run's adaptd is elsewhere.
readme_url=http://127.0.0.1:8080
readme_state=/var/lib/adapt
check "the quick start names $readme_url and $readme_state/admin.key" \
  grep -qF -e "$readme_url" <<<"$block"
grep -qF "$readme_state/admin.key" <<<"$block" || fail "the quick start reads $readme_state/admin.key"

# One shell runs the steps in order (SANDBOX_ID carries over), under set -e like a careful
# user's script; a marker line before each step splits the output per step.
script=$scratch/quickstart.sh
{
  echo 'set -euo pipefail'
  for i in "${!steps[@]}"; do
    step=${steps[$i]//"$readme_url"/"$url"}
    step=${step//"$readme_state/"/"$state_dir/"}
    echo "echo '@@step $i'"
    echo "$step"
  done
  echo 'echo "@@SANDBOX_ID=${SANDBOX_ID:-}"'
  echo "echo '@@done'"
} >"$script"
out=$scratch/quickstart.out
echo "quickstart: running README's quick start:"
printf '  %s\n' "${steps[@]}"
(
  cd "$scratch" || exit 1
  env -i PATH="$prefix/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" \
    HOME="$scratch" bash "$script"
) >"$out" 2>&1
rc=$?
sed 's/^/  | /' "$out"
check "the quick start runs to its end (exit $rc)" grep -qx '@@done' "$out"

# step_output VERB: what the step running `adapt sandbox VERB` printed.
step_output() {
  local i
  for i in "${!steps[@]}"; do
    if grep -qE "adapt sandbox $1( |$)" <<<"${steps[$i]}"; then
      awk -v start="@@step $i" '$0 == start { on = 1; next } /^@@/ { on = 0 } on' "$out"
      return
    fi
  done
}
sandbox_id=$(sed -n 's/^@@SANDBOX_ID=//p' "$out")
check "create gives the new sandbox's id in SANDBOX_ID ('$sandbox_id')" \
  grep -qE '^sbx_[A-Za-z0-9]+$' <<<"$sandbox_id"
shows_id() { [ -n "$sandbox_id" ] && grep -qF "$sandbox_id" <<<"$1"; }
check "list shows it" shows_id "$(step_output list)"
# get runs right after create: running proves that create waited for the sandbox to boot.
check "get shows it running" grep -qE '^status: +running$' <<<"$(step_output get)"
# The exec line's comment "# prints: TEXT" says what it prints.
exec_output=$(step_output exec)
expected=$(printf '%s\n' "${steps[@]}" | sed -n 's/.*adapt sandbox exec .*# prints: //p')
printed() { [ -n "$exec_output" ] && grep -qF -- "$expected" <<<"$exec_output"; }
check "exec runs in it and prints '$expected'" printed
check "delete deletes it" grep -qE "^(deleted|deleting) $sandbox_id" <<<"$(step_output delete)"
deleted=0
for _ in $(seq 1 120); do
  api GET "/v1/sandboxes/$sandbox_id" | grep -q '"status":"deleted"' && { deleted=1; break; }
  sleep 0.5
done
check "the sandbox reaches deleted" test "$deleted" = 1

[ "$failed" -eq 0 ]
