// SPDX-License-Identifier: GPL-2.0
/*
 * The web configuration enforced on libmicrohttpd's connections (see
 * webauth.h for what is enforced where).
 *
 * Lifetimes. A TLS connection's GnuTLS session points at the credentials
 * of the configuration in force when it was accepted, and GnuTLS takes no
 * reference: the connection holds one (struct conn, kept by http.c in the
 * connection's slot from webauth_opened() to webauth_closed(), however
 * the connection ends: answered, timed out, evicted for a newcomer or
 * past its request-timeout), dropped after libmicrohttpd has closed it
 * and freed its session, i.e. at the next call into this file (bury();
 * webauth_idle() after each run of the library), never from inside the
 * close notification, which libmicrohttpd may send before gnutls_deinit()
 * (0.9.75 does when it cannot watch a new connection).
 */
#define _GNU_SOURCE
#include <crypt.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <gnutls/crypto.h>

#include "magnetd.h"
#include "webauth.h"

#define BCRYPT_LEN	60
#define BCRYPT_MAX_PASS	72	/* bcrypt reads no further; Go refuses more */
#define HMAC_LEN	32

/* A TLS connection: the configuration whose credentials its session has. */
struct conn {
	struct webconfig *wc;
	bool checked;		/* client certificate, before request 1 */
	struct conn *next;	/* on webauth.closed */
};

/* A user's last good password, as HMAC-SHA-256(key, user NUL password). */
struct remembered {
	bool good;
	unsigned char mac[HMAC_LEN];
};

struct webauth {
	struct webconfig *wc;		/* in force; NULL: plain, no auth */
	struct webconfig *first;	/* libmicrohttpd keeps its PEM pointers */
	struct MHD_OptionItem opts[4];
	struct conn *closed;		/* to release (see the top) */

	struct remembered *passwords;	/* per user of wc */
	unsigned char key[HMAC_LEN];
	struct crypt_data *crypt;	/* bcrypt's work area, 32 KiB */
	int64_t budget_ns;		/* bcrypt's time left */
	uint64_t budget_at;		/* when it was last topped up */
};

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static bool same_bytes(const void *a, const void *b, size_t n)
{
	const volatile unsigned char *x = a, *y = b;
	unsigned char d = 0;
	size_t i;

	for (i = 0; i < n; i++)
		d |= x[i] ^ y[i];
	return !d;
}

static void bury(struct webauth *a)
{
	struct conn *c;

	while ((c = a->closed)) {
		a->closed = c->next;
		webconfig_put(c->wc);
		free(c);
	}
}

/* --- TLS sessions ---------------------------------------------------------- */

/*
 * libmicrohttpd has set the session up (its own credentials and
 * priorities) and starts the handshake at the connection's first read:
 * the configuration in force replaces them here.
 */
void webauth_opened(struct webauth *a, struct MHD_Connection *c, void **state)
{
	static const gnutls_certificate_request_t request[] = {
		[WEB_NO_CLIENT_CERT] = GNUTLS_CERT_IGNORE,
		[WEB_REQUEST_CLIENT_CERT] = GNUTLS_CERT_REQUEST,
		[WEB_REQUIRE_ANY_CLIENT_CERT] = GNUTLS_CERT_REQUIRE,
		[WEB_VERIFY_CLIENT_CERT_IF_GIVEN] = GNUTLS_CERT_REQUEST,
		[WEB_REQUIRE_AND_VERIFY_CLIENT_CERT] = GNUTLS_CERT_REQUIRE,
	};
	const union MHD_ConnectionInfo *info;
	gnutls_session_t s;
	struct conn *conn;

	*state = NULL;
	bury(a);
	info = MHD_get_connection_info(c, MHD_CONNECTION_INFO_GNUTLS_SESSION);
	s = info ? info->tls_session : NULL;
	if (!s || !a->wc || !a->wc->tls)
		return;		/* no context: its first request closes it */
	conn = calloc(1, sizeof(*conn));
	if (!conn)
		return;
	if (gnutls_priority_set(s, a->wc->prio) < 0 ||
	    gnutls_credentials_set(s, GNUTLS_CRD_CERTIFICATE,
				   a->wc->cred) < 0) {
		free(conn);
		return;
	}
	gnutls_certificate_server_set_request(s, request[a->wc->client_auth]);
	conn->wc = webconfig_get(a->wc);
	*state = conn;
}

/* Its session may not be freed yet: released at the next bury(). */
void webauth_closed(struct webauth *a, void **state)
{
	struct conn *conn = *state;

	if (conn) {
		conn->next = a->closed;
		a->closed = conn;
		*state = NULL;
	}
}

void webauth_idle(struct webauth *a)
{
	bury(a);
}

