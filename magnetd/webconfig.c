// SPDX-License-Identifier: GPL-2.0
/*
 * The web configuration file (format in webconfig.h), read with libyaml's
 * document API and checked as a whole: the tree is walked once, every
 * problem reported with the line of the key it is about, then the files
 * it names are read and handed to GnuTLS, which checks them (the key
 * matches the certificate, the client CAs parse, the versions give a
 * priority string it accepts). Nothing of a file with a problem is kept.
 *
 * What the toolkit's Go code does that is kept here: relative file names
 * from the file's directory; a TLS section without both a certificate and
 * a key is an error; client CAs without a client_auth_type that asks for
 * a certificate are an error; default versions TLS 1.2 to 1.3; bcrypt
 * hashes checked at load. Stricter here: a client_auth_type that verifies
 * needs client CAs (Go would fall back on the system's roots), a key
 * both inline and as a file is an error (Go takes the file), and so is
 * any TLS setting without a certificate (Go would serve plain HTTP).
 */
#define _GNU_SOURCE		/* asprintf() */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>
#include <gnutls/x509.h>
#include <yaml.h>

#include "webconfig.h"

#define WEB_FILE_MAX	(1L << 20)	/* bytes of YAML, or of one PEM file */
#define BCRYPT_LEN	60

/* --- reporting ----------------------------------------------------------- */

struct loader {
	const char *file;
	char *dir;			/* of @file, for relative names */
	yaml_document_t *doc;
	struct webconfig *wc;		/* being filled */
	char *err;
	size_t errlen, used;
	unsigned int errors;

	/* tls_server_config, as given (NULL: not given) */
	int tls_line;			/* 0: no TLS key at all */
	const char *cert_file, *key_file, *ca_file;
	const char *cert, *key, *ca;
	const char *client_auth;
	int cert_line, key_line, ca_line, auth_line, version_line;
	int min_version, max_version;	/* 0 .. 3: TLS 1.0 .. 1.3 */
	bool prefer_server;
};

static void __attribute__((format(printf, 3, 4)))
report(struct loader *ld, int line, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	int n;

	ld->errors++;
	if (!ld->err || ld->used + 1 >= ld->errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (line > 0)
		n = snprintf(ld->err + ld->used, ld->errlen - ld->used,
			     "%s:%d: %s\n", ld->file, line, msg);
	else
		n = snprintf(ld->err + ld->used, ld->errlen - ld->used,
			     "%s: %s\n", ld->file, msg);
	if (n < 0)
		return;
	if ((size_t)n >= ld->errlen - ld->used) {
		/* cut, still ending in a newline */
		ld->used = ld->errlen - 1;
		ld->err[ld->errlen - 2] = '\n';
	} else {
		ld->used += n;
	}
}

/* libyaml's marks count from 0 */
static int line_of(const yaml_node_t *n)
{
	return n ? (int)n->start_mark.line + 1 : 0;
}

/* --- reading files ------------------------------------------------------- */

/* All of @path, NUL-terminated, at most WEB_FILE_MAX bytes; NULL + errno. */
static char *read_text(const char *path, size_t *lenp)
{
	struct stat st;
	char *buf = NULL;
	size_t len = 0;
	ssize_t n;
	int fd, e;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) < 0)
		goto fail;
	if (S_ISDIR(st.st_mode)) {
		errno = EISDIR;
		goto fail;
	}
	buf = malloc(WEB_FILE_MAX + 1);
	if (!buf)
		goto fail;
	while ((n = read(fd, buf + len, WEB_FILE_MAX + 1 - len)) > 0) {
		len += n;
		if (len > WEB_FILE_MAX) {
			errno = EFBIG;
			goto fail;
		}
	}
	if (n < 0)
		goto fail;
	close(fd);
	buf[len] = '\0';
	if (lenp)
		*lenp = len;
	return buf;
fail:
	e = errno;
	if (buf)
		explicit_bzero(buf, len);
	free(buf);
	close(fd);
	errno = e;
	return NULL;
}

