"""Reading: one pipeline for every read (`pipeline`), the stub rule and the record a read
leaves (`stub_rule`), what a read needs from the rest (`services`), token counting
(`tokens`), line numbering, diffs and delta re-reads, and the readers, one per kind of
file (`readers`)."""
