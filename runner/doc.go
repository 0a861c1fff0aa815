// Package runner runs one `claude -p` session as a streaming subprocess and
// turns its stdout into typed events. It knows nothing of plans or git.
//
// Start launches claude with --input-format and --output-format stream-json
// in its own process group, writes the prompt to stdin as a user message and
// keeps stdin open, so the session can be interrupted and sent more messages.
// Session.Events delivers one Event per stdout line; RequestStop (or
// cancelling Start's context) ends the session at a safe point; Wait returns
// the Outcome: how it ended, the last result, the stderr tail.
//
// Main types:
//   - Spec: the binary, model, environment, timeouts and log path of a session.
//   - Session: the running process; Events, RequestStop, Send, Kill, Wait.
//   - Event: one parsed stream-json line. Its Kind says which pointer field is
//     set: Init, Assistant (one content block of an API response, with its
//     Usage), ToolResults, User, System (status, compaction, api_retry,
//     task_*), Control (answers to our control requests) or Result.
//   - Outcome: how the session ended (completed, stopped, API error, max
//     turns, crashed, timed out, cancelled, killed), with the last result,
//     the exit code and the stop timeline.
//   - Parse and LineReader: the stdout decoding, usable on a saved log.
//
// Traps it handles, most of them learnt from the real CLI:
//   - A stop waits for the tools in flight (up to Spec.StopGrace) before the
//     interrupt control request, then for the turn's result, then closes
//     stdin; only then SIGINT, SIGTERM, SIGKILL, each after Spec.KillGrace.
//     A stop right after a response's usage waits briefly for the tool_use
//     lines that follow it, so it does not cancel the tools just asked for.
//   - Signals go to the process group, not just claude, and again after
//     claude exits, so no child survives it. Bash tools that leave the group
//     (setsid, `cmd &`) are found after exit by MarkEnv in their environment.
//   - stdout is always drained to EOF, even past parse errors, a failing
//     session log or an over-long line: a full pipe would block the child.
//     Every raw line is teed to the session log before it is parsed.
//   - Lines reach 64 MB and more (an Edit result carries the whole original
//     file). LineReader reads them in one buffer the kernel backs only as it
//     fills, and skips (tees, counts, logs) lines over MaxLineBytes. Parse
//     keeps at most MaxTextBytes of any text and MaxInputBytes of any tool
//     input, with their full sizes beside them.
//   - Parse decodes with encoding/json: a line that is not one JSON object, or
//     that holds a number too big for its field, is an error the caller logs
//     and skips; values of an unexpected type read as zero, unknown types and
//     fields are ignored. Decoded text is always valid UTF-8.
//   - Usage on a result line is the sum over the run, not the context size;
//     one API response is split over several assistant lines that share a
//     message id; subagent lines carry parent_tool_use_id (see Assistant).
//   - CLAUDECODE is removed from the environment (claude refuses to run
//     nested otherwise). Spec.PermissionMode "bypassPermissions" becomes
//     --dangerously-skip-permissions, which the CLI refuses as root unless
//     the caller sets IS_SANDBOX=1.
package runner