static void free_secret(char *s)
{
	if (s)
		explicit_bzero(s, strlen(s));
	free(s);
}

/* @name relative to the web configuration file's directory */
static char *resolve(const struct loader *ld, const char *name)
{
	char *path;

	if (name[0] == '/' || !ld->dir)
		return strdup(name);
	if (asprintf(&path, "%s/%s", ld->dir, name) < 0)
		return NULL;
	return path;
}

/*
 * The PEM text of @key: given inline (@text) or in a file (@file), not
 * both, or NULL (reported).
 */
static char *pem(struct loader *ld, int line, const char *key,
		 const char *text, const char *file)
{
	char *path, *s;

	if (text && file) {
		report(ld, line, "tls_server_config: %s and %s_file are both given; keep one",
		       key, key);
		return NULL;
	}
	if (text) {
		s = strdup(text);
		if (!s)
			report(ld, line, "out of memory");
		return s;
	}
	path = resolve(ld, file);
	if (!path) {
		report(ld, line, "out of memory");
		return NULL;
	}
	s = read_text(path, NULL);
	if (!s)
		report(ld, line, "tls_server_config: %s_file %s: %s", key,
		       path, errno == EFBIG ? "larger than 1 MiB" :
						strerror(errno));
	free(path);
	return s;
}

/* --- YAML values --------------------------------------------------------- */

static const char *scalar(const yaml_node_t *n)
{
	return n && n->type == YAML_SCALAR_NODE ?
	       (const char *)n->data.scalar.value : NULL;
}

