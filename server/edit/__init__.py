"""Editing: `readkeeper/edit` and `readkeeper/write` on text files (`edits`) and on
notebook cells (`notebook`), checked against what the session read."""
