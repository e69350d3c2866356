"""Finding things: `grep` (grep.py, ripgrep run by rg.py, its shown lines recorded as seen
by seen.py), `glob` and `list` (listing.py); where.py checks the path each looks in."""