/* "key:" with nothing, "~" or "null": not given, as Go's yaml reads it */
static bool is_null(const yaml_node_t *n)
{
	static const char *const nulls[] = { "", "~", "null", "Null", "NULL" };
	unsigned int i;

	if (!n || n->type != YAML_SCALAR_NODE ||
	    n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
		return false;
	for (i = 0; i < sizeof(nulls) / sizeof(nulls[0]); i++)
		if (!strcmp(scalar(n), nulls[i]))
			return true;
	return false;
}

/* A string value (a scalar with no NUL inside), or NULL (reported). */
static const char *string_value(struct loader *ld, const char *ctx,
				const char *key, const yaml_node_t *v)
{
	const char *s = scalar(v);

	if (!s) {
		report(ld, line_of(v), "%s: %s is not a string", ctx, key);
		return NULL;
	}
	if (strlen(s) != v->data.scalar.length) {
		report(ld, line_of(v), "%s: %s has a NUL byte", ctx, key);
		return NULL;
	}
	return s;
}

/* YAML 1.1's booleans, as Go's yaml.v2 takes them */
static int bool_value(struct loader *ld, const char *ctx, const char *key,
		      const yaml_node_t *v, bool *b)
{
	static const char *const yes[] = { "true", "True", "TRUE", "yes",
					   "Yes", "YES", "on", "On", "ON" };
	static const char *const no[] = { "false", "False", "FALSE", "no",
					  "No", "NO", "off", "Off", "OFF" };
	const char *s = scalar(v);
	unsigned int i;

	for (i = 0; s && i < sizeof(yes) / sizeof(yes[0]); i++) {
		if (!strcmp(s, yes[i])) {
			*b = true;
			return 0;
		}
		if (!strcmp(s, no[i])) {
			*b = false;
			return 0;
		}
	}
	report(ld, line_of(v), "%s: %s is not true or false", ctx, key);
	return -1;
}

/*
 * Walk a mapping: @fn(ld, key, value) per pair, after checking that the
 * key is a string not seen before in it. A null value counts as absent.
 */
typedef void (*pair_fn)(struct loader *ld, const char *key,
			const yaml_node_t *k, const yaml_node_t *v);

static void walk(struct loader *ld, const char *ctx, const yaml_node_t *map,
		 pair_fn fn)
{
	const yaml_node_pair_t *p, *q;
	const yaml_node_t *k, *v;
	const char *key;

	if (is_null(map))
		return;
	if (map->type != YAML_MAPPING_NODE) {
		report(ld, line_of(map), "%s: not a mapping of keys to values",
		       ctx);
		return;
	}
	for (p = map->data.mapping.pairs.start;
	     p < map->data.mapping.pairs.top; p++) {
		k = yaml_document_get_node(ld->doc, p->key);
		v = yaml_document_get_node(ld->doc, p->value);
		key = scalar(k);
		if (!key) {
			report(ld, line_of(k), "%s: a key that is not a string",
			       ctx);
			continue;
		}
		for (q = map->data.mapping.pairs.start; q < p; q++)
			if (scalar(yaml_document_get_node(ld->doc, q->key)) &&
			    !strcmp(key, scalar(yaml_document_get_node(ld->doc,
								       q->key))))
				break;
		if (q < p) {
			report(ld, line_of(k), "%s: %s is given twice", ctx,
			       key);
			continue;
		}
		if (!is_null(v))
			fn(ld, key, k, v);
	}
}

/* --- tls_server_config --------------------------------------------------- */

static const char *const client_auth_names[] = {
	[WEB_NO_CLIENT_CERT] = "NoClientCert",
	[WEB_REQUEST_CLIENT_CERT] = "RequestClientCert",
	[WEB_REQUIRE_ANY_CLIENT_CERT] = "RequireAnyClientCert",
	[WEB_VERIFY_CLIENT_CERT_IF_GIVEN] = "VerifyClientCertIfGiven",
	[WEB_REQUIRE_AND_VERIFY_CLIENT_CERT] = "RequireAndVerifyClientCert",
};

const char *webconfig_client_auth_name(enum web_client_auth ca)
{
	return client_auth_names[ca];
}

static int parse_client_auth(const char *s)
{
	unsigned int i;

	if (!strcmp(s, "RequireClientCert"))	/* the toolkit's old name */
		return WEB_REQUIRE_ANY_CLIENT_CERT;
	for (i = 0; i < sizeof(client_auth_names) / sizeof(*client_auth_names);
	     i++)
		if (!strcmp(s, client_auth_names[i]))
			return i;
	return -1;
}

static const char *const versions[] = { "TLS10", "TLS11", "TLS12", "TLS13" };

static int parse_version(const char *s)
{
	unsigned int i;

	for (i = 0; i < sizeof(versions) / sizeof(*versions); i++)
		if (!strcmp(s, versions[i]))
			return i;
	return -1;
}

/* Keys of the toolkit that magnetd refuses rather than ignores, and why. */
static const struct {
	const char *key, *why;
} unsupported[] = {
	{ "cipher_suites", "GnuTLS's default suites are used" },
	{ "curve_preferences", "GnuTLS's default groups are used" },
	{ "client_allowed_sans", "a verified client certificate is enough" },
	{ "rate_limit", "magnetd does not limit request rates" },
};

static bool refuse_unsupported(struct loader *ld, const char *ctx,
			       const char *key, const yaml_node_t *k)
{
	unsigned int i;

	for (i = 0; i < sizeof(unsupported) / sizeof(*unsupported); i++)
		if (!strcmp(key, unsupported[i].key)) {
			report(ld, line_of(k), "%s%s%s is not supported by magnetd (%s); remove it",
			       ctx ? ctx : "", ctx ? ": " : "", key,
			       unsupported[i].why);
			return true;
		}
	return false;
}

static void tls_pair(struct loader *ld, const char *key, const yaml_node_t *k,
		     const yaml_node_t *v)
{
	static const char ctx[] = "tls_server_config";
	const char *s = NULL;
	int i;

	if (refuse_unsupported(ld, ctx, key, k))
		return;
	if (!strcmp(key, "prefer_server_cipher_suites")) {
		bool_value(ld, ctx, key, v, &ld->prefer_server);
		ld->tls_line = ld->tls_line ?: line_of(k);
		return;
	}
	if (strcmp(key, "cert_file") && strcmp(key, "key_file") &&
	    strcmp(key, "client_ca_file") && strcmp(key, "cert") &&
	    strcmp(key, "key") && strcmp(key, "client_ca") &&
	    strcmp(key, "client_auth_type") && strcmp(key, "min_version") &&
	    strcmp(key, "max_version")) {
		report(ld, line_of(k), "%s: unknown key %s", ctx, key);
		return;
	}
	s = string_value(ld, ctx, key, v);
	ld->tls_line = ld->tls_line ?: line_of(k);
	if (!s || !*s)		/* "" is not given, as in Go */
		return;
	if (!strcmp(key, "cert_file") || !strcmp(key, "cert")) {
		*(strcmp(key, "cert") ? &ld->cert_file : &ld->cert) = s;
		ld->cert_line = line_of(k);
	} else if (!strcmp(key, "key_file") || !strcmp(key, "key")) {
		*(strcmp(key, "key") ? &ld->key_file : &ld->key) = s;
		ld->key_line = line_of(k);
	} else if (!strcmp(key, "client_ca_file") || !strcmp(key, "client_ca")) {
		*(strcmp(key, "client_ca") ? &ld->ca_file : &ld->ca) = s;
		ld->ca_line = line_of(k);
	} else if (!strcmp(key, "client_auth_type")) {
		ld->auth_line = line_of(k);
		ld->client_auth = s;
		if (parse_client_auth(s) < 0)
			report(ld, line_of(v), "%s: client_auth_type '%s' is not one of NoClientCert, RequestClientCert, RequireAnyClientCert, VerifyClientCertIfGiven, RequireAndVerifyClientCert",
			       ctx, s);
	} else {
		i = parse_version(s);
		if (i < 0)
			report(ld, line_of(v), "%s: %s '%s' is not one of TLS10, TLS11, TLS12, TLS13",
			       ctx, key, s);
		else if (!strcmp(key, "min_version"))
			ld->min_version = i;
		else
			ld->max_version = i;
		ld->version_line = line_of(k);
	}
}

/* --- http_server_config -------------------------------------------------- */

/* The toolkit's headers, and the values it allows (NULL: any). */
static const struct {
	const char *name;
	const char *values[3];
} header_names[WEBCONFIG_HEADERS_MAX] = {
	{ "Strict-Transport-Security", { NULL } },
	{ "X-Content-Type-Options", { "nosniff" } },
	{ "X-Frame-Options", { "deny", "sameorigin" } },
	{ "X-XSS-Protection", { NULL } },
	{ "Content-Security-Policy", { NULL } },
};

static void header_pair(struct loader *ld, const char *key,
			const yaml_node_t *k, const yaml_node_t *v)
{
	static const char ctx[] = "http_server_config: headers";
	struct webconfig *wc = ld->wc;
	const char *s = string_value(ld, ctx, key, v);
	unsigned int i, j;

	for (i = 0; i < WEBCONFIG_HEADERS_MAX; i++)
		if (!strcmp(key, header_names[i].name))
			break;
	if (i == WEBCONFIG_HEADERS_MAX) {
		report(ld, line_of(k), "%s: %s cannot be configured (only Strict-Transport-Security, X-Content-Type-Options, X-Frame-Options, X-XSS-Protection, Content-Security-Policy)",
		       ctx, key);
		return;
	}
	if (!s)
		return;
	for (j = 0; s[j]; j++)
		if ((unsigned char)s[j] < 0x20 || s[j] == 0x7f) {
			report(ld, line_of(v), "%s: %s has a control character",
			       ctx, key);
			return;
		}
	if (header_names[i].values[0]) {
		for (j = 0; j < 3 && header_names[i].values[j]; j++)
			if (!strcmp(s, header_names[i].values[j]))
				break;
		if (j == 3 || !header_names[i].values[j]) {
			report(ld, line_of(v), "%s: %s '%s' is not %s%s%s", ctx,
			       key, s, header_names[i].values[0],
			       header_names[i].values[1] ? " or " : "",
			       header_names[i].values[1] ?: "");
			return;
		}
	}
	if (!*s)		/* "unset if blank" */
		return;
	wc->headers[wc->nheaders].name = header_names[i].name;
	wc->headers[wc->nheaders].value = strdup(s);
	if (!wc->headers[wc->nheaders].value)
		report(ld, 0, "out of memory");
	else
		wc->nheaders++;
}

static void http_pair(struct loader *ld, const char *key, const yaml_node_t *k,
		      const yaml_node_t *v)
{
	bool b;

	if (!strcmp(key, "http2"))	/* HTTP/1.1 only, either way */
		bool_value(ld, "http_server_config", key, v, &b);
	else if (!strcmp(key, "headers"))
		walk(ld, "http_server_config: headers", v, header_pair);
	else
		report(ld, line_of(k), "http_server_config: unknown key %s",
		       key);
}

/* --- basic_auth_users ---------------------------------------------------- */

static bool bcrypt_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == '.' || c == '/';
}

