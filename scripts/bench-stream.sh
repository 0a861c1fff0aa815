#!/usr/bin/env bash
# bench-stream.sh — stream-json reading: the runner's line reader + Parse
# (encoding/json) on a transcript, peak RSS on one huge line, and, for scale,
# Python's per-line json.loads on the same transcript.
#
# Builds a transcript of BENCH_MB (default 220) MB from the recorded fixtures
# in runner/testdata/fixtures, about BENCH_BIG_SHARE (default 50) percent of it
# in multi-MB lines (Write inputs, Read results, Edit results carrying the
# original file), and a file holding one Write line of BENCH_LINE_MB (default
# 100) MB. The generator is deterministic: the defaults give the same 221 MB
# transcript every time. MB = 10^6 bytes.
#
# BENCH_BASE=<git revision> also builds benchparse at that revision and runs it
# on the same files, e.g. BENCH_BASE=3d093b1~1 for the hand-written scanner
# that encoding/json replaced.
#
# Last line:
#   stream-json parse: X MB/s rss=M MB; N MB line: rss=R MB (Q x the line)
# Goals: X >= 20 MB/s (a session writes KB/s), M <= 50 MB + the largest
# transcript line, R <= 1.25 x the line + 20 MB.
set -euo pipefail

cd "$(dirname "$0")/.."
BENCH_MB=${BENCH_MB:-220}
BENCH_BIG_SHARE=${BENCH_BIG_SHARE:-50}
BENCH_LINE_MB=${BENCH_LINE_MB:-100}
BENCH_BASE=${BENCH_BASE:-}

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

huge=$tmp/huge-line.jsonl
python3 - "$huge" "$BENCH_LINE_MB" <<'PY'
import json, sys

out, mb = sys.argv[1], int(sys.argv[2])
line = '\tfmt.Printf("%d: %s\\n", i, name) // é\n'
unit = len(json.dumps(line, ensure_ascii=False).encode()) - 2  # escaped, as in the line
body = line * (mb * 1_000_000 // unit)
big = json.dumps({"type": "assistant", "message": {"id": "msg_huge", "type": "message", "role": "assistant",
    "model": "claude-sonnet-4-5", "content": [{"type": "tool_use", "id": "toolu_huge", "name": "Write",
    "input": {"file_path": "/home/dev/project/huge.go", "content": body}}],
    "usage": {"input_tokens": 1}}, "parent_tool_use_id": None}, ensure_ascii=False, separators=(",", ":"))
with open(out, "w") as f:
    f.write(big + "\n" + '{"type":"result","subtype":"success","result":"ok"}\n')
PY

cat "$transcript" "$huge" >/dev/null # warm the page cache for every reader

# bench BINARY FILE: benchparse's output line with rss_kb=<peak RSS> appended.
bench() {
	local out rss
	if [[ -x /usr/bin/time ]]; then
		out=$(/usr/bin/time -v "$1" "$2" 2>"$tmp/time.txt")
		rss=$(awk -F: '/Maximum resident set size/ {gsub(/ /, "", $2); print $2}' "$tmp/time.txt")
	else
		out=$("$1" "$2")
		rss=$(sed -n 's/.*vmhwm_kb=\([0-9]*\).*/\1/p' <<<"$out")
	fi
	echo "$out rss_kb=$rss"
}
field() { sed -n "s/.*[ ^]$1=\([0-9.]*\).*/\1/p" <<<" $2"; }

go build -o "$tmp/benchparse" ./runner/internal/benchparse
go_out=$(bench "$tmp/benchparse" "$transcript")
huge_out=$(bench "$tmp/benchparse" "$huge")
echo "go transcript: $go_out"
echo "go huge line:  $huge_out"

if [[ -n $BENCH_BASE ]]; then
	mkdir "$tmp/base"
	git archive "$BENCH_BASE" | tar -x -C "$tmp/base"
	(cd "$tmp/base" && go build -o "$tmp/benchparse-base" ./runner/internal/benchparse)
	base_out=$(bench "$tmp/benchparse-base" "$transcript")
	base_huge=$(bench "$tmp/benchparse-base" "$huge")
	echo "base ($BENCH_BASE) transcript: $base_out"
	echo "base ($BENCH_BASE) huge line:  $base_huge"
	awk -v mbs="$(field go_mb_s "$base_out")" -v rss="$(field rss_kb "$base_out")" \
		-v hrss="$(field rss_kb "$base_huge")" -v line="$(field largest "$base_huge")" 'BEGIN {
		printf "base: %.1f MB/s rss=%.0f MB; %.0f MB line: rss=%.0f MB (%.2f x the line)\n",
			mbs, rss / 1024, line / 1e6, hrss / 1024, hrss * 1024 / line
	}'
fi

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
echo "python json.loads: $py_out MB/s"

awk -v mbs="$(field go_mb_s "$go_out")" -v rss="$(field rss_kb "$go_out")" -v big="$(field largest "$go_out")" \
	-v hrss="$(field rss_kb "$huge_out")" -v line="$(field largest "$huge_out")" 'BEGIN {
	ok = mbs >= 20 && rss / 1024 <= 50 + big / 1048576 && hrss * 1024 <= 1.25 * line + 20 * 1048576
	printf "goals: >= 20 MB/s, rss <= %.0f MB (50 MB + largest line), line rss <= %.0f MB: %s\n",
		50 + big / 1048576, (1.25 * line + 20 * 1048576) / 1048576, ok ? "met" : "MISSED"
	printf "stream-json parse: %.1f MB/s rss=%.0f MB; %.0f MB line: rss=%.0f MB (%.2f x the line)\n",
		mbs, rss / 1024, line / 1e6, hrss / 1024, hrss * 1024 / line
}'
