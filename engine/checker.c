/*
 * check.c - host side of checking crash states.
 *
 * Method. One checker guest per file system: its /dev/vda is the cached
 * base image (QEMU snapshot=on, so even a stray write never reaches the
 * cache) and its /dev/vdb the recording's write log, read-only. For each
 * state the host sends the state's spec; the agent's checker (see
 * images/agent/checker.c) builds it as a device-mapper snapshot with the
 * copy-on-write store in RAM, mounts, captures, unmounts and runs fsck, and
 * answers with the outcome, fsck's output and the observed tree. The guest
 * is reused across states; only a guest failure (panic, hang) ends it, and
 * the caller may start a new one for the remaining states.
 */
#include "engine/checker.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "images/basedisk.h"
#include "core/tree.h"

enum lab_outcome lab_checker_start(struct lab_checker *c, const struct lab_vm_config *guest,
				   const char *fs, const char *base, const char *log_path,
				   const char *mount_opts)
{
	memset(c, 0, sizeof(*c));
	c->fs = fs;
	c->mount_opts = mount_opts;
	struct sbuf sb = SBUF_INIT;
	const char *const *fa = img_fsck_argv(fs);
	for (int i = 0; fa && fa[i]; i++)
		sbuf_addf(&sb, "%s%s", i ? " " : "", fa[i]);
	c->fsck = sbuf_detach(&sb);
	struct lab_vm_config cfg = *guest;
	memset(&cfg.drives, 0, sizeof(cfg.drives));
	strvec_pushf(&cfg.drives, "file=%s,format=raw,snapshot=on", base);
	strvec_pushf(&cfg.drives, "file=%s,format=raw,readonly=on", log_path);
	if (cfg.mem_mb < 1536)
		cfg.mem_mb = 1536; /* the copy-on-write store lives in guest RAM */
	enum lab_outcome o = lab_vm_start(&c->vm, &cfg);
	strvec_free(&cfg.drives);
	return o;
}

static char *kv(const char *text, size_t len, const char *key)
{
	size_t klen = strlen(key);
	const char *p = text, *end = text + len;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end;
		if (le == p)
			break; /* the blank line ends the header */
		if ((size_t)(le - p) > klen && !strncmp(p, key, klen) && p[klen] == '=') {
			size_t vlen = (size_t)(le - p) - klen - 1;
			char *v = xmalloc(vlen + 1);
			memcpy(v, p + klen + 1, vlen);
			v[vlen] = '\0';
			return v;
		}
		p = le + 1;
	}
	return NULL;
}

static double kv_num(const char *text, size_t len, const char *key)
{
	char *v = kv(text, len, key);
	double d = v ? strtod(v, NULL) : 0;
	free(v);
	return d;
}

