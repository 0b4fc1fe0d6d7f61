/*
 * elfdeps.c - which shared objects a host program loads, read from its ELF
 * program headers with libelf (PT_INTERP, PT_DYNAMIC's DT_NEEDED and
 * DT_RUNPATH/DT_RPATH), recursively, found where the loader would find
 * them: so the guest image carries exactly what each tool needs.
 */
#include "images/elfdeps.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <glob.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "host/sys.h"


/* The loader's built-in search path on x86_64 Debian, then the usual others. */
static const char *const system_lib_dirs[] = {
	"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64", "/usr/lib64",
	"/lib", "/usr/lib", NULL,
};

struct elf_info {
	bool is_elf;
	int elf_class;          /* ELFCLASS32/64 */
	int machine;            /* e_machine */
	char *interp;           /* PT_INTERP, or NULL */
	struct strvec needed;   /* DT_NEEDED */
	struct strvec runpath;  /* DT_RUNPATH (or DT_RPATH without one), split on ':' */
};

static void elf_info_free(struct elf_info *info)
{
	free(info->interp);
	strvec_free(&info->needed);
	strvec_free(&info->runpath);
}

/* Map a virtual address to a file offset through the PT_LOAD segments. */
static bool vaddr_to_offset(Elf *e, size_t phnum, GElf_Addr vaddr, GElf_Off *off)
{
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(e, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (vaddr >= ph.p_vaddr && vaddr < ph.p_vaddr + ph.p_filesz) {
			*off = vaddr - ph.p_vaddr + ph.p_offset;
			return true;
		}
	}
	return false;
}

static void split_path_list(struct strvec *out, const char *list, const char *origin)
{
	char *copy = xstrdup(list), *save = NULL;
	for (char *d = strtok_r(copy, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
		struct sbuf sb = SBUF_INIT;
		for (const char *p = d; *p;) {
			if (!strncmp(p, "$ORIGIN", 7)) {
				sbuf_adds(&sb, origin);
				p += 7;
			} else if (!strncmp(p, "${ORIGIN}", 9)) {
				sbuf_adds(&sb, origin);
				p += 9;
			} else {
				sbuf_add(&sb, p++, 1);
			}
		}
		/* $LIB, $PLATFORM and relative entries are not followed. */
		if (sb.buf && sb.buf[0] == '/' && !strchr(sb.buf, '$'))
			strvec_push(out, sb.buf);
		sbuf_free(&sb);
	}
	free(copy);
}

/*
 * Read what the loader needs from an ELF file, from its program headers
 * only (so section-stripped files work too). Returns -1 + errno when the
 * file cannot be read; a file that is not ELF gives is_elf = false.
 */
static int elf_read(const char *path, struct elf_info *info)
{
	memset(info, 0, sizeof(*info));
	if (elf_version(EV_CURRENT) == EV_NONE)
		BUG("libelf is out of date: %s", elf_errmsg(-1));
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	Elf *e = elf_begin(fd, ELF_C_READ, NULL);
	if (!e || elf_kind(e) != ELF_K_ELF) {
		if (e)
			elf_end(e);
		close(fd);
		return 0;
	}
	GElf_Ehdr eh;
	size_t phnum, rawsize;
	const char *raw = elf_rawfile(e, &rawsize);
	if (!gelf_getehdr(e, &eh) || elf_getphdrnum(e, &phnum) != 0 || !raw) {
		elf_end(e);
		close(fd);
		return 0;
	}
	info->is_elf = true;
	info->elf_class = gelf_getclass(e);
	info->machine = eh.e_machine;

	GElf_Addr strtab = 0;
	GElf_Xword strsz = 0;
	struct { GElf_Sxword tag; GElf_Xword val; } *dyns = NULL;
	size_t ndyn = 0;
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(e, (int)i, &ph))
			continue;
		if (ph.p_type == PT_INTERP && ph.p_offset < rawsize && ph.p_filesz <= rawsize - ph.p_offset) {
			const char *s = raw + ph.p_offset;
			info->interp = xstrndup(s, ph.p_filesz);
		} else if (ph.p_type == PT_DYNAMIC) {
			Elf_Data *d = elf_getdata_rawchunk(e, (int64_t)ph.p_offset, ph.p_filesz, ELF_T_DYN);
			GElf_Dyn dyn;
			for (int j = 0; d && gelf_getdyn(d, j, &dyn) && dyn.d_tag != DT_NULL; j++) {
				if (dyn.d_tag == DT_STRTAB)
					strtab = dyn.d_un.d_ptr;
				else if (dyn.d_tag == DT_STRSZ)
					strsz = dyn.d_un.d_val;
				else if (dyn.d_tag == DT_NEEDED || dyn.d_tag == DT_RUNPATH || dyn.d_tag == DT_RPATH) {
					dyns = xrealloc(dyns, (ndyn + 1) * sizeof(*dyns));
					dyns[ndyn].tag = dyn.d_tag;
					dyns[ndyn].val = dyn.d_un.d_val;
					ndyn++;
				}
			}
		}
	}
	GElf_Off stroff;
	if (ndyn && strtab && vaddr_to_offset(e, phnum, strtab, &stroff) && stroff < rawsize) {
		if (!strsz || strsz > rawsize - stroff)
			strsz = rawsize - stroff;
		char *resolved = realpath(path, NULL);
		char *origin = xstrdup(resolved ? resolved : path);
		free(resolved);
		char *slash = strrchr(origin, '/');
		if (slash)
			*slash = '\0';
		bool have_runpath = false;
		for (size_t i = 0; i < ndyn; i++)
			if (dyns[i].tag == DT_RUNPATH)
				have_runpath = true;
		for (size_t i = 0; i < ndyn; i++) {
			if (dyns[i].val >= strsz)
				continue;
			const char *s = raw + stroff + dyns[i].val;
			char *str = xstrndup(s, strsz - dyns[i].val);
			if (dyns[i].tag == DT_NEEDED)
				strvec_push(&info->needed, str);
			else if (dyns[i].tag == (have_runpath ? DT_RUNPATH : DT_RPATH))
				split_path_list(&info->runpath, str, origin);
			free(str);
		}
		free(origin);
	}
	free(dyns);
	elf_end(e);
	close(fd);
	return 0;
}

