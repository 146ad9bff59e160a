// SPDX-License-Identifier: GPL-2.0
/*
 * The filter expression, in the spirit of tcpdump's:
 *
 *   expr      := and { ("or" | "||") and }
 *   and       := unary { ("and" | "&&") unary }
 *   unary     := ("not" | "!") unary | "(" expr ")" | primitive
 *   primitive := [src | dst] host ADDR | (src | dst) ADDR
 *              | [src | dst] net ADDR[/BITS]
 *              | [src | dst] port PORT | [src | dst] portrange PORT-PORT
 *              | (ip | ip6 | udp | tcp) [qualified primitive]
 *              | tgid N | cpu N | dev NAME
 *
 * A packet (journey) matches as its addresses, ports and protocol say;
 * tgid, cpu and dev match if any of its records has them. Other records
 * match tgid and cpu by their own; packet primitives are false for them.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <ctype.h>
#include <netdb.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "magnet-read.h"

enum kind { E_AND, E_OR, E_NOT, E_NET, E_PORT, E_FAMILY, E_PROTO, E_TGID,
	    E_CPU, E_DEV };
enum dir { D_ANY, D_SRC, D_DST };

struct expr {
	enum kind kind;
	enum dir dir;
	uint8_t family;			/* E_NET, E_FAMILY: AF_INET(6) */
	uint8_t addr[16];
	unsigned int prefix;		/* E_NET: bits compared */
	uint32_t lo, hi;		/* E_PORT; E_PROTO, E_TGID, E_CPU: lo */
	char dev[16];
	struct expr *l, *r;
	struct expr *made;		/* the parse's nodes, while it lasts */
};

/*
 * A parse: its words, and where a bad expression goes. fail() writes why
 * to @err and jumps back to expr_compile(), which frees what was made:
 * every node is on @nodes until the parse has succeeded, and @tmp holds
 * a word being taken apart.
 */
struct parser {
	char **tok;
	int n, i;
	struct expr *nodes, *root;
	char *tmp;
	char *err;
	size_t errlen;
	jmp_buf bad;
};

#define MAX_TOKENS	1024

static void __attribute__((noreturn)) fail(struct parser *p, const char *why)
{
	if (p->i < p->n)
		snprintf(p->err, p->errlen, "%s at \"%s\"", why, p->tok[p->i]);
	else
		snprintf(p->err, p->errlen, "%s at the end", why);
	longjmp(p->bad, 1);
}

static const char *peek(const struct parser *p)
{
	return p->i < p->n ? p->tok[p->i] : "";
}

static bool is(const struct parser *p, const char *a, const char *b)
{
	return p->i < p->n && (!strcmp(p->tok[p->i], a) ||
			       (b && !strcmp(p->tok[p->i], b)));
}

static struct expr *node(struct parser *p, enum kind kind, struct expr *l,
			 struct expr *r)
{
	struct expr *e = calloc(1, sizeof(*e));

	if (!e) {
		fprintf(stderr, PROG ": out of memory\n");
		exit(1);
	}
	e->kind = kind;
	e->l = l;
	e->r = r;
	e->made = p->nodes;
	p->nodes = e;
	return e;
}

/* A copy of the current word to take apart, freed by the parse. */
static char *word_copy(struct parser *p)
{
	free(p->tmp);
	p->tmp = strdup(peek(p));
	if (!p->tmp) {
		fprintf(stderr, PROG ": out of memory\n");
		exit(1);
	}
	return p->tmp;
}

static unsigned long number(struct parser *p, unsigned long max,
			    const char *what)
{
	char *end;
	unsigned long v;

	if (p->i >= p->n || !isdigit((unsigned char)peek(p)[0]))
		fail(p, what);
	v = strtoul(peek(p), &end, 10);
	if (*end || v > max)
		fail(p, what);
	p->i++;
	return v;
}

static bool parse_port(const char *s, const char *proto, uint32_t *port)
{
	struct servent *se;
	char *end;
	unsigned long v;

	if (isdigit((unsigned char)*s)) {
		v = strtoul(s, &end, 10);
		if (*end || v > 65535)
			return false;
		*port = v;
		return true;
	}
	se = getservbyname(s, proto);
	if (!se)
		return false;
	*port = ntohs(se->s_port);
	return true;
}