/* "$2a$", "$2b$" or "$2y$", a cost of 04 to 31, "$", 53 characters */
static bool bcrypt_hash(const char *h)
{
	unsigned int i, cost;

	if (strlen(h) != BCRYPT_LEN || h[0] != '$' || h[1] != '2' ||
	    (h[2] != 'a' && h[2] != 'b' && h[2] != 'y') || h[3] != '$' ||
	    h[4] < '0' || h[4] > '3' || h[5] < '0' || h[5] > '9' ||
	    h[6] != '$')
		return false;
	cost = (h[4] - '0') * 10 + (h[5] - '0');
	if (cost < 4 || cost > 31)
		return false;
	for (i = 7; i < BCRYPT_LEN; i++)
		if (!bcrypt_char(h[i]))
			return false;
	return true;
}

static void user_pair(struct loader *ld, const char *key, const yaml_node_t *k,
		      const yaml_node_t *v)
{
	static const char ctx[] = "basic_auth_users";
	struct webconfig *wc = ld->wc;
	const char *hash = string_value(ld, ctx, key, v);
	struct web_user *u;

	if (!*key || strchr(key, ':')) {
		report(ld, line_of(k), "%s: user name '%s' is empty or has a ':' (basic authentication cannot send it)",
		       ctx, key);
		return;
	}
	if (!hash)
		return;
	if (!bcrypt_hash(hash)) {
		report(ld, line_of(v), "%s: the password of '%s' is not a bcrypt hash ($2a$, $2b$ or $2y$, cost 04 to 31, 60 characters: htpasswd -nBC 10 \"\")",
		       ctx, key);
		return;
	}
	u = &wc->users[wc->nusers];
	u->name = strdup(key);
	if (!u->name) {
		report(ld, 0, "out of memory");
		return;
	}
	memcpy(u->hash, hash, BCRYPT_LEN + 1);
	wc->nusers++;
}

