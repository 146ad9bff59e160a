// SPDX-License-Identifier: GPL-2.0
/*
 * The devices -i names and -D lists. A live capture's -i must name a
 * device of some network namespace, of a process or named in /run/netns:
 * magnet sees every namespace's packets, so a container's device is one
 * to select. -D lists this namespace's devices, and "any". (-r's files
 * name devices of elsewhere: not checked.)
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <net/if.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "magnet-read.h"

/* -D: what -i can name: every device, and "any". */
void list_interfaces(void)
{
	struct if_nameindex *ifs = if_nameindex(), *i;
	unsigned int n = 1;

	printf("%u.any (every device; packets as tcpdump -i any sees them)\n", n++);
	for (i = ifs; i && i->if_name; i++)
		printf("%u.%s\n", n++, i->if_name);
	if (ifs)
		if_freenameindex(ifs);
}

/*
 * Is there a device @name in network namespace @path ("": this one)?
 * In a child, which enters it: magnet sees every namespace's packets,
 * so a device of another namespace (a container's) is one to select.
 */
static bool device_in(const char *path, const char *name)
{
	pid_t pid = fork();
	int status;

	if (pid < 0)
		return false;
	if (!pid) {
		int fd = *path ? open(path, O_RDONLY | O_CLOEXEC) : -1;

		if (*path && (fd < 0 || setns(fd, CLONE_NEWNET)))
			_exit(1);
		_exit(if_nametoindex(name) ? 0 : 1);
	}
	return waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
	       !WEXITSTATUS(status);
}

/* Is there a device @name in any network namespace (of a process, or named)? */
static bool device_anywhere(const char *name)
{
	static const char *const dirs[] = { "/proc", "/run/netns" };
	ino_t *seen = NULL;
	size_t nseen = 0;
	bool found = device_in("", name);

	for (size_t d = 0; d < 2 && !found; d++) {
		DIR *dir = opendir(dirs[d]);
		struct dirent *e;

		while (dir && !found && (e = readdir(dir))) {
			char path[300];
			struct stat st;
			size_t i;

			if (d == 0 && (e->d_name[0] < '1' || e->d_name[0] > '9'))
				continue;
			if (e->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), d == 0 ? "%s/%s/ns/net" : "%s/%s",
				 dirs[d], e->d_name);
			if (stat(path, &st))
				continue;
			for (i = 0; i < nseen && seen[i] != st.st_ino; i++)
				;
			if (i < nseen)
				continue;	/* a namespace looked in already */
			seen = realloc(seen, (nseen + 1) * sizeof(*seen));
			if (!seen)
				bad_usage("out of memory");
			seen[nseen++] = st.st_ino;
			found = device_in(path, name);
		}
		if (dir)
			closedir(dir);
	}
	free(seen);
	return found;
}

/*
 * A live capture's -i: each device must be one, in some namespace
 * (tcpdump: "No such device exists"). Files name devices of elsewhere.
 */
int check_devices(const struct options *o)
{
	for (unsigned int i = 0; i < o->ninterfaces; i++) {
		if (!strcmp(o->interfaces[i], "any") ||
		    device_anywhere(o->interfaces[i]))
			continue;
		fprintf(stderr, PROG ": %s: no such device (in any network namespace; see -D)\n",
			o->interfaces[i]);
		return -1;
	}
	return 0;
}
