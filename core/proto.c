/*
 * proto.c - frame encoding and decoding for the host <-> guest channel.
 * Kept free of the rest of crashlab (libc only) because the static guest
 * agent links it too.
 */
#include "core/proto.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/kv.h"
#include "core/util.h"

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

int proto_send(int fd, uint8_t type, uint16_t flags, uint32_t seq, const void *data, uint32_t len)
{
	if (len > PROTO_MAX_PAYLOAD) {
		errno = EMSGSIZE;
		return -1;
	}
	unsigned char *frame = malloc(PROTO_HDR + (size_t)len);
	if (!frame)
		return -1;
	put32(frame, PROTO_MAGIC);
	frame[4] = PROTO_VERSION;
	frame[5] = type;
	frame[6] = (unsigned char)flags;
	frame[7] = (unsigned char)(flags >> 8);
	put32(frame + 8, seq);
	put32(frame + 12, len);
	if (len)
		memcpy(frame + PROTO_HDR, data, len);
	int r = write_all(fd, frame, PROTO_HDR + (size_t)len);
	int e = errno;
	free(frame);
	errno = e;
	return r;
}

int proto_feed(struct proto_reader *r, const void *data, size_t n)
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

int proto_next(struct proto_reader *r, struct proto_msg *m)
{
	if (r->consumed) {
		memmove(r->buf, r->buf + r->consumed, r->len - r->consumed);
		r->len -= r->consumed;
		r->consumed = 0;
	}
	if (r->len < PROTO_HDR)
		return 0;
	uint32_t magic = get32(r->buf);
	if (magic != PROTO_MAGIC) {
		snprintf(r->err, sizeof(r->err), "bad frame magic 0x%08x", magic);
		return -1;
	}
	if (r->buf[4] != PROTO_VERSION) {
		snprintf(r->err, sizeof(r->err), "protocol version %u, expected %u", r->buf[4],
			 PROTO_VERSION);
		return -1;
	}
	uint32_t len = get32(r->buf + 12);
	if (len > PROTO_MAX_PAYLOAD) {
		snprintf(r->err, sizeof(r->err), "frame of %u bytes exceeds the limit", len);
		return -1;
	}
	if (r->len < PROTO_HDR + (size_t)len)
		return 0;
	m->type = r->buf[5];
	m->flags = (uint16_t)(r->buf[6] | r->buf[7] << 8);
	m->seq = get32(r->buf + 8);
	m->len = len;
	m->data = r->buf + PROTO_HDR;
	r->consumed = PROTO_HDR + (size_t)len;
	return 1;
}

void proto_reader_free(struct proto_reader *r)
{
	free(r->buf);
	memset(r, 0, sizeof(*r));
}

unsigned char *proto_pack_argv(char *const *argv, uint32_t *len)
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

int proto_unpack_argv(unsigned char *data, uint32_t len, char **out, int max)
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

int proto_result_format(const struct op_result *r, char *buf, size_t n)
{
	return snprintf(buf, n, "ret=%lld\nerrno=%d\nino=%llu\nino2=%llu\nms=%.3f\n", (long long)r->ret, r->err,
			(unsigned long long)r->ino, (unsigned long long)r->ino2, r->ms);
}

/* Linux's largest errno (MAX_ERRNO): a system call returns -1..-4095 for an error. */
#define ERRNO_MAX 4095
/* A duration in ms: a guest's clock, checked; more than a year is not a time. */
#define MS_MAX (365.0 * 86400 * 1000)

int proto_result_parse(const char *text, size_t len, struct op_result *r)
{
	long long ret, err;
	unsigned long long ino = 0, ino2 = 0;
	double ms = 0;
	memset(r, 0, sizeof(*r));
	if (kv_int(text, len, "ret", LLONG_MIN, LLONG_MAX, &ret) != 1 ||
	    kv_int(text, len, "errno", 0, ERRNO_MAX, &err) != 1 || kv_u64(text, len, "ino", &ino) < 0 ||
	    kv_u64(text, len, "ino2", &ino2) < 0 || kv_real(text, len, "ms", 0, MS_MAX, &ms) < 0)
		return -1;
	r->ret = ret;
	r->err = (int)err;
	r->ino = ino;
	r->ino2 = ino2;
	r->ms = ms;
	return 0;
}