/* --- the whole file ------------------------------------------------------ */

static void root_pair(struct loader *ld, const char *key, const yaml_node_t *k,
		      const yaml_node_t *v)
{
	struct webconfig *wc = ld->wc;

	if (refuse_unsupported(ld, NULL, key, k))
		return;
	if (!strcmp(key, "tls_server_config")) {
		walk(ld, key, v, tls_pair);
	} else if (!strcmp(key, "http_server_config")) {
		walk(ld, key, v, http_pair);
	} else if (!strcmp(key, "basic_auth_users")) {
		if (v->type == YAML_MAPPING_NODE) {
			wc->users = calloc(v->data.mapping.pairs.top -
					   v->data.mapping.pairs.start + 1,
					   sizeof(*wc->users));
			if (!wc->users) {
				report(ld, 0, "out of memory");
				return;
			}
		}
		walk(ld, key, v, user_pair);
	} else {
		report(ld, line_of(k), "unknown key %s (magnetd knows tls_server_config, http_server_config, basic_auth_users)",
		       key);
	}
}

/*
 * Parse @text into @doc, which the caller deletes (the strings the walk
 * keeps point into it), and walk it. -1: no document to delete.
 */
static int parse(struct loader *ld, const char *text, size_t len,
		 yaml_document_t *doc)
{
	yaml_parser_t parser;
	yaml_document_t more;
	yaml_node_t *root;

	if (!yaml_parser_initialize(&parser)) {
		report(ld, 0, "out of memory");
		return -1;
	}
	yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
	if (!yaml_parser_load(&parser, doc)) {
		report(ld, (int)parser.problem_mark.line + 1, "not YAML: %s%s%s",
		       parser.problem ?: "error", parser.context ? " " : "",
		       parser.context ?: "");
		yaml_parser_delete(&parser);
		return -1;
	}
	ld->doc = doc;
	root = yaml_document_get_root_node(doc);
	if (root) {
		walk(ld, "the file", root, root_pair);
		if (!yaml_parser_load(&parser, &more)) {
			report(ld, (int)parser.problem_mark.line + 1, "not YAML: %s",
			       parser.problem ?: "error");
		} else {
			if (yaml_document_get_root_node(&more))
				report(ld, line_of(yaml_document_get_root_node(&more)),
				       "a second YAML document; the file must hold one");
			yaml_document_delete(&more);
		}
	}
	yaml_parser_delete(&parser);
	return 0;
}

