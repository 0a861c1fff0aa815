// Command benchparse replays a stream-json transcript through the runner's
// line reader and Parse, as the session reader does, and reports throughput
// and peak RSS. scripts/bench-stream.sh drives it.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime/pprof"
	"strings"
	"time"

	"github.com/debussy-dev/debussy/runner"
)

func main() {
	tee := flag.String("tee", "", "also copy every line to this file, like the session log")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile here")
	flag.Parse()
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			fmt.Fprintln(os.Stderr, "benchparse:", err)
			os.Exit(1)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintln(os.Stderr, "benchparse:", err)
			os.Exit(1)
		}
		defer pprof.StopCPUProfile()
	}
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: benchparse [-tee FILE] TRANSCRIPT")
		os.Exit(2)
	}
	if err := run(flag.Arg(0), *tee); err != nil {
		fmt.Fprintln(os.Stderr, "benchparse:", err)
		pprof.StopCPUProfile()
		os.Exit(1)
	}
}

func run(path, teePath string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("open transcript: %w", err)
	}
	defer f.Close()
	var tee io.Writer
	if teePath != "" {
		t, err := os.Create(teePath)
		if err != nil {
			return fmt.Errorf("create tee: %w", err)
		}
		defer t.Close()
		tee = t
	}

	var bytesRead, lines, bad, largest int
	kinds := map[runner.Kind]int{}
	start := time.Now()
	lr := runner.NewLineReader(f, tee).WithLogger(slog.New(slog.NewTextHandler(os.Stderr, nil)))
	for {
		line, err := lr.Next()
		if len(line) > 0 {
			lines++
			bytesRead += len(line) + 1
			largest = max(largest, len(line))
			ev, perr := runner.Parse(line)
			if perr != nil {
				bad++
			} else {
				kinds[ev.Kind]++
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Errorf("read transcript: %w", err)
		}
	}
	elapsed := time.Since(start)
	fmt.Printf("go_mb_s=%.1f bytes=%d lines=%d invalid=%d skipped=%d largest=%d seconds=%.3f vmhwm_kb=%d kinds=%v\n",
		float64(bytesRead)/elapsed.Seconds()/1e6, bytesRead, lines, bad, lr.Skipped(), largest, elapsed.Seconds(), vmHWM(), kinds)
	return nil
}

// vmHWM is the peak resident set size in KiB (Linux), or 0.
func vmHWM() int {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			var kb int
			fmt.Sscanf(strings.TrimSpace(v), "%d", &kb)
			return kb
		}
	}
	return 0
}
