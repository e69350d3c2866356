"""What readkeeper remembers between calls: each session's read-state (`readstate`),
the content held for diffs (`snapshots`), the counters `readkeeper/stats` reports
(`stats`) and the editor's open documents its front end reports (`buffers`)."""
