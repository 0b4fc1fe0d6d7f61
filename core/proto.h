/*
 * proto.h - the framed, versioned host <-> guest protocol, spoken over the
 * virtio-serial port "crashlab.0". The same code is compiled into the host
 * tool and the static in-guest agent, so the two can never disagree.
 *
 * Frame (little-endian): magic u32 "CLAB" | version u8 | type u8 |
 * flags u16 | seq u32 | len u32 | len bytes of payload. A reader that sees a
 * wrong magic or version stops: the channel is then broken, not resynced.
 */
#ifndef CRASHLAB_PROTO_H
#define CRASHLAB_PROTO_H

#include <stddef.h>
#include <stdint.h>

#define LAB_PROTO_MAGIC 0x42414c43u /* "CLAB" */
#define LAB_PROTO_VERSION 1
#define LAB_PROTO_HDR 16
#define LAB_PROTO_MAX_PAYLOAD (16u << 20)
#define LAB_PROTO_PORT "crashlab.0"

enum lab_msg_type {
	LAB_MSG_HELLO = 1,    /* agent -> host: "key=value\n" lines (proto, kernel, agent) */
	LAB_MSG_EXEC = 2,     /* host -> agent: argv as NUL-terminated strings; seq = job */
	LAB_MSG_OUT = 3,      /* agent -> host: output bytes; flags 1 = stdout, 2 = stderr */
	LAB_MSG_EXIT = 4,     /* agent -> host: int32 status (exit code, or 128 + signal) */
	LAB_MSG_ERROR = 5,    /* agent -> host: a message; the request failed (e.g. exec) */
	LAB_MSG_SHUTDOWN = 6, /* host -> agent: sync and power off */
	LAB_MSG_KILL = 7,     /* host -> agent: kill the job seq */
	LAB_MSG_SESSION = 8,  /* host -> agent: start a workload session ("key=value\n":
			       * dir, fbarrier, fdatabarrier); answered by RESULT */
	LAB_MSG_OP = 9,       /* host -> agent: one canonical op line; seq = op id,
			       * flags = section; answered by RESULT */
	LAB_MSG_RESULT = 10,  /* agent -> host: "ret=\nerrno=\nino=\nino2=\nms=\n" */
	LAB_MSG_CHECK = 11,   /* host -> agent: check one crash state ("key=value\n":
			       * fs, spec, mount_opts, fsck); answered by STATE */
	LAB_MSG_STATE = 12,   /* agent -> host: "key=value\n" lines, a blank line, then
			       * fsck_len bytes of fsck output and tree_len bytes of
			       * tree lines (core/tree.h) */
};

struct lab_msg {
	uint8_t type;
	uint16_t flags;
	uint32_t seq;
	uint32_t len;
	unsigned char *data; /* len bytes (not NUL-terminated); valid until the next call */
};

/* Incremental frame reader over a byte stream. */
struct lab_proto_reader {
	unsigned char *buf;
	size_t len, cap;
	size_t consumed;     /* bytes of buf taken by the last returned message */
	char err[128];       /* why lab_proto_next returned -1 */
};

/* Write one frame completely (retries short writes and EINTR). 0 or -1 + errno. */
int lab_proto_send(int fd, uint8_t type, uint16_t flags, uint32_t seq, const void *data, uint32_t len);
/* Append received bytes. 0 or -1 (out of memory). */
int lab_proto_feed(struct lab_proto_reader *r, const void *data, size_t n);
/* 1: *m holds the next message; 0: need more bytes; -1: broken stream (r->err). */
int lab_proto_next(struct lab_proto_reader *r, struct lab_msg *m);
void lab_proto_reader_free(struct lab_proto_reader *r);

/* Pack argv into a NUL-separated payload (malloc'd) and back (returns count,
 * fills out[] up to max with pointers into data; data must end with NUL). */
unsigned char *lab_proto_pack_argv(char *const *argv, uint32_t *len);
int lab_proto_unpack_argv(unsigned char *data, uint32_t len, char **out, int max);

#endif