int lab_state_report_parse(const char *fs, const char *payload, size_t len, struct lab_state_report *rep)
{
	memset(rep, 0, sizeof(*rep));
	const char *body = NULL;
	for (size_t i = 0; i + 1 < len; i++)
		if (payload[i] == '\n' && payload[i + 1] == '\n') {
			body = payload + i + 2;
			break;
		}
	if (!body)
		return -1;
	size_t hlen = (size_t)(body - payload);
	char *mo = kv(payload, hlen, "mount_ok");
	if (!mo)
		return -1;
	rep->mount_ok = atoi(mo);
	free(mo);
	rep->mount_msg = kv(payload, hlen, "mount_msg");
	rep->fsck_status = (int)kv_num(payload, hlen, "fsck_status");
	rep->fsck_clean = img_fsck_clean(fs, rep->fsck_status);
	rep->bytes = (uint64_t)kv_num(payload, hlen, "bytes");
	rep->ms_replay = kv_num(payload, hlen, "ms_replay");
	rep->ms_mount = kv_num(payload, hlen, "ms_mount");
	rep->ms_capture = kv_num(payload, hlen, "ms_capture");
	rep->ms_fsck = kv_num(payload, hlen, "ms_fsck");
	rep->ms_other = kv_num(payload, hlen, "ms_other");
	size_t flen = (size_t)kv_num(payload, hlen, "fsck_len");
	size_t tlen = (size_t)kv_num(payload, hlen, "tree_len");
	if (hlen + flen + tlen != len)
		return -1;
	rep->fsck_output = xmalloc(flen + 1);
	memcpy(rep->fsck_output, body, flen);
	rep->fsck_output[flen] = '\0';
	const char *tree = body + flen;
	rep->tree_hash[0] = '\0';
	snprintf(rep->tree_hash, sizeof(rep->tree_hash), "%016llx",
		 (unsigned long long)tree_fnv1a(tree, tlen));
	size_t cap = 16;
	rep->nodes = xcalloc(cap, sizeof(*rep->nodes));
	const char *p = tree, *end = tree + tlen;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end;
		char *line = xmalloc((size_t)(le - p) + 1);
		memcpy(line, p, (size_t)(le - p));
		line[le - p] = '\0';
		if (rep->n_nodes == cap) {
			cap *= 2;
			rep->nodes = xrealloc(rep->nodes, cap * sizeof(*rep->nodes));
		}
		int r = tree_node_parse(line, &rep->nodes[rep->n_nodes]);
		free(line);
		if (r < 0)
			return -1;
		rep->n_nodes++;
		p = le + 1;
	}
	return 0;
}

enum lab_outcome lab_checker_state(struct lab_checker *c, const char *spec, struct lab_state_report *rep,
				   char *error, size_t errlen)
{
	double t0 = now_s();
	/* Test hook: CRASHLAB_TEST_CRASH_STATE=N makes the checker guest's
	 * kernel crash (sysrq) instead of checking the N-th state it is sent,
	 * so the tests can prove a state that takes the guest down is stored
	 * as a finding and checking goes on in a fresh guest. */
	const char *crash_at = getenv("CRASHLAB_TEST_CRASH_STATE");
	if (crash_at && *crash_at && (uint32_t)atoi(crash_at) == c->seq + 1) {
		c->seq++;
		char *argv[] = { "sh", "-c", "echo c > /proc/sysrq-trigger; sleep 60", NULL };
		int st;
		memset(rep, 0, sizeof(*rep));
		error[0] = '\0';
		return lab_vm_exec(&c->vm, argv, 1, 2, 0, &st);
	}
	char *req = xasprintf("fs=%s\nspec=%s\nmount_opts=%s\nfsck=%s\n", c->fs, spec,
			      c->mount_opts ? c->mount_opts : "", c->fsck);
	uint8_t type = 0;
	struct sbuf reply = SBUF_INIT;
	error[0] = '\0';
	enum lab_outcome o = lab_vm_request(&c->vm, LAB_MSG_CHECK, 0, ++c->seq, req, (uint32_t)strlen(req), 0,
					    &type, &reply);
	free(req);
	memset(rep, 0, sizeof(*rep));
	if (o == LAB_OK) {
		if (type != LAB_MSG_STATE)
			snprintf(error, errlen, "checker: %.*s", (int)reply.len, reply.buf ? reply.buf : "");
		else if (lab_state_report_parse(c->fs, reply.buf, reply.len, rep) < 0)
			snprintf(error, errlen, "checker: malformed state report");
	}
	rep->ms_host = (now_s() - t0) * 1000;
	sbuf_free(&reply);
	return o;
}

void lab_checker_stop(struct lab_checker *c)
{
	lab_vm_stop(&c->vm);
	lab_vm_free(&c->vm);
	free(c->fsck);
	c->fsck = NULL;
}

void lab_state_report_free(struct lab_state_report *rep)
{
	free(rep->mount_msg);
	free(rep->fsck_output);
	for (size_t i = 0; i < rep->n_nodes; i++)
		tree_node_free(&rep->nodes[i]);
	free(rep->nodes);
	memset(rep, 0, sizeof(*rep));
}
