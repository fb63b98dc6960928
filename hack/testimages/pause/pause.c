/*
 * pause: the process that holds a pod sandbox's namespaces open.
 *
 * It sleeps until SIGINT or SIGTERM and reaps any child it inherits as PID 1
 * of the pod's PID namespace. Built with `gcc -static -Os` by hack/testimages.
 * It lives in its own directory: a .c file next to Go files would make the Go
 * package a cgo one.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#define VERSION "nodelet-test-pause-1"

static void on_shutdown(int sig)
{
	fprintf(stderr, "pause: shutting down, got signal %d\n", sig);
	exit(0);
}

static void on_child(int sig)
{
	int saved = errno;

	(void)sig;
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
	errno = saved;
}

static int handle(int sig, void (*fn)(int), int flags)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = fn;
	sa.sa_flags = flags;
	sigemptyset(&sa.sa_mask);
	return sigaction(sig, &sa, NULL);
}

int main(int argc, char **argv)
{
	if (argc > 1 && (strcmp(argv[1], "-v") == 0 || strcmp(argv[1], "--version") == 0)) {
		printf("%s\n", VERSION);
		return 0;
	}
	if (getpid() != 1)
		fprintf(stderr, "pause: warning: not running as PID 1\n");
	if (handle(SIGINT, on_shutdown, 0) < 0 || handle(SIGTERM, on_shutdown, 0) < 0 ||
	    handle(SIGCHLD, on_child, SA_NOCLDSTOP | SA_RESTART) < 0) {
		perror("pause: sigaction");
		return 1;
	}
	for (;;)
		pause();
}
