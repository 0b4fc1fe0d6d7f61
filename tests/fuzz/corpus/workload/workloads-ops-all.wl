# Every op of the workload language once, for tests/guest/t0300-ops.sh.
# The test looks results up by each op's canonical text and checks the
# tree the guest captures afterwards; keep the two in step.
[setup]
mkdir A
write A/foo "hello"
sync
[run]
# xfstests generic/342: the second write must make a NEW A/foo
rename A/foo A/bar
write A/foo "world"
fsync A/foo
mkdir d 0700
mkdir open 0777
fsync d
mkdir gone
rmdir gone
creat c 0600
creat wide 0666
write w 8K
write w 8K 100
write t 3 "text"
append ap 4K
append ap "end"
dwrite dw 4K 8K
mmapwrite mm 10 "mapped"
mmapwrite mp 4K 4K
write tr 16K
truncate tr 5000
creat fa
falloc fa 0 0 64K
creat fk
falloc fk keep_size 0 64K
write ph 12K
falloc ph punch_hole 4K 4K
write zr 12K
falloc zr zero_range 4K 4K
write zk 8K
falloc zk zero_range_keep_size 4K 8K
link w wl
symlink "some/target" sl
creat ra
rename ra rb
creat nx
creat ny
rename nx ny noreplace
write ex1 "one"
write ex2 "two"
rename ex1 ex2 exchange
rename rb rc barrier
creat un
unlink un
setxattr c user.k "v;1"
setxattr c user.gone x
removexattr c user.gone
chmod w 0640
fdatasync w
sync_file_range w 0 0 write,wait_after
fiemap_sync w
fbarrier w
fdatabarrier w
close w
close nosuch
rmdir A
write after "still running"
sync
syncfs
sleep 10
mark end
