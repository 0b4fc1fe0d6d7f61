/*
 * overlay.c - the overlay of an [overlay] workload (core/workload.h), the
 * same for the recording and the checker: three directories in the root
 * of the file system under test, lower, upper and work, and an overlay
 * mounted over them with mount(2) and WL_OVERLAY_OPTS. The recording
 * makes the directories, runs [setup] in lower, then mounts the overlay
 * (before the setup's sync, so what mounting writes is on disk before the
 * first crash state); the checker mounts each crash state and then the
 * overlay over it, and captures the overlay's merged view: what the
 * program sees after the crash.
 */
#include <errno.h>
#include <stdio.h>
#include <sys/mount.h>
#include <sys/stat.h>

#include "images/agent/agent.h"

int agent_overlay_layers(const char *dir)
{
	static const char *const names[] = { WL_OVERLAY_LOWER, WL_OVERLAY_UPPER, WL_OVERLAY_WORK };
	char p[512];
	for (int i = 0; i < 3; i++) {
		if (snprintf(p, sizeof(p), "%s/%s", dir, names[i]) >= (int)sizeof(p)) {
			errno = ENAMETOOLONG;
			return -1;
		}
		if (mkdir(p, 0755) < 0 && errno != EEXIST)
			return -1;
	}
	return 0;
}

int agent_overlay_mount(const char *layers, const char *merged)
{
	char data[1200];
	int n = snprintf(data, sizeof(data), "lowerdir=%s/%s,upperdir=%s/%s,workdir=%s/%s,%s", layers,
			 WL_OVERLAY_LOWER, layers, WL_OVERLAY_UPPER, layers, WL_OVERLAY_WORK, WL_OVERLAY_OPTS);
	if (n < 0 || n >= (int)sizeof(data)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	if (mkdir_p(merged, 0755) < 0)
		return -1;
	return mount("overlay", merged, "overlay", 0, data);
}
