#!/usr/bin/env bash
# bench-stream.sh — stream-json parsing throughput: the runner's line reader +
# Parse against Python's per-line json.loads, on the same transcript.
#
# Builds a transcript of BENCH_MB (default 220) MB from the recorded fixtures
# in runner/testdata/fixtures, about BENCH_BIG_SHARE (default 50) percent of it
# in multi-MB lines (Write inputs, Read results, Edit results carrying the
# original file), then times both parsers once. MB = 10^6 bytes.
# Last line:
#   stream-json parse: X MB/s vs python json.loads Y MB/s ratio=R rss=M MB
# Goals: ratio >= 2, rss <= 50 MB + the largest line.
set -euo pipefail

cd "$(dirname "$0")/.."
BENCH_MB=${BENCH_MB:-220}
BENCH_BIG_SHARE=${BENCH_BIG_SHARE:-50}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
transcript=$tmp/transcript.jsonl

python3 - "$transcript" "$BENCH_MB" "$BENCH_BIG_SHARE" <<'PY'
import glob, json, sys

out, total_mb, big_share = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
target = total_mb * 1_000_000
fixtures = sorted(f for f in glob.glob("runner/testdata/fixtures/*.jsonl") if not f.endswith(".stdin.jsonl"))
rounds = [open(f, "rb").read().strip().split(b"\n") for f in fixtures]

def dumps(obj):
    # The CLI writes JSON.stringify output: compact, UTF-8 kept as is.
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode()

# Code-like text: quotes, backslashes, tabs, some non-ASCII, many newlines.
block = "".join(
    f'\tif err := s.handle(ctx, "item-{i}", `raw\\path`); err != nil {{ // café ✓ {i}\n'
    f'\t\treturn fmt.Errorf("handle %q: %w", name, err)\n\t}}\n'
    for i in range(200))

def text(size):
    return (block * (size // len(block) + 1))[:size]

sizes = [2, 3, 4, 6, 8]  # MB
def big_line(k):
    size = sizes[k % len(sizes)] * 1_000_000
    body = text(size)
    path = f"/home/dev/project/pkg/file{k}.go"
    kind = k % 3
    if kind == 0:  # Write: the whole file is in the tool input
        return dumps({"type": "assistant", "message": {"id": f"msg_big_{k}", "type": "message", "role": "assistant",
            "model": "claude-sonnet-4-5", "content": [{"type": "tool_use", "id": f"toolu_big_{k}", "name": "Write",
            "input": {"file_path": path, "content": body}}], "stop_reason": None, "stop_sequence": None,
            "usage": {"input_tokens": 2000, "output_tokens": 1, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 90000}},
            "parent_tool_use_id": None, "session_id": "bench"})
    if kind == 1:  # Read: numbered content in the result, the file again in tool_use_result
        half = body[: size // 2]
        return dumps({"type": "user", "message": {"role": "user", "content": [{"tool_use_id": f"toolu_big_{k}",
            "type": "tool_result", "content": half}]}, "parent_tool_use_id": None, "session_id": "bench",
            "tool_use_result": {"type": "text", "file": {"filePath": path, "content": half, "numLines": half.count("\n")}}})
    return dumps({"type": "user", "message": {"role": "user", "content": [{"tool_use_id": f"toolu_big_{k}",  # Edit
        "type": "tool_result", "content": f"The file {path} has been updated."}]}, "parent_tool_use_id": None,
        "session_id": "bench", "tool_use_result": {"filePath": path, "oldString": "a", "newString": "b",
        "originalFile": body, "structuredPatch": [{"oldStart": 1, "lines": ["-a", "+b"]}], "userModified": False}})

small_target = target * (100 - big_share) // 100
written = small = big = k = r = 0
with open(out, "wb") as f:
    while written < target:
        if big * (100 - big_share) <= small * big_share or small >= small_target:
            line = big_line(k); k += 1; big += len(line) + 1
        else:
            lines = rounds[r % len(rounds)]; r += 1
            line = b"\n".join(lines); small += len(line) + 1
        f.write(line + b"\n")
        written += len(line) + 1
print(f"transcript: {written/1e6:.1f} MB, {k} big lines ({big/1e6:.1f} MB), {r} fixture streams ({small/1e6:.1f} MB)")
PY

cat "$transcript" >/dev/null # warm the page cache for both readers

go build -o "$tmp/benchparse" ./runner/internal/benchparse
if [[ -x /usr/bin/time ]]; then
	go_out=$(/usr/bin/time -v "$tmp/benchparse" "$transcript" 2>"$tmp/time.txt")
	rss_kb=$(awk -F: '/Maximum resident set size/ {gsub(/ /, "", $2); print $2}' "$tmp/time.txt")
else
	go_out=$("$tmp/benchparse" "$transcript")
	rss_kb=$(sed -n 's/.*vmhwm_kb=\([0-9]*\).*/\1/p' <<<"$go_out")
fi
echo "go: $go_out"

py_out=$(python3 - "$transcript" <<'PY'
import json, sys, time
n = 0
start = time.perf_counter()
with open(sys.argv[1], "rb") as f:
    for line in f:
        json.loads(line)
        n += len(line)
print(f"{n / (time.perf_counter() - start) / 1e6:.1f}")
PY
)

go_mbs=$(sed -n 's/.*go_mb_s=\([0-9.]*\).*/\1/p' <<<"$go_out")
largest=$(sed -n 's/.*largest=\([0-9]*\).*/\1/p' <<<"$go_out")
awk -v go="$go_mbs" -v py="$py_out" -v rss="$rss_kb" -v big="$largest" 'BEGIN {
	printf "goals: ratio >= 2, rss <= %.0f MB (50 MB + largest line %.1f MB)\n", 50 + big / 1048576, big / 1e6
	printf "stream-json parse: %.1f MB/s vs python json.loads %.1f MB/s ratio=%.2f rss=%.0f MB\n", go, py, go / py, rss / 1024
}'
