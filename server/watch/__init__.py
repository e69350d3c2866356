"""Watching the workspace: the watcher and its backends (watchdog's observer, Watchman,
polling) and the change notices it feeds (`changes`)."""
