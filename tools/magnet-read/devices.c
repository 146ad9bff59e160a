// SPDX-License-Identifier: GPL-2.0
/*
 * The devices -i names and -D lists. magnet sees every network
 * namespace's packets, so a container's device is one to select: a live
 * capture's -i must name a device of some namespace, of a process or
 * named in /run/netns, and -D lists the devices of every namespace it
 * can enter (as root: all), with their flags, as tcpdump -D lists its
 * own. (-r's files name devices of elsewhere: not checked.)
 *
 * A namespace's devices are read in a child that enters it (setns()),
 * which writes them to a pipe: a device's index and flags are those of
 * its own namespace.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "magnet-read.h"

_Static_assert(IF_NAMESIZE == 16, "read_devices() reads names of 15 bytes");

/* A network namespace, and where it was found. */
struct netns {
	char path[300];			/* to enter it; "": this process's */
	dev_t dev;
	ino_t ino;
	char label[320];		/* "": the initial namespace */
};

/* A device of one. */
struct device {
	char name[IF_NAMESIZE];
	unsigned int ifindex;
	unsigned int flags;		/* IFF_* */
	const struct netns *ns;
};

struct devices {
	struct netns *ns;
	unsigned int nns;
	struct device *dev;
	unsigned int ndev;
};

static void *grow(void *p, size_t n, size_t size)
{
	p = realloc(p, n * size);
	if (!p) {
		fprintf(stderr, PROG ": out of memory\n");
		exit(1);
	}
	return p;
}

/*
 * Namespace @path (labelled @label), unless it is one of @d's already:
 * those found first keep their label, so a namespace named in
 * /run/netns is named so, whichever process is in it.
 */
static void add_netns(struct devices *d, const char *path, const char *label)
{
	struct netns *ns;
	struct stat st;

	if (stat(path, &st))
		return;
	for (unsigned int i = 0; i < d->nns; i++)
		if (d->ns[i].dev == st.st_dev && d->ns[i].ino == st.st_ino)
			return;
	d->ns = grow(d->ns, d->nns + 1, sizeof(*d->ns));
	ns = &d->ns[d->nns++];
	snprintf(ns->path, sizeof(ns->path), "%s", path);
	snprintf(ns->label, sizeof(ns->label), "%s", label);
	ns->dev = st.st_dev;
	ns->ino = st.st_ino;
}

/*
 * Every network namespace: the initial one (PID 1's; where that cannot
 * be seen, not being root, this process's stands for it), those named in
 * /run/netns, and those of every process (this one's among them).
 */
