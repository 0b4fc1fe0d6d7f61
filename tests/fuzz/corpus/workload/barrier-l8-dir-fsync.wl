# L8: L1, then fsync of the directory: the fsync makes the rename durable,
# and with it the data the barrier covered (inherited durability).
# Must hold: in every state after the fsync returned, d/f exists and holds the 2 MiB.
[setup]
mkdir d
sync
[run]
write d/t 2M
fdatabarrier d/t
rename d/t d/f
fsync d