/* Paths in byte order, to find one listed twice. */
static int cmp_path(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static const char *duplicate_path(const struct check_report *rep)
{
	const char *dup = NULL;
	if (rep->n_nodes < 2)
		return NULL;
	char **v = xmalloc(rep->n_nodes * sizeof(*v));
	for (size_t i = 0; i < rep->n_nodes; i++)
		v[i] = rep->nodes[i].path;
	qsort(v, rep->n_nodes, sizeof(*v), cmp_path);
	for (size_t i = 1; i < rep->n_nodes && !dup; i++)
		if (!strcmp(v[i - 1], v[i]))
			dup = v[i];
	free(v);
	return dup;
}

int proto_state_parse(const struct fs_type *t, const char *payload, size_t len, struct check_report *rep,
		      struct errbuf *e)
{
	memset(rep, 0, sizeof(*rep));
	const char *body = kv_body(payload, len);
	if (!body)
		return errbuf_set(e, EXIT_GUEST, "no blank line ends the header");
	size_t hlen = (size_t)(body - payload);
	/* The numbers a guest sends are checked, not trusted: a length, a
	 * status or a time out of range makes the whole STATE malformed. */
	long long mount_ok, fsck_status = -1, bytes = 0, flen = 0, tlen = 0;
	if (kv_int(payload, hlen, "mount_ok", 0, 1, &mount_ok) != 1)
		return errbuf_set(e, EXIT_GUEST, "mount_ok is missing or not 0 or 1");
	if (kv_int(payload, hlen, "fsck_status", -1, 255, &fsck_status) < 0 ||
	    kv_int(payload, hlen, "bytes", 0, LLONG_MAX, &bytes) < 0 ||
	    kv_int(payload, hlen, "fsck_len", 0, (long long)len, &flen) < 0 ||
	    kv_int(payload, hlen, "tree_len", 0, (long long)len, &tlen) < 0)
		return errbuf_set(e, EXIT_GUEST, "a number of the header is out of range");
	static const char *const times[] = { "ms_replay", "ms_mount", "ms_capture", "ms_fsck", "ms_other" };
	double *slots[] = { &rep->ms_replay, &rep->ms_mount, &rep->ms_capture, &rep->ms_fsck, &rep->ms_other };
	for (size_t i = 0; i < ARRAY_SIZE(times); i++)
		if (kv_real(payload, hlen, times[i], 0, MS_MAX, slots[i]) < 0) {
			errbuf_set(e, EXIT_GUEST, "%s is not a time", times[i]);
			goto bad;
		}
	if (hlen + (size_t)flen + (size_t)tlen != len) {
		errbuf_set(e, EXIT_GUEST, "fsck_len and tree_len do not add up to the %zu bytes after the header",
			   len - hlen);
		goto bad;
	}
	rep->mount_ok = (int)mount_ok;
	rep->mount_msg = kv_get(payload, hlen, "mount_msg");
	rep->fsck_status = (int)fsck_status;
	rep->fsck_clean = fs_fsck_clean(t, rep->fsck_status);
	rep->bytes = (uint64_t)bytes;
	rep->fsck_output = fs_fsck_filter(xmemdup(body, flen));
	const char *tree = body + flen;
	snprintf(rep->tree_hash, sizeof(rep->tree_hash), "%016llx", (unsigned long long)fnv1a64(tree, tlen));
	size_t cap = 0;
	const char *p = tree, *end = tree + tlen;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end;
		ALLOC_GROW(rep->nodes, rep->n_nodes + 1, cap);
		int r = -1;
		if (!memchr(p, '\0', (size_t)(le - p))) {
			char *line = xmemdup(p, (size_t)(le - p));
			r = tree_node_parse(line, &rep->nodes[rep->n_nodes]);
			free(line);
		}
		if (r < 0) {
			errbuf_set(e, EXIT_GUEST, "tree line %zu is malformed", rep->n_nodes + 1);
			goto bad;
		}
		rep->n_nodes++;
		p = le + 1;
	}
	/* The tree is a map from path to node: a name listed twice cannot be
	 * judged or stored. */
	const char *dup = duplicate_path(rep);
	if (dup) {
		struct sbuf q = SBUF_INIT;
		sbuf_add_escaped(&q, dup, strlen(dup), 0);
		errbuf_set(e, EXIT_GUEST, "path '%.200s' is in the tree twice", q.buf);
		sbuf_free(&q);
		goto bad;
	}
	return 0;
bad:
	check_report_free(rep);
	return -1;
}

void check_report_copy(struct check_report *dst, const struct check_report *src)
{
	*dst = *src;
	dst->mount_msg = src->mount_msg ? xstrdup(src->mount_msg) : NULL;
	dst->fsck_output = src->fsck_output ? xstrdup(src->fsck_output) : NULL;
	dst->nodes = src->n_nodes ? xcalloc(src->n_nodes, sizeof(*dst->nodes)) : NULL;
	for (size_t i = 0; i < src->n_nodes; i++)
		tree_node_copy(&dst->nodes[i], &src->nodes[i]);
}

void check_report_free(struct check_report *rep)
{
	free(rep->mount_msg);
	free(rep->fsck_output);
	for (size_t i = 0; i < rep->n_nodes; i++)
		tree_node_free(&rep->nodes[i]);
	free(rep->nodes);
	memset(rep, 0, sizeof(*rep));
}

uint16_t proto_log_flags(uint64_t off, uint64_t len, uint64_t total)
{
	return (uint16_t)((off == 0 ? PROTO_LOG_FIRST : 0) | (off + len >= total ? PROTO_LOG_LAST : 0));
}

int proto_log_take(struct proto_log_rx *rx, const char *path, const struct proto_msg *m)
{
	if (m->flags & PROTO_LOG_FIRST) {
		if (rx->fd >= 0)
			close(rx->fd);
		rx->bytes = 0;
		rx->err = 0;
		rx->active = 1;
		rx->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		if (rx->fd < 0)
			rx->err = errno;
	} else if (!rx->active) {
		/* a piece of no log (its first piece never came) */
		rx->bytes = 0;
		rx->err = EPROTO;
		rx->active = 1;
	}
	if (rx->fd >= 0 && !rx->err && m->len) {
		if (write_all(rx->fd, m->data, m->len) < 0)
			rx->err = errno ? errno : EIO;
		else
			rx->bytes += m->len;
	}
	if (!(m->flags & PROTO_LOG_LAST))
		return 0;
	if (rx->fd >= 0 && close(rx->fd) < 0 && !rx->err)
		rx->err = errno;
	rx->fd = -1;
	rx->active = 0;
	return 1;
}