static void find_netns(struct devices *d)
{
	struct stat self;
	DIR *dir;
	struct dirent *e;
	char path[300], label[320];

	add_netns(d, "/proc/1/ns/net", "");
	if (!d->nns)
		add_netns(d, "/proc/self/ns/net", "");
	dir = opendir("/run/netns");
	while (dir && (e = readdir(dir))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/run/netns/%s", e->d_name);
		snprintf(label, sizeof(label), "netns %s", e->d_name);
		add_netns(d, path, label);
	}
	if (dir)
		closedir(dir);
	dir = opendir("/proc");
	while (dir && (e = readdir(dir))) {
		char comm[32] = "";
		FILE *f;

		if (e->d_name[0] < '1' || e->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/comm", e->d_name);
		f = fopen(path, "r");
		if (f) {
			if (fgets(comm, sizeof(comm), f))
				comm[strcspn(comm, "\n")] = 0;
			fclose(f);
		}
		snprintf(path, sizeof(path), "/proc/%s/ns/net", e->d_name);
		snprintf(label, sizeof(label), "netns of pid %s: %s",
			 e->d_name, comm);
		add_netns(d, path, label);
	}
	if (dir)
		closedir(dir);
	/* This process's own: read without entering it. */
	if (!stat("/proc/self/ns/net", &self))
		for (unsigned int i = 0; i < d->nns; i++)
			if (d->ns[i].dev == self.st_dev &&
			    d->ns[i].ino == self.st_ino)
				d->ns[i].path[0] = 0;
}

/* In the child, in the namespace: each device as "INDEX FLAGS NAME". */
static void write_devices(FILE *f)
{
	struct if_nameindex *ifs = if_nameindex(), *i;
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	for (i = ifs; i && i->if_name; i++) {
		struct ifreq ifr = {};

		snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", i->if_name);
		if (s < 0 || ioctl(s, SIOCGIFFLAGS, &ifr))
			ifr.ifr_flags = 0;
		fprintf(f, "%u %u %s\n", i->if_index,
			(unsigned int)(unsigned short)ifr.ifr_flags, i->if_name);
	}
	if (ifs)
		if_freenameindex(ifs);
}

/* The devices of namespace @ns, added to @d; none if it cannot be entered. */
static void read_devices(struct devices *d, const struct netns *ns)
{
	unsigned int ifindex, flags;
	char name[IF_NAMESIZE + 1];	/* (%16s below) */
	int fds[2], status;
	FILE *f;
	pid_t pid;

	if (pipe2(fds, O_CLOEXEC))
		return;
	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		close(fds[0]);
		close(fds[1]);
		return;
	}
	if (!pid) {
		int fd = *ns->path ? open(ns->path, O_RDONLY | O_CLOEXEC) : -1;

		close(fds[0]);
		if (*ns->path && (fd < 0 || setns(fd, CLONE_NEWNET)))
			_exit(1);
		f = fdopen(fds[1], "w");
		if (!f)
			_exit(1);
		write_devices(f);
		_exit(fclose(f) ? 1 : 0);
	}
	close(fds[1]);
	f = fdopen(fds[0], "r");
	while (f && fscanf(f, "%u %u %16s", &ifindex, &flags, name) == 3) {
		struct device *dev;

		d->dev = grow(d->dev, d->ndev + 1, sizeof(*d->dev));
		dev = &d->dev[d->ndev++];
		snprintf(dev->name, sizeof(dev->name), "%.15s", name);
		dev->ifindex = ifindex;
		dev->flags = flags;
		dev->ns = ns;
	}
	if (f)
		fclose(f);
	else
		close(fds[0]);
	waitpid(pid, &status, 0);
}

/* Every device of every namespace (initial namespace first). */
static void all_devices(struct devices *d)
{
	find_netns(d);
	for (unsigned int i = 0; i < d->nns; i++)
		read_devices(d, &d->ns[i]);
}

static void free_devices(struct devices *d)
{
	free(d->ns);
	free(d->dev);
}

/*
 * -D: what -i can name: "any", then every device of every namespace, as
 * tcpdump -D lists them ("1.eth0 [Up, Running]"), with its index, and
 * its namespace when it is not the initial one.
 */
void list_interfaces(void)
{
	static const struct {
		unsigned int flag;
		const char *name;
	} flags[] = {
		{ IFF_UP, "Up" },
		{ IFF_RUNNING, "Running" },
		{ IFF_LOOPBACK, "Loopback" },
	};
	struct devices d = {};
	unsigned int n = 1;

	all_devices(&d);
	printf("%u.any (every device; packets as tcpdump -i any sees them)\n", n++);
	for (unsigned int i = 0; i < d.ndev; i++) {
		const struct device *dev = &d.dev[i];
		const char *sep = "";

		printf("%u.%s (ifindex %u%s%s) [", n++, dev->name, dev->ifindex,
		       *dev->ns->label ? ", " : "", dev->ns->label);
		for (size_t k = 0; k < sizeof(flags) / sizeof(flags[0]); k++)
			if (dev->flags & flags[k].flag) {
				printf("%s%s", sep, flags[k].name);
				sep = ", ";
			}
		printf("%s]\n", *sep ? "" : "none");
	}
	free_devices(&d);
}

/*
 * A live capture's -i: each device must be one, in some namespace
 * (tcpdump: "No such device exists"). Files name devices of elsewhere.
 */
int check_devices(const struct options *o)
{
	struct devices d = {};
	int ret = 0;

	for (unsigned int i = 0; i < o->ninterfaces && !ret; i++) {
		unsigned int k;

		if (!strcmp(o->interfaces[i], "any"))
			continue;
		if (!d.nns)
			all_devices(&d);
		for (k = 0; k < d.ndev; k++)
			if (!strcmp(d.dev[k].name, o->interfaces[i]))
				break;
		if (k < d.ndev)
			continue;
		fprintf(stderr, PROG ": %s: no such device (in any network namespace; see -D)\n",
			o->interfaces[i]);
		ret = -1;
	}
	free_devices(&d);
	return ret;
}
