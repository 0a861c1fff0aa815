package tests

// pause is a shell command that takes secs seconds and is not `sleep`:
// npm's 2.1.332 refuses a foreground sleep as a Bash call at once
// ("Blocked: sleep 30 followed by: …", "Blocked: standalone sleep 120"), so a
// test whose slow tool is a sleep has no slow tool on the latest CLI. perl
// is on every machine the suite runs on; its process is `perl -e sleep N`.
func pause(secs string) string { return "perl -e 'sleep " + secs + "'" }
