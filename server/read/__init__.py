"""Reading: token counting (`tokens`), line numbering, diffs and delta re-reads, and the
readers, one per kind of file (`readers`)."""