/* --- TLS: credentials and priorities -------------------------------------- */

/* The client certificate's purpose, when it names one: TLS client. */
static const gnutls_typed_vdata_st client_purpose[] = {
	{ .type = GNUTLS_DT_KEY_PURPOSE_OID,
	  .data = (unsigned char *)GNUTLS_KP_TLS_WWW_CLIENT },
};

/*
 * The client's certificate against the client CAs: by GnuTLS in the
 * handshake (the functions below, on the credentials), and again by
 * webauth.c before a connection's first request.
 */
static int check_client(gnutls_session_t s, bool required, bool verify)
{
	unsigned int n = 0, status = 0;

	if (!gnutls_certificate_get_peers(s, &n) || !n)
		return required ? -1 : 0;
	if (!verify)
		return 0;
	if (gnutls_certificate_verify_peers(s, (gnutls_typed_vdata_st *)
					    client_purpose, 1, &status) < 0 ||
	    status)
		return -1;
	return 0;
}

static int verify_required(gnutls_session_t s)
{
	return check_client(s, true, true);
}

static int verify_if_given(gnutls_session_t s)
{
	return check_client(s, false, true);
}

int webconfig_check_client(const struct webconfig *wc, gnutls_session_t s)
{
	switch (wc->client_auth) {
	case WEB_REQUIRE_ANY_CLIENT_CERT:
		return check_client(s, true, false);
	case WEB_VERIFY_CLIENT_CERT_IF_GIVEN:
		return check_client(s, false, true);
	case WEB_REQUIRE_AND_VERIFY_CLIENT_CERT:
		return check_client(s, true, true);
	default:
		return 0;
	}
}

/* The file a PEM came from, or what says it was inline, for messages. */
static char *source(const struct loader *ld, const char *key, const char *file)
{
	char *s;

	if (file)
		return resolve(ld, file);
	if (asprintf(&s, "%s (inline)", key) < 0)
		return NULL;
	return s;
}

static void digest_str(gnutls_hash_hd_t h, const char *s)
{
	size_t len = s ? strlen(s) : 0;

	gnutls_hash(h, &len, sizeof(len));
	if (len)
		gnutls_hash(h, s, len);
}

static void tls_digest(struct webconfig *wc, const char *ca_pem)
{
	gnutls_hash_hd_t h;
	uint32_t auth = wc->client_auth;

	if (gnutls_hash_init(&h, GNUTLS_DIG_SHA256) < 0) {
		/* no digest: every reload counts as a change */
		memset(wc->tls_digest, 0xff, sizeof(wc->tls_digest));
		return;
	}
	digest_str(h, wc->cert_pem);
	digest_str(h, wc->key_pem);
	digest_str(h, ca_pem);
	digest_str(h, wc->priorities);
	gnutls_hash(h, &auth, sizeof(auth));
	gnutls_hash_deinit(h, wc->tls_digest);
}