static struct expr *port_primitive(struct parser *p, enum dir dir, bool range)
{
	struct expr *e = node(p, E_PORT, NULL, NULL);
	char *s, *dash;

	if (p->i >= p->n)
		fail(p, range ? "expected PORT-PORT" : "expected a port");
	s = word_copy(p);
	e->dir = dir;
	if (range) {
		dash = strchr(s, '-');
		if (!dash)
			fail(p, "expected PORT-PORT");
		*dash = 0;
		if (!parse_port(s, NULL, &e->lo) ||
		    !parse_port(dash + 1, NULL, &e->hi) || e->lo > e->hi)
			fail(p, "bad port range");
	} else {
		if (!parse_port(s, NULL, &e->lo))
			fail(p, "not a port (0-65535 or a name in /etc/services)");
		e->hi = e->lo;
	}
	p->i++;
	return e;
}

static struct expr *net_node(struct parser *p, enum dir dir,
			     const struct host_addr *a, unsigned int prefix)
{
	struct expr *e = node(p, E_NET, NULL, NULL);

	e->dir = dir;
	e->family = a->family;
	memcpy(e->addr, a->addr, 16);
	e->prefix = prefix;
	return e;
}

/* host ADDR: a numeric address, or every address /etc/hosts gives it. */
static struct expr *host_primitive(struct parser *p, enum dir dir)
{
	struct host_addr a[16] = {};
	struct expr *e = NULL;
	int n;

	if (p->i >= p->n)
		fail(p, "expected an address");
	if (inet_pton(AF_INET, peek(p), a[0].addr) == 1) {
		a[0].family = AF_INET;
		n = 1;
	} else if (inet_pton(AF_INET6, peek(p), a[0].addr) == 1) {
		a[0].family = AF_INET6;
		n = 1;
	} else {
		n = hosts_lookup(peek(p), a, 16);
		if (n <= 0)
			fail(p, "not an IPv4 or IPv6 address, nor a name in /etc/hosts");
	}
	for (int i = 0; i < n; i++) {
		struct expr *h = net_node(p, dir, &a[i],
					  a[i].family == AF_INET ? 32 : 128);

		e = e ? node(p, E_OR, e, h) : h;
	}
	p->i++;
	return e;
}

static struct expr *net_primitive(struct parser *p, enum dir dir)
{
	struct host_addr a = {};
	char *s, *slash, *end;
	unsigned long bits;
	unsigned int max;

	if (p->i >= p->n)
		fail(p, "expected ADDRESS/BITS");
	s = word_copy(p);
	slash = strchr(s, '/');
	if (slash)
		*slash = 0;
	if (inet_pton(AF_INET, s, a.addr) == 1)
		a.family = AF_INET;
	else if (inet_pton(AF_INET6, s, a.addr) == 1)
		a.family = AF_INET6;
	else
		fail(p, "not an IPv4 or IPv6 network");
	max = a.family == AF_INET ? 32 : 128;
	bits = max;
	if (slash) {
		bits = strtoul(slash + 1, &end, 10);
		if (!slash[1] || *end || bits > max)
			fail(p, "bad prefix length");
	}
	p->i++;
	return net_node(p, dir, &a, bits);
}

static bool is_qualifier(const struct parser *p)
{
	return is(p, "src", "dst") || is(p, "host", "net") ||
	       is(p, "port", "portrange");
}

/* [src | dst] (host | net | port | portrange) ..., or src/dst ADDR */
static struct expr *qualified(struct parser *p)
{
	enum dir dir = D_ANY;

	if (is(p, "src", NULL) || is(p, "dst", NULL)) {
		dir = is(p, "src", NULL) ? D_SRC : D_DST;
		p->i++;
		if (!is_qualifier(p) || is(p, "src", "dst"))
			return host_primitive(p, dir);
	}
	if (is(p, "host", NULL)) {
		p->i++;
		return host_primitive(p, dir);
	}
	if (is(p, "net", NULL)) {
		p->i++;
		return net_primitive(p, dir);
	}
	if (is(p, "port", "portrange")) {
		bool range = is(p, "portrange", NULL);

		p->i++;
		return port_primitive(p, dir, range);
	}
	fail(p, "expected host, net, port or portrange");
}

