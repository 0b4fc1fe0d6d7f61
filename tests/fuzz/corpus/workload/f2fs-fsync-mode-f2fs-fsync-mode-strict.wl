# Lesson f2fs-fsync-mode, strict: the same ops, to run with
# --mount-opts f2fs:fsync_mode=strict.
[setup]
mkdir logs
write logs/app.log "old entries"
[run]
rename logs/app.log logs/app.log.1
write logs/app.log "new entries"
fsync logs/app.log
# Observed on 6.12, f2fs with fsync_mode=strict: both files survive.
[expect f2fs]
logs lists app.log app.log.1
logs/app.log text "new entries"
logs/app.log.1 text "old entries"
