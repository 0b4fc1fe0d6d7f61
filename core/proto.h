/*
 * proto.h - the framed, versioned host <-> guest protocol, spoken over the
 * virtio-serial port "crashlab.0". The same code is compiled into the host
 * tool and the static in-guest agent, so the two can never disagree.
 *
 * Frame (little-endian): magic u32 "CLAB" | version u8 | type u8 |
 * flags u16 | seq u32 | len u32 | len bytes of payload. A reader that sees a
 * wrong magic or version stops: the channel is then broken, not resynced.
 */
#ifndef CRASHLAB_CORE_PROTO_H
#define CRASHLAB_CORE_PROTO_H

#include <stddef.h>
#include <stdint.h>

#include "core/fs.h"
#include "core/tree.h"
#include "core/workload.h"

#define PROTO_MAGIC 0x42414c43u /* "CLAB" */
#define PROTO_VERSION 1
#define PROTO_HDR 16
#define PROTO_MAX_PAYLOAD (16u << 20)
#define PROTO_PORT "crashlab.0"

enum proto_msg_type {
	PROTO_MSG_HELLO = 1,    /* agent -> host: "key=value\n" lines (proto, kernel, agent) */
	PROTO_MSG_EXEC = 2,     /* host -> agent: argv as NUL-terminated strings; seq = job */
	PROTO_MSG_OUT = 3,      /* agent -> host: output bytes; flags 1 = stdout, 2 = stderr */
	PROTO_MSG_EXIT = 4,     /* agent -> host: int32 status (exit code, or 128 + signal) */
	PROTO_MSG_ERROR = 5,    /* agent -> host: a message; the request failed (e.g. exec) */
	PROTO_MSG_SHUTDOWN = 6, /* host -> agent: sync and power off */
	PROTO_MSG_KILL = 7,     /* host -> agent: kill the job seq */
	PROTO_MSG_SESSION = 8,  /* host -> agent: start a workload session ("key=value\n":
			       * dir, fbarrier, fdatabarrier, and mount=DEV, fstype,
			       * mopts to mount DEV at dir first; layers=1 then makes
			       * an [overlay] workload's layer directories there and
			       * opens the session in the lower one; overlay=LAYERS
			       * mounts the overlay over LAYERS' layers at dir; the
			       * previous one's files are all closed first), or with
			       * end=1 only close the current one (its overlay
			       * unmounted, and umount=DIR unmount DIR); answered by
			       * RESULT, or ERROR "mounting ..." */
	PROTO_MSG_OP = 9,       /* host -> agent: one canonical op line; seq = op id,
			       * flags = section; answered by RESULT */
	PROTO_MSG_RESULT = 10,  /* agent -> host: "ret=\nerrno=\nino=\nino2=\nms=\n" */
	PROTO_MSG_CHECK = 11,   /* host -> agent: check one crash state ("key=value\n":
			       * fs, spec, mount_opts, fsck, and overlay=1 to capture
			       * an [overlay] workload's merged view); answered by STATE */
	PROTO_MSG_STATE = 12,   /* agent -> host: "key=value\n" lines, a blank line, then
			       * fsck_len bytes of fsck output and tree_len bytes of
			       * tree lines (core/tree.h) */
	PROTO_MSG_LOG = 13,     /* host -> agent: a piece of the write log the checker
			       * uses from now on (a checker guest that lives across
			       * recordings, engine/pool.c): flags PROTO_LOG_FIRST on
			       * the first piece (the old log goes), PROTO_LOG_LAST on
			       * the last, which alone is answered: RESULT once the
			       * checker has opened the new log, or ERROR */
};

/* A LOG's flags, and the size of the pieces a log is cut into. */
#define PROTO_LOG_FIRST 1
#define PROTO_LOG_LAST 2
#define PROTO_LOG_PIECE (4u << 20)

