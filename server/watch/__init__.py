"""Watching the workspace: the watcher (`watcher.Watcher`, the way in) with its backends
(inotify, Watchman, polling; watchdog's observer off Linux), and the change notices it
feeds (`changes`)."""
