"""readkeeper: the file layer for editor-hosted AI coding agents."""

__version__ = "0.1.0"

import time as _time

# When this server started: temporary files of ours older than this were left by a
# process that died (atomic.py removes them).
STARTED_NS = _time.time_ns()