static struct expr *primitive(struct parser *p)
{
	struct expr *e;

	if (p->i >= p->n)
		fail(p, "expected a primitive");
	if (is(p, "ip", "ip6")) {
		e = node(p, E_FAMILY, NULL, NULL);
		e->family = is(p, "ip", NULL) ? AF_INET : AF_INET6;
	} else if (is(p, "udp", "tcp")) {
		e = node(p, E_PROTO, NULL, NULL);
		e->lo = is(p, "udp", NULL) ? IPPROTO_UDP : IPPROTO_TCP;
	} else if (is(p, "tgid", "cpu")) {
		e = node(p, is(p, "tgid", NULL) ? E_TGID : E_CPU, NULL, NULL);
		p->i++;
		e->lo = number(p, UINT32_MAX, e->kind == E_TGID ?
			       "expected a process id" : "expected a CPU number");
		return e;
	} else if (is(p, "dev", NULL)) {
		e = node(p, E_DEV, NULL, NULL);
		p->i++;
		if (p->i >= p->n || strlen(peek(p)) >= sizeof(e->dev))
			fail(p, "expected a device name (at most 15 characters)");
		strcpy(e->dev, peek(p));
		p->i++;
		return e;
	} else if (is_qualifier(p)) {
		return qualified(p);
	} else {
		fail(p, "unknown primitive");
	}
	p->i++;
	/* "udp port 53", "ip6 host ::1": the protocol, and the rest */
	if (is_qualifier(p))
		e = node(p, E_AND, e, qualified(p));
	return e;
}

static struct expr *parse_or(struct parser *p);

static struct expr *unary(struct parser *p)
{
	struct expr *e;

	if (is(p, "not", "!")) {
		p->i++;
		return node(p, E_NOT, unary(p), NULL);
	}
	if (is(p, "(", NULL)) {
		p->i++;
		e = parse_or(p);
		if (!is(p, ")", NULL))
			fail(p, "expected \")\"");
		p->i++;
		return e;
	}
	return primitive(p);
}

static struct expr *parse_and(struct parser *p)
{
	struct expr *e = unary(p);

	while (is(p, "and", "&&")) {
		p->i++;
		e = node(p, E_AND, e, unary(p));
	}
	return e;
}

static struct expr *parse_or(struct parser *p)
{
	struct expr *e = parse_and(p);

	while (is(p, "or", "||")) {
		p->i++;
		e = node(p, E_OR, e, parse_and(p));
	}
	return e;
}

static void add_token(struct parser *p, const char *s, size_t len)
{
	if (p->n == MAX_TOKENS) {
		snprintf(p->err, p->errlen, "more than %d words", MAX_TOKENS);
		longjmp(p->bad, 1);
	}
	p->tok[p->n] = strndup(s, len);
	if (!p->tok[p->n]) {
		fprintf(stderr, PROG ": out of memory\n");
		exit(1);
	}
	p->n++;
}

/* Words, "(", ")", "!", "&&", "||": with or without spaces between. */
static void tokenize(struct parser *p, const char *s)
{
	while (*s) {
		size_t len = 0;

		if (isspace((unsigned char)*s)) {
			s++;
			continue;
		}
		if (*s == '(' || *s == ')' || *s == '!')
			len = 1;
		else if ((s[0] == '&' && s[1] == '&') ||
			 (s[0] == '|' && s[1] == '|'))
			len = 2;
		else
			while (s[len] && !isspace((unsigned char)s[len]) &&
			       !strchr("()!&|", s[len]))
				len++;
		if (!len)	/* a lone '&' or '|' */
			len = 1;
		add_token(p, s, len);
		s += len;
	}
}

static void free_nodes(struct expr *e)
{
	struct expr *next;

	for (; e; e = next) {
		next = e->made;
		free(e);
	}
}

int expr_compile(int argc, char **argv, const char *interface,
		 struct expr **out, char *err, size_t errlen)
{
	struct parser *p = calloc(1, sizeof(*p));
	int user, ret = -1;

