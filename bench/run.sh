#!/usr/bin/env bash
# Runs every benchmark with bounded sizes (under 15 minutes on a 2-core machine), then writes
# bench/results/latest.json and prints one table: each figure beside its peer's, with the ratio.
# Needs root, a built tree (scripts/build.sh) and the default image (scripts/build-image.sh).
# A benchmark that fails is reported and the others still run; the exit status says so.
set -uo pipefail
cd "$(dirname "$0")/.."

py=/usr/bin/python3
# The peers only the benchmarks need (CI does not install them).
missing=()
command -v wrk >/dev/null || missing+=(wrk)
command -v podman >/dev/null || missing+=(podman)
command -v umoci >/dev/null || missing+=(umoci)
command -v skopeo >/dev/null || missing+=(skopeo)
if [ "${#missing[@]}" -gt 0 ]; then
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}" >&2 || exit 1
fi
started=$(date +%s)
failed=()
took=()
# Runs one benchmark and notes how long it took, so that the 15-minute bound can be kept.
run() {
  local name=$1 began
  shift
  echo "==> $name: $*" >&2
  began=$(date +%s)
  "$@" || failed+=("$name")
  took+=("$name $(($(date +%s) - began)) s")
}

run create_latency "$py" bench/create_latency/create_latency.py --n 10
run limit_check "$py" bench/limit_check/limit_check.py --n 50
run scheduler "$py" bench/scheduler/scheduler_bench.py --minutes 1 --idle-seconds 10
run exec_latency "$py" bench/exec_latency/exec_latency.py --n 50 --mib 128
run file_transfer "$py" bench/file_transfer/file_transfer.py --mib 128 --runs 2
run egress "$py" bench/egress/egress.py --n 100
run api "$py" bench/api/api_bench.py --seconds 10
run density "$py" bench/density/density.py --max 20
run storage "$py" bench/storage/storage_bench.py --mib 256 --runs 3
run checkpoint "$py" bench/checkpoint/checkpoint_bench.py --sizes 128,1024 --runs 2
run app_wrk "$py" bench/app_wrk/app_wrk.py --seconds 10
run database "$py" bench/database/pgbench_bench.py --seconds 10
[ -f bench/image_pull/image_pull.py ] && run image_pull "$py" bench/image_pull/image_pull.py

"$py" bench/summary.py --since "$started"
echo "took $(( $(date +%s) - started )) s: $(IFS=,; echo "${took[*]}" | sed 's/,/, /g')" >&2
if [ "${#failed[@]}" -gt 0 ]; then
  echo "failed: ${failed[*]}" >&2
  exit 1
fi
