# Lesson f2fs-fsync-mode: log rotation. The durable log is renamed to
# app.log.1, a new app.log is written and fsynced; the directory is not.
# Run on f2fs with its default fsync_mode=posix.
[setup]
mkdir logs
write logs/app.log "old entries"
[run]
rename logs/app.log logs/app.log.1
write logs/app.log "new entries"
fsync logs/app.log
# Observed on 6.12, f2fs with fsync_mode=posix: the rename is lost, and
# the old entries with it.
[expect f2fs]
logs lists app.log
logs/app.log text "new entries"
logs/app.log.1 absent
