"""Editing: `readkeeper/edit` and `readkeeper/write` on text files (`edits`, the way in)
and on notebook cells (`notebook`), checked against what the session read; they see the
core only as `services.EditServices`."""