	*out = NULL;
	if (!p || !(p->tok = calloc(MAX_TOKENS, sizeof(char *)))) {
		fprintf(stderr, PROG ": out of memory\n");
		exit(1);
	}
	p->err = err;
	p->errlen = errlen;
	if (setjmp(p->bad)) {
		free_nodes(p->nodes);
		goto out;
	}
	if (interface) {
		add_token(p, "dev", 3);
		add_token(p, interface, strlen(interface));
		if (argc) {
			add_token(p, "and", 3);
			add_token(p, "(", 1);
		}
	}
	user = p->n;
	for (int i = 0; i < argc; i++)
		tokenize(p, argv[i]);
	if (interface && argc)
		add_token(p, ")", 1);
	if (p->n == user && argc) {
		p->i = p->n;
		fail(p, "empty expression");
	}
	if (p->n) {
		p->root = parse_or(p);
		if (p->i < p->n)
			fail(p, is(p, ")", NULL) ? "unbalanced \")\"" :
				"expected and, or or the end");
	}
	*out = p->root;
	ret = 0;
out:
	for (int i = 0; i < p->n; i++)
		free(p->tok[i]);
	free(p->tok);
	free(p->tmp);
	free(p);
	return ret;
}

int expr_parse(int argc, char **argv, const char *interface,
	       struct expr **out)
{
	char err[512];

	if (expr_compile(argc, argv, interface, out, err, sizeof(err))) {
		fprintf(stderr, PROG ": bad filter expression: %s\n", err);
		exit(2);
	}
	return 0;
}

void expr_free(struct expr *e)
{
	if (!e)
		return;
	expr_free(e->l);
	expr_free(e->r);
	free(e);
}

/* --- matching --------------------------------------------------------------- */

struct subject {
	const struct journey *j;	/* a packet, or */
	const struct magnet_record *r;	/* another record */
};

static bool prefix_match(const uint8_t *a, const uint8_t *b, unsigned int bits)
{
	unsigned int bytes = bits / 8, rest = bits % 8;

	if (memcmp(a, b, bytes))
		return false;
	return !rest || !((a[bytes] ^ b[bytes]) & (0xff00 >> rest));
}

static bool match(const struct expr *e, const struct subject *s)
{
	const struct journey *j = s->j;

	switch (e->kind) {
	case E_AND:
		return match(e->l, s) && match(e->r, s);
	case E_OR:
		return match(e->l, s) || match(e->r, s);
	case E_NOT:
		return !match(e->l, s);
	case E_NET:
		if (!j || !j->have_addrs || j->family != e->family)
			return false;
		return (e->dir != D_DST &&
			prefix_match(j->saddr, e->addr, e->prefix)) ||
		       (e->dir != D_SRC &&
			prefix_match(j->daddr, e->addr, e->prefix));
	case E_PORT:
		if (!j || !j->have_addrs)
			return false;
		return (e->dir != D_DST && j->sport >= e->lo && j->sport <= e->hi) ||
		       (e->dir != D_SRC && j->dport >= e->lo && j->dport <= e->hi);
	case E_FAMILY:
		return j && j->family == e->family;
	case E_PROTO:
		return j && j->proto == e->lo;
	case E_TGID:
	case E_CPU:
		if (!j)
			return (e->kind == E_TGID ? s->r->tgid : s->r->cpu) == e->lo;
		for (unsigned int i = 0; i < j->nhops; i++)
			if ((e->kind == E_TGID ? j->hop[i].tgid : j->hop[i].cpu) == e->lo)
				return true;
		return false;
	case E_DEV:
		for (unsigned int i = 0; j && i < j->nhops; i++)
			if (!strcmp(j->hop[i].dev, e->dev))
				return true;
		return false;
	}
	return false;
}

bool expr_match_journey(const struct expr *e, const struct journey *j)
{
	struct subject s = { .j = j };

	return !e || match(e, &s);
}

bool expr_match_record(const struct expr *e, const struct magnet_record *r)
{
	struct subject s = { .r = r };

	return !e || match(e, &s);
}
