#!/usr/bin/env bash
# Whole-process times of the `pinloom` command (release build), with farm-bench: each command is
# paired, run by run, with the same command with table snapshots turned off
# (PINLOOM_TOKENIZER_CACHE empty), where every process builds the vocabulary tables it counts with
# from the token list, as every process did before snapshots; and `pinloom --version` is timed as
# the floor of starting the program at all. Figures go in README.md (this folder).
#
#   tests/perf/command-startup.sh [RUNS]      (15 runs by default)
#
# PINLOOM_BIN chooses another binary (an older build, to compare).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
runs=${1:-15}
bin=${PINLOOM_BIN:-${CARGO_TARGET_DIR:-$PWD/target}/release/pinloom}
if [ -z "${PINLOOM_BIN:-}" ]; then cargo build --release --locked -p pinloom-cli; fi
command -v farm-bench >/dev/null || { echo "farm-bench is not installed on this machine" >&2; exit 2; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
db=$work/pinloom.sqlite3
export PINLOOM_TOKENIZER_CACHE=$work/tables

# A small conversation of eight messages, as a person might import one.
{
  printf '{"format":"open-loom","version":"2.0","trees":[{"id":"t","title":"Rivers","rootNodeIds":["m1"],"nodes":{'
  for i in 1 2 3 4 5 6 7 8; do
    role=human; [ $((i % 2)) -eq 0 ] && role=model
    [ "$i" -gt 1 ] && printf ','
    printf '"m%d":{"id":"m%d","content":[{"type":"text","text":"Message %d: why do rivers meander across their floodplains instead of running straight?"}],"author":{"role":"%s"}}' "$i" "$i" "$i" "$role"
  done
  printf '},"edges":['
  for i in 2 3 4 5 6 7 8; do
    [ "$i" -gt 2 ] && printf ','
    printf '{"type":"continuation","sources":[{"nodeId":"m%d"}],"targetNodeId":"m%d"}' $((i - 1)) "$i"
  done
  printf ']}]}\n'
} > "$work/small.json"

"$bin" --db "$db" import "$work/small.json" >/dev/null
newest=$("$bin" --db "$db" tree 1 | grep -c '#')
# The import stored each message's counts; the plan measured here counts every message itself, as
# it does for a tree whose counts are not stored (one written before counts were, or planned under
# a tokenizer they were not stored for). A plan only reads, so they stay unstored run after run.
python3 -c 'import sqlite3, sys; db = sqlite3.connect(sys.argv[1]); db.execute("DELETE FROM node_tokens"); db.commit()' "$db"
profile="gpt-4o (OpenAI)"   # counts with o200k

without="env PINLOOM_TOKENIZER_CACHE="
bench() {
  local name=$1
  shift
  echo "## $name"
  farm-bench -n "$runs" --timeout 1200 --vs "$without $(printf '%q ' "$@")" -- "$@"
  echo
}

echo "## the program's floor: pinloom --version"
farm-bench -n "$runs" -- "$bin" --version
echo
bench "pinloom tree (the list of trees)" "$bin" --db "$db" tree
bench "pinloom import (8 messages)" "$bin" --db "$db" import "$work/small.json"
bench "pinloom context under o200k (a plan)" "$bin" --db "$db" context --node "$newest" --profile "$profile" --format report