/* What the TLS keys say, checked together, into credentials. */
static void build_tls(struct loader *ld)
{
	static const char *const vers[] = { "+VERS-TLS1.0", "+VERS-TLS1.1",
					    "+VERS-TLS1.2", "+VERS-TLS1.3" };
	struct webconfig *wc = ld->wc;
	char prio[160], *ca_pem = NULL, *what = NULL, *what2 = NULL;
	gnutls_datum_t cert, key, ca;
	const char *errpos = NULL;
	int auth, ret, v;
	size_t n;

	if (!ld->tls_line)
		return;		/* plain HTTP */
	auth = ld->client_auth ? parse_client_auth(ld->client_auth) :
				 WEB_NO_CLIENT_CERT;
	if (!ld->cert && !ld->cert_file)
		report(ld, ld->tls_line, "tls_server_config: no cert_file (or cert): TLS needs the server's certificate and key");
	if (!ld->key && !ld->key_file)
		report(ld, ld->tls_line, "tls_server_config: no key_file (or key): TLS needs the server's certificate and key");
	if ((ld->ca || ld->ca_file) && auth == WEB_NO_CLIENT_CERT)
		report(ld, ld->ca_line, "tls_server_config: client CAs are given but client_auth_type is NoClientCert (to verify clients: RequireAndVerifyClientCert)");
	if (!ld->ca && !ld->ca_file &&
	    (auth == WEB_VERIFY_CLIENT_CERT_IF_GIVEN ||
	     auth == WEB_REQUIRE_AND_VERIFY_CLIENT_CERT))
		report(ld, ld->auth_line, "tls_server_config: client_auth_type %s needs client_ca_file (or client_ca): the CAs that client certificates are verified against",
		       ld->client_auth);
	if (ld->min_version > ld->max_version)
		report(ld, ld->version_line, "tls_server_config: min_version %s is above max_version %s",
		       versions[ld->min_version], versions[ld->max_version]);
	if (ld->errors)
		return;

	wc->tls = true;
	wc->client_auth = auth;
	wc->cert_pem = pem(ld, ld->cert_line, "cert", ld->cert, ld->cert_file);
	wc->key_pem = pem(ld, ld->key_line, "key", ld->key, ld->key_file);
	if (ld->ca || ld->ca_file)
		ca_pem = pem(ld, ld->ca_line, "client_ca", ld->ca, ld->ca_file);
	if (ld->errors)
		goto out;

	ret = gnutls_certificate_allocate_credentials(&wc->cred);
	if (ret < 0) {
		wc->cred = NULL;
		report(ld, 0, "GnuTLS: %s", gnutls_strerror(ret));
		goto out;
	}
	cert = (gnutls_datum_t){ (unsigned char *)wc->cert_pem,
				 strlen(wc->cert_pem) };
	key = (gnutls_datum_t){ (unsigned char *)wc->key_pem,
				strlen(wc->key_pem) };
	ret = gnutls_certificate_set_x509_key_mem2(wc->cred, &cert, &key,
						   GNUTLS_X509_FMT_PEM, NULL, 0);
	if (ret < 0) {
		what = source(ld, "cert", ld->cert_file);
		what2 = source(ld, "key", ld->key_file);
		report(ld, ld->key_line > ld->cert_line ? ld->key_line :
							  ld->cert_line,
		       "tls_server_config: the certificate %s and key %s: %s",
		       what ?: "", what2 ?: "", gnutls_strerror(ret));
	}
	if (ca_pem) {
		ca = (gnutls_datum_t){ (unsigned char *)ca_pem, strlen(ca_pem) };
		ret = gnutls_certificate_set_x509_trust_mem(wc->cred, &ca,
							    GNUTLS_X509_FMT_PEM);
		if (ret <= 0) {
			free(what);
			what = source(ld, "client_ca", ld->ca_file);
			report(ld, ld->ca_line, "tls_server_config: client CAs %s: %s",
			       what ?: "", ret < 0 ? gnutls_strerror(ret) :
						     "no PEM certificate in it");
		}
	}
	if (auth == WEB_REQUIRE_AND_VERIFY_CLIENT_CERT)
		gnutls_certificate_set_verify_function(wc->cred,
						       verify_required);
	else if (auth == WEB_VERIFY_CLIENT_CERT_IF_GIVEN)
		gnutls_certificate_set_verify_function(wc->cred,
						       verify_if_given);

	/* the versions allowed, in GnuTLS's defaults otherwise */
	n = snprintf(prio, sizeof(prio), "NORMAL:-VERS-ALL");
	for (v = ld->max_version; v >= ld->min_version; v--)
		n += snprintf(prio + n, sizeof(prio) - n, ":%s", vers[v]);
	if (ld->prefer_server)
		snprintf(prio + n, sizeof(prio) - n, ":%%SERVER_PRECEDENCE");
	wc->priorities = strdup(prio);
	ret = wc->priorities ? gnutls_priority_init2(&wc->prio, prio, &errpos,
						     0) :
			       GNUTLS_E_MEMORY_ERROR;
	if (ret < 0) {
		wc->prio = NULL;
		report(ld, ld->version_line, "tls_server_config: GnuTLS refuses the versions (\"%s\" at \"%s\"): %s",
		       prio, errpos ?: "", gnutls_strerror(ret));
	}
	tls_digest(wc, ca_pem);
out:
	free(what);
	free(what2);
	free(ca_pem);
}