/* The directories listed in the .conf files of /etc/ld.so.conf.d, read once ("include" lines are not followed). */
static const struct strvec *ldconf_dirs(void)
{
	static struct strvec dirs = STRVEC_INIT;
	static bool done;
	if (done)
		return &dirs;
	done = true;
	glob_t g;
	if (glob("/etc/ld.so.conf.d/*.conf", 0, NULL, &g) != 0)
		return &dirs;
	for (size_t i = 0; i < g.gl_pathc; i++) {
		struct sbuf sb = SBUF_INIT;
		if (read_file(g.gl_pathv[i], &sb) < 0)
			continue;
		char *save = NULL;
		for (char *l = strtok_r(sb.buf, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
			l += strspn(l, " \t");
			size_t n = strcspn(l, " \t#");
			l[n] = '\0';
			if (l[0] == '/' && !strvec_has(&dirs, l))
				strvec_push(&dirs, l);
		}
		sbuf_free(&sb);
	}
	globfree(&g);
	return &dirs;
}

/* Whether the file at path is an ELF object of the given class and machine. */
static bool elf_matches(const char *path, int elf_class, int machine)
{
	struct elf_info info;
	if (elf_read(path, &info) < 0)
		return false;
	bool ok = info.is_elf && info.elf_class == elf_class && info.machine == machine;
	elf_info_free(&info);
	return ok;
}

static char *find_library(const char *name, const struct elf_info *needer)
{
	if (strchr(name, '/'))
		return name[0] == '/' && file_exists(name) ? xstrdup(name) : NULL;
	const struct strvec *conf = ldconf_dirs();
	for (int pass = 0; pass < 3; pass++) {
		const char *const *dirs = pass == 0 ? (const char *const *)needer->runpath.v
					: pass == 1 ? system_lib_dirs
					: (const char *const *)conf->v;
		for (size_t i = 0; dirs && dirs[i]; i++) {
			char *cand = xasprintf("%s/%s", dirs[i], name);
			if (elf_matches(cand, needer->elf_class, needer->machine))
				return cand;
			free(cand);
		}
	}
	return NULL;
}

/* img_elf_deps without messages: err receives the reason on failure. */
static int elf_deps(const char *path, struct strvec *libs, struct errbuf *eb)
{
	struct strvec todo = STRVEC_INIT, seen = STRVEC_INIT;
	int ret = 0;
	strvec_push(&todo, path);
	for (size_t next = 0; next < todo.n && !ret; next++) {
		const char *obj = todo.v[next];
		char *real = realpath(obj, NULL);
		if (!real) {
			ret = errbuf_set(eb, EXIT_NOINPUT, "cannot read '%s': %s", obj, errno_advice(errno));
			break;
		}
		if (strvec_has(&seen, real)) {
			free(real);
			continue;
		}
		strvec_push(&seen, real);
		free(real);
		struct elf_info info;
		if (elf_read(obj, &info) < 0) {
			ret = errbuf_set(eb, EXIT_NOINPUT, "cannot read '%s': %s", obj, errno_advice(errno));
			break;
		}
		if (info.interp) {
			if (!file_exists(info.interp)) {
				ret = errbuf_set(eb, EXIT_NOINPUT, "cannot find the loader '%s' that '%s' needs", info.interp,
						 obj);
			} else if (!strvec_has(libs, info.interp)) {
				strvec_push(libs, info.interp);
				strvec_push(&todo, info.interp);
			}
		}
		for (size_t i = 0; i < info.needed.n && !ret; i++) {
			char *lib = find_library(info.needed.v[i], &info);
			if (!lib) {
				if (next)
					ret = errbuf_set(eb, EXIT_NOINPUT, "cannot find the library '%s' that '%s' needs (loaded "
							 "for '%s')", info.needed.v[i], obj, path);
				else
					ret = errbuf_set(eb, EXIT_NOINPUT, "cannot find the library '%s' that '%s' needs",
							 info.needed.v[i], obj);
				break;
			}
			if (!strvec_has(libs, lib)) {
				strvec_push(libs, lib);
				strvec_push(&todo, lib);
			}
			free(lib);
		}
		elf_info_free(&info);
	}
	strvec_free(&todo);
	strvec_free(&seen);
	return ret;
}

int img_elf_deps(const char *path, struct strvec *libs, struct errbuf *e)
{
	return elf_deps(path, libs, e);
}