/* 0: the connection may go on; -1: close it. */
static int check_tls(struct webauth *a, struct MHD_Connection *c,
		     struct conn *conn)
{
	const union MHD_ConnectionInfo *info;
	gnutls_session_t s;
	void *cred = NULL;

	if (!conn)
		return -1;	/* never given the configuration's credentials */
	if (!webconfig_same_tls(conn->wc, a->wc))
		return -1;	/* reconnects under the settings in force */
	if (conn->checked)
		return 0;
	info = MHD_get_connection_info(c, MHD_CONNECTION_INFO_GNUTLS_SESSION);
	s = info ? info->tls_session : NULL;
	if (!s || gnutls_credentials_get(s, GNUTLS_CRD_CERTIFICATE, &cred) < 0 ||
	    cred != conn->wc->cred || webconfig_check_client(conn->wc, s))
		return -1;
	conn->checked = true;
	return 0;
}

/* --- basic authentication ------------------------------------------------- */

static void remember_mac(const struct webauth *a, const char *user,
			 const char *pass, unsigned char *mac)
{
	size_t ul = strlen(user), pl = strlen(pass);
	char buf[512 + BCRYPT_MAX_PASS + 2];

	if (ul > 512)
		ul = 512;
	memcpy(buf, user, ul);
	buf[ul] = '\0';
	memcpy(buf + ul + 1, pass, pl);
	if (gnutls_hmac_fast(GNUTLS_MAC_SHA256, a->key, sizeof(a->key), buf,
			     ul + 1 + pl, mac) < 0)
		memset(mac, 0, HMAC_LEN);	/* never equal: see remembered() */
	explicit_bzero(buf, sizeof(buf));
}

static bool remembered(const struct webauth *a, int u, const unsigned char *mac)
{
	static const unsigned char zero[HMAC_LEN];

	return u >= 0 && a->passwords[u].good &&
	       !same_bytes(mac, zero, HMAC_LEN) &&
	       same_bytes(mac, a->passwords[u].mac, HMAC_LEN);
}

/* May bcrypt run now? Topped up at 1/WEBAUTH_BCRYPT_SHARE of the time. */
static bool budget_left(struct webauth *a, uint64_t now)
{
	int64_t max = WEBAUTH_BCRYPT_BURST_MS * 1000000LL;

	a->budget_ns += (int64_t)(now - a->budget_at) / WEBAUTH_BCRYPT_SHARE;
	if (a->budget_ns > max)
		a->budget_ns = max;
	a->budget_at = now;
	return a->budget_ns > 0;
}

/* @pass against user @u's hash (u < 0: no such user; no match, same time) */
static bool bcrypt_matches(struct webauth *a, int u, const char *pass)
{
	const char *hash = a->wc->users[u < 0 ? 0 : u].hash;
	uint64_t t0 = mono_ns(), t1;
	const char *out;
	bool ok;

	if (!a->crypt) {
		a->crypt = calloc(1, sizeof(*a->crypt));
		if (!a->crypt)
			return false;
	}
	out = crypt_r(pass, hash, a->crypt);
	ok = u >= 0 && out && strlen(out) == BCRYPT_LEN &&
	     same_bytes(out, hash, BCRYPT_LEN);
	t1 = mono_ns();
	a->budget_ns -= (int64_t)(t1 - t0);
	explicit_bzero(a->crypt, sizeof(*a->crypt));
	return ok;
}

static int check_user(struct webauth *a, struct MHD_Connection *c,
		      const char **why)
{
	const struct webconfig *wc = a->wc;
	unsigned char mac[HMAC_LEN];
	char *user, *pass = NULL;
	int status = MHD_HTTP_UNAUTHORIZED, u = -1;
	unsigned int i;

	*why = "magnetd: authentication required\n";
	user = MHD_basic_auth_get_username_password(c, &pass);
	if (!user || !pass || strlen(pass) > BCRYPT_MAX_PASS)
		goto out;
	for (i = 0; i < wc->nusers; i++)
		if (!strcmp(user, wc->users[i].name))
			u = i;
	remember_mac(a, user, pass, mac);
	if (remembered(a, u, mac)) {
		status = 0;
		goto out;
	}
	if (!budget_left(a, mono_ns())) {
		status = MHD_HTTP_SERVICE_UNAVAILABLE;
		*why = "magnetd: too many password checks; try again in a second\n";
		goto out;
	}
	if (bcrypt_matches(a, u, pass)) {
		/* only what bcrypt accepted is remembered */
		a->passwords[u].good = true;
		memcpy(a->passwords[u].mac, mac, HMAC_LEN);
		status = 0;
	}
out:
	explicit_bzero(mac, sizeof(mac));
	if (pass) {
		explicit_bzero(pass, strlen(pass));
		MHD_free(pass);
	}
	if (user)
		MHD_free(user);
	return status;
}

