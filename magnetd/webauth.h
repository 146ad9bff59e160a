/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Who may use magnetd's HTTP endpoint, at run time: the web configuration
 * in force (webconfig.h) applied to libmicrohttpd's connections by http.c.
 *
 *  - TLS: libmicrohttpd (GnuTLS) is started with the configuration's key
 *    and certificate; as each connection is accepted, before its
 *    handshake, its GnuTLS session is given the credentials (key, chain,
 *    client CAs, client certificate policy) and priorities of the
 *    configuration in force then, which it keeps, so that a reload
 *    changes certificates without a restart. A connection made under
 *    other TLS settings than those in force is closed at its next
 *    request; its client connects again.
 *  - Client certificates: required and verified in the handshake as the
 *    configuration says; checked again before a connection's first
 *    request (a session that did not get the configuration's credentials
 *    is closed, not served).
 *  - Basic authentication: every request, against the users in force
 *    (401 with WWW-Authenticate otherwise). A password is checked by
 *    libcrypt's bcrypt (tens of ms at cost 10, in the event loop); a user's
 *    last good password is remembered as an HMAC under a key drawn at
 *    start, so a scrape costs an HMAC. Only passwords bcrypt accepted are
 *    remembered. bcrypt may take at most a quarter of the loop's time
 *    (WEBAUTH_BCRYPT_SHARE, in bursts of at most WEBAUTH_BCRYPT_BURST_MS):
 *    beyond it a password that is not remembered gets 503 and
 *    Retry-After, so that wrong passwords sent in a loop cannot stall the
 *    daemon, nor lock out a client whose password is remembered.
 */
#ifndef MAGNETD_WEBAUTH_H
#define MAGNETD_WEBAUTH_H

#include <stdbool.h>

#include <microhttpd.h>

#include "webconfig.h"

#define WEBAUTH_REALM		"magnetd"
#define WEBAUTH_BCRYPT_SHARE	4	/* at most 1/4 of the time */
#define WEBAUTH_BCRYPT_BURST_MS	500

struct webauth;

/*
 * @wc (NULL: plain HTTP, no authentication) in force, a reference taken.
 * NULL (logged) if it needs TLS and libmicrohttpd has none.
 */
struct webauth *webauth_new(struct webconfig *wc);
/* After MHD_stop_daemon(): connections hold configurations. */
void webauth_free(struct webauth *a);

bool webauth_tls(const struct webauth *a);
/*
 * For MHD_start_daemon(): flags to add, and an MHD_OPTION_ARRAY (no
 * notifier: the library has one, http.c's, which calls the two below).
 */
unsigned int webauth_mhd_flags(const struct webauth *a);
struct MHD_OptionItem *webauth_mhd_options(struct webauth *a);

/*
 * Connection @c accepted (the library's STARTED notice, before any TLS
 * handshake): under TLS its session gets the credentials and priorities
 * in force, and *@state (kept by the caller for the connection, passed to
 * webauth_check()) what they are checked against later; NULL if it could
 * not (its first request closes it).
 */
void webauth_opened(struct webauth *a, struct MHD_Connection *c, void **state);
/*
 * Its CLOSED notice, however it ended: *@state is released (at the next
 * call into webauth, once the library has freed the session) and NULLed.
 */
void webauth_closed(struct webauth *a, void **state);
/* After each run of the library: what closed connections held is freed. */
void webauth_idle(struct webauth *a);

/*
 * @wc (or NULL) in force from now on, for every later request. -1
 * (logged, nothing changed) if it would turn TLS on or off, which only a
 * restart does.
 */
int webauth_update(struct webauth *a, struct webconfig *wc);

/*
 * May this request be served? 0 yes; an HTTP status to refuse it with,
 * @why saying why in a line for the body (401 no or bad credentials, 503
 * bcrypt's share used up); or -1: close the connection unanswered.
 */
int webauth_check(struct webauth *a, struct MHD_Connection *c, void *state,
		  const char **why);

/* The configured headers, and what goes with @status (WWW-Authenticate). */
void webauth_decorate(const struct webauth *a, struct MHD_Response *r,
		      unsigned int status);

#endif /* MAGNETD_WEBAUTH_H */
