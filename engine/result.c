/* result.c - see result.h. */
#include "engine/result.h"

#include <stdlib.h>
#include <string.h>

#include "core/util.h"

void run_info_free(struct run_info *r)
{
	free(r->started_at);
	free(r->finished_at);
	free(r->status);
	free(r->cmdline);
	free(r->accel);
	free(r->kernel_version);
	free(r->kernel_key);
	free(r->workload_file);
	free(r->workload_text);
	free(r->crash_mode);
	free(r->workdir);
	memset(r, 0, sizeof(*r));
}

void fsrun_free(struct fsrun *f)
{
	free(f->fs);
	free(f->mkfs_opts);
	free(f->mount_opts);
	free(f->base_image);
	free(f->log_path);
	free(f->qemu_cmdline);
	free(f->outcome);
	free(f->error);
	free(f->models);
	free(f->sim_notes);
	wl_free(&f->ops);
	free(f->res);
	memset(f, 0, sizeof(*f));
}

void state_result_free(struct state_result *s)
{
	free(s->kind);
	free(s->spec);
	check_report_free(&s->check);
	judgement_free(&s->judge);
	memset(s, 0, sizeof(*s));
}

static char *dup_or_null(const char *s)
{
	return s ? xstrdup(s) : NULL;
}

void fsrun_dup(struct fsrun *dst, const struct fsrun *src)
{
	*dst = *src;
	dst->fs = dup_or_null(src->fs);
	dst->mkfs_opts = dup_or_null(src->mkfs_opts);
	dst->mount_opts = dup_or_null(src->mount_opts);
	dst->base_image = dup_or_null(src->base_image);
	dst->log_path = dup_or_null(src->log_path);
	dst->qemu_cmdline = dup_or_null(src->qemu_cmdline);
	dst->outcome = dup_or_null(src->outcome);
	dst->error = dup_or_null(src->error);
	dst->models = dup_or_null(src->models);
	dst->sim_notes = dup_or_null(src->sim_notes);
	memset(&dst->ops, 0, sizeof(dst->ops));
	wl_copy(&dst->ops, &src->ops);
	dst->res = NULL;
	if (src->res) {
		size_t n = src->ops.n ? src->ops.n : 1;
		dst->res = xcalloc(n, sizeof(*dst->res));
		memcpy(dst->res, src->res, n * sizeof(*dst->res));
	}
}