int webauth_check(struct webauth *a, struct MHD_Connection *c, void *state,
		  const char **why)
{
	*why = "";
	bury(a);
	if (!a->wc)
		return 0;
	if (a->wc->tls && check_tls(a, c, state))
		return -1;
	return a->wc->nusers ? check_user(a, c, why) : 0;
}

void webauth_decorate(const struct webauth *a, struct MHD_Response *r,
		      unsigned int status)
{
	unsigned int i;

	for (i = 0; a->wc && i < a->wc->nheaders; i++)
		MHD_add_response_header(r, a->wc->headers[i].name,
					a->wc->headers[i].value);
	if (status == MHD_HTTP_UNAUTHORIZED)
		MHD_add_response_header(r, MHD_HTTP_HEADER_WWW_AUTHENTICATE,
					"Basic realm=\"" WEBAUTH_REALM "\", charset=\"UTF-8\"");
	else if (status == MHD_HTTP_SERVICE_UNAVAILABLE)
		MHD_add_response_header(r, MHD_HTTP_HEADER_RETRY_AFTER, "1");
}

/* --- the configuration in force ------------------------------------------- */

static int set_users(struct webauth *a, const struct webconfig *wc)
{
	struct remembered *p = NULL;

	if (wc && wc->nusers) {
		p = calloc(wc->nusers, sizeof(*p));
		if (!p)
			return -1;
	}
	free(a->passwords);
	a->passwords = p;
	return 0;
}

/* What @wc asks for, in the log; and a warning for passwords in clear. */
static void describe(const struct webconfig *wc)
{
	if (!wc)
		return;
	if (wc->tls)
		log_info("prometheus: %s: TLS (%s), %s", wc->file,
			 webconfig_client_auth_name(wc->client_auth),
			 wc->nusers ? "basic authentication" :
				      "no basic authentication");
	else if (wc->nusers)
		log_warn("prometheus: %s: basic authentication without TLS: passwords cross the network in clear",
			 wc->file);
	else
		log_info("prometheus: %s: no TLS, no basic authentication",
			 wc->file);
}

struct webauth *webauth_new(struct webconfig *wc)
{
	struct webauth *a;

	if (wc && wc->tls && MHD_is_feature_supported(MHD_FEATURE_TLS) != MHD_YES) {
		log_error("prometheus: %s asks for TLS, which this libmicrohttpd was built without",
			  wc->file);
		return NULL;
	}
	a = calloc(1, sizeof(*a));
	if (!a || set_users(a, wc) ||
	    gnutls_rnd(GNUTLS_RND_KEY, a->key, sizeof(a->key)) < 0) {
		log_error("prometheus: out of memory or randomness");
		free(a);
		return NULL;
	}
	a->wc = webconfig_get(wc);
	a->first = webconfig_get(wc);
	a->budget_ns = WEBAUTH_BCRYPT_BURST_MS * 1000000LL;
	a->budget_at = mono_ns();
	describe(wc);
	return a;
}

void webauth_free(struct webauth *a)
{
	if (!a)
		return;
	bury(a);
	webconfig_put(a->wc);
	webconfig_put(a->first);
	free(a->passwords);
	free(a->crypt);
	explicit_bzero(a->key, sizeof(a->key));
	free(a);
}

bool webauth_tls(const struct webauth *a)
{
	return a->wc && a->wc->tls;
}

unsigned int webauth_mhd_flags(const struct webauth *a)
{
	return webauth_tls(a) ? MHD_USE_TLS : 0;
}

struct MHD_OptionItem *webauth_mhd_options(struct webauth *a)
{
	struct MHD_OptionItem *o = a->opts;

	if (webauth_tls(a)) {
		*o++ = (struct MHD_OptionItem){ MHD_OPTION_HTTPS_MEM_KEY, 0,
						a->wc->key_pem };
		*o++ = (struct MHD_OptionItem){ MHD_OPTION_HTTPS_MEM_CERT, 0,
						a->wc->cert_pem };
		*o++ = (struct MHD_OptionItem){ MHD_OPTION_HTTPS_PRIORITIES, 0,
						a->wc->priorities };
	}
	*o = (struct MHD_OptionItem){ MHD_OPTION_END, 0, NULL };
	return a->opts;
}

int webauth_update(struct webauth *a, struct webconfig *wc)
{
	bool tls = wc && wc->tls;

	bury(a);
	if (tls != webauth_tls(a)) {
		log_warn("prometheus: %s would turn TLS %s; that takes a restart: keeping the web configuration in force",
			 wc ? wc->file : "no web configuration",
			 tls ? "on" : "off");
		return -1;
	}
	if (set_users(a, wc)) {
		log_error("prometheus: out of memory: keeping the web configuration in force");
		return -1;
	}
	webconfig_put(a->wc);
	a->wc = webconfig_get(wc);
	describe(wc);
	return 0;
}
