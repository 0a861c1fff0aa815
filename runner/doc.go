// Package runner runs one `claude -p` session as a streaming subprocess and
// turns its stdout into typed events. It knows nothing of plans or git.
//
// Start launches claude with --input-format and --output-format stream-json
// in its own process group, registers hook callbacks (PreToolUse,
// PostToolUse, Stop, PreCompact) with an initialize control request, writes
// the prompt to stdin as a user message and keeps stdin open, so the
// session can be stopped, answered at its hooks and sent more messages.
// Session.Events delivers one Event per stdout line, hook calls included (in
// stream order, answered with HookCall.Answer); RequestStop (or cancelling
// Start's context) ends the session at a safe point; Wait returns the
// Outcome: how it ended, the last result, the stderr tail.
//
// Main types:
//   - Spec: the binary, model, environment, timeouts and log path of a session.
//   - Session: the running process; Events, RequestStop, Send, Kill, Wait.
//   - Event: one parsed stream-json line. Its Kind says which pointer field is
//     set: Init, Assistant (one content block of an API response, with its
//     Usage), ToolResults, User, System (status, compaction, api_retry,
//     task_*), Control (answers to our control requests), Hook (the CLI
//     asking at a hook; it waits for the answer) or Result.
//   - Outcome: how the session ended (completed, stopped, API error, max
//     turns, crashed, timed out, cancelled, killed), with the last result,
//     the exit code and the stop timeline.
//   - Parse and LineReader: the stdout decoding, usable on a saved log.
//
// Traps it handles, most of them learnt from the real CLI:
//   - A stop answers the next PostToolUse with {"continue":false}: the CLI
//     runs every tool of the response (it starts tools while the response
//     still streams, so an interrupt can land between two of them), sends
//     no further request and ends with terminal_reason hook_stopped. A
//     text-only turn ends with its result. Only without the callbacks (init
//     refused or unanswered), with no PostToolUse within Spec.StopGrace (a
//     long text answer, a hung tool) and on Ctrl-C does the old path run:
//     wait for tools in flight (and 2 s for a response's tool_use lines,
//     which follow its usage), interrupt, wait for the result, close stdin;
//     then SIGINT, SIGTERM, SIGKILL, each after Spec.KillGrace.
//   - Every hook call is answered: by the consumer, or with the runner's
//     default after Spec.HookTimeout ({}; a block for PreCompact unless
//     Spec.AllowCompact; continue:false once a stop is asked), logged as
//     hook_slow. Any other control request from the CLI is refused, never
//     left waiting.
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
