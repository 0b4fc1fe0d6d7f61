/* result.c - see result.h. */
#include "engine/result.h"

#include <stdlib.h>
#include <string.h>

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
