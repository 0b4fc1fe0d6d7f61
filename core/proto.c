/*
 * proto.c - frame encoding and decoding for the host <-> guest channel.
 * Kept free of the rest of crashlab (libc only) because the static guest
 * agent links it too.
 */
#include "core/proto.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void put32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)v;
	p[1] = (unsigned char)(v >> 8);
	p[2] = (unsigned char)(v >> 16);
	p[3] = (unsigned char)(v >> 24);
}

static uint32_t get32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static int write_all(int fd, const void *data, size_t n)
{
	const unsigned char *p = data;
	while (n) {
		ssize_t w = write(fd, p, n);
		if (w < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			return -1;
		}
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

int lab_proto_send(int fd, uint8_t type, uint16_t flags, uint32_t seq, const void *data, uint32_t len)
{
	if (len > LAB_PROTO_MAX_PAYLOAD) {
		errno = EMSGSIZE;
		return -1;
	}
	unsigned char *frame = malloc(LAB_PROTO_HDR + (size_t)len);
	if (!frame)
		return -1;
	put32(frame, LAB_PROTO_MAGIC);
	frame[4] = LAB_PROTO_VERSION;
	frame[5] = type;
	frame[6] = (unsigned char)flags;
	frame[7] = (unsigned char)(flags >> 8);
	put32(frame + 8, seq);
	put32(frame + 12, len);
	if (len)
		memcpy(frame + LAB_PROTO_HDR, data, len);
	int r = write_all(fd, frame, LAB_PROTO_HDR + (size_t)len);
	int e = errno;
	free(frame);
	errno = e;
	return r;
}

int lab_proto_feed(struct lab_proto_reader *r, const void *data, size_t n)
{
	if (r->consumed) {
		memmove(r->buf, r->buf + r->consumed, r->len - r->consumed);
		r->len -= r->consumed;
		r->consumed = 0;
	}
	if (r->len + n + 1 > r->cap) {
		size_t cap = r->cap ? r->cap : 4096;
		while (cap < r->len + n + 1)
			cap *= 2;
		unsigned char *b = realloc(r->buf, cap);
		if (!b)
			return -1;
		r->buf = b;
		r->cap = cap;
	}
	memcpy(r->buf + r->len, data, n);
	r->len += n;
	return 0;
}

int lab_proto_next(struct lab_proto_reader *r, struct lab_msg *m)
{
	if (r->consumed) {
		memmove(r->buf, r->buf + r->consumed, r->len - r->consumed);
		r->len -= r->consumed;
		r->consumed = 0;
	}
	if (r->len < LAB_PROTO_HDR)
		return 0;
	uint32_t magic = get32(r->buf);
	if (magic != LAB_PROTO_MAGIC) {
		snprintf(r->err, sizeof(r->err), "bad frame magic 0x%08x", magic);
		return -1;
	}
	if (r->buf[4] != LAB_PROTO_VERSION) {
		snprintf(r->err, sizeof(r->err), "protocol version %u, expected %u", r->buf[4],
			 LAB_PROTO_VERSION);
		return -1;
	}
	uint32_t len = get32(r->buf + 12);
	if (len > LAB_PROTO_MAX_PAYLOAD) {
		snprintf(r->err, sizeof(r->err), "frame of %u bytes exceeds the limit", len);
		return -1;
	}
	if (r->len < LAB_PROTO_HDR + (size_t)len)
		return 0;
	m->type = r->buf[5];
	m->flags = (uint16_t)(r->buf[6] | r->buf[7] << 8);
	m->seq = get32(r->buf + 8);
	m->len = len;
	m->data = r->buf + LAB_PROTO_HDR;
	r->consumed = LAB_PROTO_HDR + (size_t)len;
	return 1;
}

void lab_proto_reader_free(struct lab_proto_reader *r)
{
	free(r->buf);
	memset(r, 0, sizeof(*r));
}

unsigned char *lab_proto_pack_argv(char *const *argv, uint32_t *len)
{
	size_t n = 0;
	for (int i = 0; argv[i]; i++)
		n += strlen(argv[i]) + 1;
	unsigned char *p = malloc(n ? n : 1), *q = p;
	if (!p)
		return NULL;
	for (int i = 0; argv[i]; i++) {
		size_t l = strlen(argv[i]) + 1;
		memcpy(q, argv[i], l);
		q += l;
	}
	*len = (uint32_t)n;
	return p;
}

int lab_proto_unpack_argv(unsigned char *data, uint32_t len, char **out, int max)
{
	int n = 0;
	uint32_t i = 0;
	if (len == 0 || data[len - 1] != '\0')
		return -1;
	while (i < len && n < max - 1) {
		out[n++] = (char *)data + i;
		i += (uint32_t)strlen((char *)data + i) + 1;
	}
	out[n] = NULL;
	return i < len ? -1 : n;
}
