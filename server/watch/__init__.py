"""Watching the workspace: the watcher (`watcher.Watcher`, the way in) with its backends
(watchdog's observer, Watchman, polling), and the change notices it feeds (`changes`)."""
