/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The web configuration of magnetd's HTTP endpoint: TLS and basic
 * authentication, from a YAML file in the format of the Prometheus
 * exporter toolkit (node_exporter's --web.config.file), so that a file
 * written for an exporter works here unchanged for the keys magnetd has:
 *
 *	tls_server_config:
 *	  cert_file: server.crt		# or cert: PEM text
 *	  key_file: server.key		# or key: PEM text
 *	  client_auth_type: RequireAndVerifyClientCert
 *	  client_ca_file: ca.crt	# or client_ca: PEM text
 *	  min_version: TLS12		# TLS10 .. TLS13, default TLS12
 *	  max_version: TLS13		# default TLS13
 *	  prefer_server_cipher_suites: true
 *	http_server_config:
 *	  http2: true			# accepted; the endpoint is HTTP/1.1
 *	  headers:			# added to every answer
 *	    X-Content-Type-Options: nosniff
 *	basic_auth_users:
 *	  prometheus: $2y$10$...	# bcrypt ($2a$, $2b$, $2y$)
 *
 * Relative file names are taken from the web configuration file's
 * directory, as the toolkit does. A key magnetd does not know is an
 * error naming it, and so are the toolkit's keys it does not implement
 * (cipher_suites, curve_preferences, client_allowed_sans, rate_limit):
 * each restricts who may connect or how, and ignoring one would serve
 * more than its author allowed.
 *
 * webconfig_load() reads and checks a whole file, the certificate, key
 * and client CAs it names included, into an immutable, reference-counted
 * struct webconfig; webauth.c enforces it. A file with any problem gives
 * no webconfig at all, so a caller keeps the one it had.
 */
#ifndef MAGNETD_WEBCONFIG_H
#define MAGNETD_WEBCONFIG_H

#include <stdbool.h>
#include <stddef.h>

#include <gnutls/gnutls.h>

#define WEBCONFIG_DIGEST	32	/* SHA-256 */
#define WEBCONFIG_HEADERS_MAX	5	/* the toolkit's list */

/* tls_server_config's client_auth_type: Go's crypto/tls ClientAuthType */
enum web_client_auth {
	WEB_NO_CLIENT_CERT,			/* none asked for */
	WEB_REQUEST_CLIENT_CERT,		/* asked for, not checked */
	WEB_REQUIRE_ANY_CLIENT_CERT,		/* required, not checked */
	WEB_VERIFY_CLIENT_CERT_IF_GIVEN,	/* checked if sent */
	WEB_REQUIRE_AND_VERIFY_CLIENT_CERT,	/* required and checked */
};

struct web_user {
	char *name;
	char hash[61];		/* "$2b$10$" + 22 salt + 31 hash */
};

struct web_header {
	const char *name;	/* one of the toolkit's */
	char *value;
};

struct webconfig {
	unsigned int refs;
	char *file;

	/* TLS (tls false: plain HTTP, none of these set) */
	bool tls;
	char *cert_pem, *key_pem;	/* for libmicrohttpd's start */
	char *priorities;		/* GnuTLS's, from the versions */
	enum web_client_auth client_auth;
	gnutls_certificate_credentials_t cred;	/* key, chain, client CAs */
	gnutls_priority_t prio;
	/* all of the above: connections made under other TLS settings */
	unsigned char tls_digest[WEBCONFIG_DIGEST];

	unsigned int nusers;		/* 0: no basic authentication */
	struct web_user *users;
	unsigned int nheaders;
	struct web_header headers[WEBCONFIG_HEADERS_MAX];
};

/*
 * Read and check @file. On error returns NULL after writing one line per
 * problem to @err (up to @errlen bytes): "FILE:LINE: what is wrong", or
 * "FILE: ..." where no line applies, naming the certificate or key file
 * when the problem is there. The new webconfig holds one reference.
 */
struct webconfig *webconfig_load(const char *file, char *err, size_t errlen);
struct webconfig *webconfig_get(struct webconfig *wc);
void webconfig_put(struct webconfig *wc);

/*
 * A TLS connection's client certificate against @wc's client_auth_type
 * (what the handshake already enforced): 0 if it passes, else -1.
 */
int webconfig_check_client(const struct webconfig *wc, gnutls_session_t s);

/* Both plain HTTP, or both TLS with the same settings (NULL: plain). */
bool webconfig_same_tls(const struct webconfig *a, const struct webconfig *b);

/* "NoClientCert" ... as the file spells it */
const char *webconfig_client_auth_name(enum web_client_auth ca);

#endif /* MAGNETD_WEBCONFIG_H */
