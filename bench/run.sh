#!/usr/bin/env bash
# Runs every benchmark; arguments are passed to each (e.g. bench/run.sh --n 5). Needs root.
set -euo pipefail
cd "$(dirname "$0")/.."

python3 bench/create_latency/create_latency.py "$@"
python3 bench/exec_latency/exec_latency.py "$@"
python3 bench/file_transfer/file_transfer.py "$@"
python3 bench/egress/egress.py "$@"
python3 bench/image_pull/image_pull.py "$@"
