/* intr.c - see intr.h. */
#include "host/intr.h"

#include <signal.h>
#include <string.h>

static volatile sig_atomic_t pending;

static void on_signal(int sig)
{
	if (pending == sig) {
		/* the second time: stop now, the default way */
		signal(sig, SIG_DFL);
		raise(sig);
		return;
	}
	if (!pending)
		pending = sig;
}

void intr_install(void)
{
	static int installed;
	if (installed)
		return;
	installed = 1;
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	/* no SA_RESTART: a blocking wait returns EINTR and looks at the flag */
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP };
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaction(sigs[i], &sa, NULL);
}

int intr_pending(void)
{
	return pending;
}

int intr_exit_code(void)
{
	return pending ? 128 + pending : 0;
}

void intr_clear(void)
{
	pending = 0;
}
