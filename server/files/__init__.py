"""Files on disk: opening without following planted links (`beneath`, `fileio`), the
workspace's paths and permissions (`paths`), encodings, atomic writes that keep a
file's bytes and mode (`atomic`), ignore rules, per-file locks, and the private folders
for files readkeeper makes. Depends on nothing else in readkeeper but `errors`."""
