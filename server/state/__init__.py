"""What readkeeper remembers between calls: each session's read-state (`readstate`),
the content held for diffs (`snapshots`) and the counters `readkeeper/stats` reports."""