struct proto_msg {
	uint8_t type;
	uint16_t flags;
	uint32_t seq;
	uint32_t len;
	unsigned char *data; /* len bytes (not NUL-terminated); valid until the next call */
};

/* Incremental frame reader over a byte stream. */
struct proto_reader {
	unsigned char *buf;
	size_t len, cap;
	size_t consumed;     /* bytes of buf taken by the last returned message */
	char err[128];       /* why proto_next returned -1 */
};

/* Write one frame completely (retries short writes and EINTR). 0 or -1 + errno. */
int proto_send(int fd, uint8_t type, uint16_t flags, uint32_t seq, const void *data, uint32_t len);
/* Append received bytes. 0 or -1 (out of memory). */
int proto_feed(struct proto_reader *r, const void *data, size_t n);
/* 1: *m holds the next message; 0: need more bytes; -1: broken stream (r->err). */
int proto_next(struct proto_reader *r, struct proto_msg *m);
void proto_reader_free(struct proto_reader *r);

/* Pack argv into a NUL-separated payload (malloc'd) and back (returns count,
 * fills out[] up to max with pointers into data; data must end with NUL). */
unsigned char *proto_pack_argv(char *const *argv, uint32_t *len);
int proto_unpack_argv(unsigned char *data, uint32_t len, char **out, int max);

/* The flags of the LOG piece of len bytes at off in a log of total bytes
 * (an empty log is one piece, first and last). */
uint16_t proto_log_flags(uint64_t off, uint64_t len, uint64_t total);

/* Receiving a LOG: its pieces appended to a file in order. */
struct proto_log_rx {
	int fd;              /* the file being written, or -1 between logs */
	uint64_t bytes;      /* written so far */
	int err;             /* errno of the first failure of this log, or 0 */
	int active;          /* a first piece came, the last not yet */
};
#define PROTO_LOG_RX_INIT { -1, 0, 0, 0 }
/* Take one LOG message into path: a first piece creates (truncates) it, the
 * others append; a piece with no log begun is an EPROTO failure. 1 when m
 * was the last piece (the file is closed and whole unless rx->err says
 * why not), 0 when more pieces are to come. */
int proto_log_take(struct proto_log_rx *rx, const char *path, const struct proto_msg *m);

/* The RESULT payload of one op ("ret=\nerrno=\nino=\nino2=\nms=\n"), both ways:
 * format returns the length (snprintf-like); parse 0, or -1 when ret or errno
 * is missing or a number is not one (ret a 64-bit integer, errno 0..4095,
 * the inode numbers unsigned 64-bit, ms a finite time). */
int proto_result_format(const struct op_result *r, char *buf, size_t n);
int proto_result_parse(const char *text, size_t len, struct op_result *r);

/* What the checker guest reported for one crash state (the STATE payload):
 * the one type from the agent's reply to the database row and the judge. */
struct check_report {
	int mount_ok;
	char *mount_msg;      /* the mount's error output when it failed, or NULL */
	int fsck_status;      /* fsck's exit status, -1 when it did not run */
	int fsck_clean;       /* the status means clean for this fs (core/fs.h) */
	char *fsck_output;
	struct tree_node *nodes; /* the observed tree */
	size_t n_nodes;
	char tree_hash[17];   /* 64-bit FNV-1a of the tree lines, hex: equal trees, equal hash */
	uint64_t bytes;       /* bytes the state's writes applied */
	double ms_replay, ms_mount, ms_capture, ms_fsck, ms_other, ms_host;
};

/* Parse a STATE payload of file system t. 0, or -1 with e saying what is
 * malformed (a number out of range, a length that does not add up, a bad
 * tree line, a path twice): nothing a guest sends is trusted. */
int proto_state_parse(const struct fs_type *t, const char *payload, size_t len, struct check_report *rep,
		      struct errbuf *e);
void check_report_free(struct check_report *rep);
/* A deep copy of src into dst, times and all (free with check_report_free). */
void check_report_copy(struct check_report *dst, const struct check_report *src);

#endif