/* --- loading ------------------------------------------------------------- */

static void webconfig_free(struct webconfig *wc)
{
	unsigned int i;

	for (i = 0; i < wc->nusers; i++)
		free(wc->users[i].name);
	free(wc->users);
	for (i = 0; i < wc->nheaders; i++)
		free(wc->headers[i].value);
	if (wc->cred)
		gnutls_certificate_free_credentials(wc->cred);
	if (wc->prio)
		gnutls_priority_deinit(wc->prio);
	free(wc->cert_pem);
	free_secret(wc->key_pem);
	free(wc->priorities);
	free(wc->file);
	free(wc);
}

struct webconfig *webconfig_load(const char *file, char *err, size_t errlen)
{
	struct loader ld = {
		.file = file, .err = err, .errlen = errlen,
		.min_version = 2, .max_version = 3,	/* TLS12, TLS13 */
		.prefer_server = true,
	};
	yaml_document_t doc;
	char *text, *slash;
	bool have_doc;
	size_t len;

	if (err && errlen)
		err[0] = '\0';
	ld.wc = calloc(1, sizeof(*ld.wc));
	ld.dir = strdup(file);
	if (!ld.wc || !ld.dir) {
		report(&ld, 0, "out of memory");
		goto fail;
	}
	ld.wc->refs = 1;
	ld.wc->file = strdup(file);
	slash = strrchr(ld.dir, '/');
	if (slash)
		slash[slash == ld.dir] = '\0';	/* "/x.yml": "/" */
	else
		strcpy(ld.dir, ".");
	text = read_text(file, &len);
	if (!text) {
		report(&ld, 0, "%s", errno == EFBIG ? "larger than 1 MiB" :
						       strerror(errno));
		goto fail;
	}
	have_doc = parse(&ld, text, len, &doc) == 0;
	if (!ld.errors)
		build_tls(&ld);
	if (have_doc)
		yaml_document_delete(&doc);
	explicit_bzero(text, len);	/* inline keys */
	free(text);
	if (ld.errors || !ld.wc->file)
		goto fail;
	free(ld.dir);
	return ld.wc;
fail:
	if (!ld.errors)
		report(&ld, 0, "out of memory");
	if (ld.wc)
		webconfig_free(ld.wc);
	free(ld.dir);
	return NULL;
}

struct webconfig *webconfig_get(struct webconfig *wc)
{
	if (wc)
		wc->refs++;
	return wc;
}

void webconfig_put(struct webconfig *wc)
{
	if (wc && !--wc->refs)
		webconfig_free(wc);
}

bool webconfig_same_tls(const struct webconfig *a, const struct webconfig *b)
{
	bool ta = a && a->tls, tb = b && b->tls;

	if (!ta || !tb)
		return ta == tb;
	return !memcmp(a->tls_digest, b->tls_digest, sizeof(a->tls_digest));
}
