/* progress.c - see progress.h. */
#include "host/progress.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "host/msg.h"

#define BAR_WIDTH 20
#define REDRAW_S 0.1  /* at most ten redraws a second on a terminal */

struct progress {
	char *title;
	uint64_t total;      /* expected work, 0 when unknown */
	uint64_t done;       /* work finished so far */
	char step[256];      /* what is happening now, shown after the time */
	double start;        /* now_s() at progress_start */
	double last_draw;    /* now_s() of the last redraw, tty only */
	int last_tenth;      /* last tenth printed, non-tty only */
	int tty;             /* stderr is a terminal: redraw in place */
	int shown;           /* the terminal line holds our text */
};

const char *progress_fmt_time(double s, char *buf, unsigned size)
{
	long t = s < 0 ? 0 : (long)(s + 0.5);
	if (t < 60)
		snprintf(buf, size, "%lds", t);
	else if (t < 3600)
		snprintf(buf, size, "%ldm%02lds", t / 60, t % 60);
	else
		snprintf(buf, size, "%ldh%02ldm", t / 3600, (t % 3600) / 60);
	return buf;
}

/* Percentage shown: at most 99 until progress_done(). */
static int percent(const struct progress *p)
{
	if (!p->total)
		return -1;
	uint64_t pc = p->done >= p->total ? 100 : p->done * 100 / p->total;
	return pc > 99 ? 99 : (int)pc;
}

static int term_width(void)
{
	struct winsize ws;
	if (ioctl(2, TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 20)
		return ws.ws_col;
	return 80;
}

static void put(const char *s, size_t n)
{
	while (n) {
		ssize_t w = write(2, s, n);
		if (w <= 0)
			return;
		s += w;
		n -= (size_t)w;
	}
}

static void draw(struct progress *p)
{
	char line[512], t[16];
	int pc = percent(p);
	int n;
	progress_fmt_time(now_s() - p->start, t, sizeof(t));
	if (pc >= 0) {
		char bar[BAR_WIDTH + 1];
		int fill = pc * BAR_WIDTH / 100;
		memset(bar, '#', (size_t)fill);
		memset(bar + fill, '.', (size_t)(BAR_WIDTH - fill));
		bar[BAR_WIDTH] = '\0';
		n = snprintf(line, sizeof(line), "%s [%s] %3d%%  %s  %s", p->title, bar, pc, t, p->step);
	} else {
		n = snprintf(line, sizeof(line), "%s  %llu  %s  %s", p->title,
			     (unsigned long long)p->done, t, p->step);
	}
	if (n < 0)
		return;
	size_t len = (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1;
	size_t width = (size_t)term_width() - 1;
	if (len > width)
		len = width;
	put("\r\033[K", 4);
	put(line, len);
	p->shown = 1;
	p->last_draw = now_s();
}

struct progress *progress_start(const char *title, uint64_t total)
{
	struct progress *p = xcalloc(1, sizeof(*p));
	p->title = xstrdup(title);
	p->total = total;
	p->start = now_s();
	p->tty = isatty(2);
	if (!msg_quiet() && p->tty)
		draw(p);
	return p;
}

double progress_elapsed(const struct progress *p)
{
	return now_s() - p->start;
}

void progress_update(struct progress *p, uint64_t done, const char *step)
{
	p->done = done;
	if (step) {
		struct sbuf sb = SBUF_INIT;
		sbuf_add_escaped(&sb, step, strlen(step), SBUF_ESC_PROSE);
		snprintf(p->step, sizeof(p->step), "%s", sb.buf);
		sbuf_free(&sb);
	}
	if (msg_quiet())
		return;
	if (p->tty) {
		if (now_s() - p->last_draw >= REDRAW_S)
			draw(p);
		return;
	}
	int pc = percent(p);
	if (pc < 0 || pc / 10 <= p->last_tenth)
		return;
	p->last_tenth = pc / 10;
	char t[16];
	progress_fmt_time(now_s() - p->start, t, sizeof(t));
	fprintf(stderr, "crashlab: %s: %d%%  %s%s%s\n", p->title, p->last_tenth * 10, t,
		p->step[0] ? "  " : "", p->step);
	fflush(stderr);
}

void progress_tick(struct progress *p)
{
	if (!msg_quiet() && p->tty && now_s() - p->last_draw >= 1.0)
		draw(p);
}

static void clear(struct progress *p)
{
	if (p->shown)
		put("\r\033[K", 4);
	p->shown = 0;
}

void progress_done(struct progress *p, const char *final_msg)
{
	if (!p)
		return;
	clear(p);
	if (final_msg)
		note("%s", final_msg);
	free(p->title);
	free(p);
}

void progress_abort(struct progress *p)
{
	progress_done(p, NULL);
}
