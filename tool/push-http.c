/* SPDX-License-Identifier: MIT */
/*
 * tool/push-http.c - the ingest request, through libcurl (HTTP, TLS with the system's
 * CAs or --cacert, authentication, time-outs: nothing hand-written).
 *
 * libcurl is loaded with dlopen on the first push, not linked: linking it makes the
 * dynamic loader map and relocate libcurl and its 30-odd dependencies (OpenSSL, nghttp2,
 * libssh2, LDAP, Kerberos, ...) at every start of every perfkit command, ~10 ms
 * measured here, where the tool is linked against static archives precisely to start
 * fast (tool/CMakeLists.txt). The header comes from Debian's libcurl4-openssl-dev (the
 * build dependency); the library from libcurl4, or the GnuTLS flavour.
 */
#include <curl/curl.h>
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "push.h"

static struct {
	void *dl;
	CURLcode (*global_init)(long);
	CURL *(*easy_init)(void);
	CURLcode (*easy_setopt)(CURL *, CURLoption, ...);
	CURLcode (*easy_perform)(CURL *);
	CURLcode (*easy_getinfo)(CURL *, CURLINFO, ...);
	void (*easy_cleanup)(CURL *);
	void (*easy_reset)(CURL *);
	const char *(*easy_strerror)(CURLcode);
	curl_mime *(*mime_init)(CURL *);
	curl_mimepart *(*mime_addpart)(curl_mime *);
	CURLcode (*mime_name)(curl_mimepart *, const char *);
	CURLcode (*mime_filename)(curl_mimepart *, const char *);
	CURLcode (*mime_type)(curl_mimepart *, const char *);
	CURLcode (*mime_data)(curl_mimepart *, const char *, size_t);
	void (*mime_free)(curl_mime *);
	struct curl_slist *(*slist_append)(struct curl_slist *, const char *);
	void (*slist_free_all)(struct curl_slist *);
} C;

int push_http_global_init(char *why, size_t len)
{
	if (C.dl)
		return 0;
	static const char *const names[] = { "libcurl.so.4", "libcurl-gnutls.so.4", "libcurl.so" };
	void *dl = NULL;
	for (size_t i = 0; !dl && i < sizeof(names) / sizeof(names[0]); i++)
		dl = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
	if (!dl) {
		snprintf(why, len, "cannot load libcurl (%s): install libcurl4", dlerror());
		return -1;
	}
	/* dlsym returns void *; the cast through a union keeps -Wpedantic quiet */
#define SYM(field, name)                                                       \
	do {                                                                       \
		union { void *p; __typeof__(C.field) f; } u_ = { dlsym(dl, name) }; \
		if (!u_.p) {                                                       \
			snprintf(why, len, "libcurl lacks %s (too old?)", name);   \
			dlclose(dl);                                               \
			return -1;                                                 \
		}                                                                  \
		C.field = u_.f;                                                    \
	} while (0)
	SYM(global_init, "curl_global_init");
	SYM(easy_init, "curl_easy_init");
	SYM(easy_setopt, "curl_easy_setopt");
	SYM(easy_perform, "curl_easy_perform");
	SYM(easy_getinfo, "curl_easy_getinfo");
	SYM(easy_cleanup, "curl_easy_cleanup");
	SYM(easy_reset, "curl_easy_reset");
	SYM(easy_strerror, "curl_easy_strerror");
	SYM(mime_init, "curl_mime_init");
	SYM(mime_addpart, "curl_mime_addpart");
	SYM(mime_name, "curl_mime_name");
	SYM(mime_filename, "curl_mime_filename");
	SYM(mime_type, "curl_mime_type");
	SYM(mime_data, "curl_mime_data");
	SYM(mime_free, "curl_mime_free");
	SYM(slist_append, "curl_slist_append");
	SYM(slist_free_all, "curl_slist_free_all");
#undef SYM
	/* not thread-safe in older libcurl: here, before any pusher thread exists */
	CURLcode rc = C.global_init(CURL_GLOBAL_ALL);
	if (rc != CURLE_OK) {
		snprintf(why, len, "curl_global_init: %s", C.easy_strerror(rc));
		dlclose(dl);
		return -1;
	}
	C.dl = dl;
	return 0;
}

struct push_http {
	const struct tool_push_opts *o;
	CURL *h;
	char *url;              /* the server's URL, without /ingest or /profiles/writeraw */
	size_t url_len;
	char *auth_header;      /* "Authorization: Bearer ..." */
	char *tenant_header;
	char resp[512];         /* the start of the response body */
	size_t resp_len;
	char errbuf[CURL_ERROR_SIZE];
};

struct push_http *push_http_new(const struct tool_push_opts *o)
{
	struct push_http *c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->o = o;
	c->h = C.easy_init ? C.easy_init() : NULL;
	const char *u = o->url;
	size_t n = strlen(u);
	while (n && u[n - 1] == '/')
		n--;
	/* the server's root: an endpoint given in full is taken off (each format has its
	 * own, appended per request) */
	static const char *const ends[] = { "/ingest", "/profiles/writeraw" };
	for (size_t i = 0; i < 2; i++) {
		size_t el = strlen(ends[i]);
		if (n >= el && !memcmp(u + n - el, ends[i], el))
			n -= el;
	}
	c->url = malloc(n + 1);
	if (o->bearer && asprintf(&c->auth_header, "Authorization: Bearer %s", o->bearer) < 0)
		c->auth_header = NULL;
	if (o->tenant && asprintf(&c->tenant_header, "X-Scope-OrgID: %s", o->tenant) < 0)
		c->tenant_header = NULL;
	if (!c->h || !c->url || (o->bearer && !c->auth_header) || (o->tenant && !c->tenant_header)) {
		push_http_free(c);
		return NULL;
	}
	memcpy(c->url, u, n);
	c->url_len = n;
	c->url[n] = '\0';
	return c;
}

void push_http_free(struct push_http *c)
{
	if (!c)
		return;
	if (c->h)
		C.easy_cleanup(c->h);
	free(c->url);
	free(c->auth_header);
	free(c->tenant_header);
	free(c);
}

/* the response body: its start is kept for messages, the rest is read and dropped */
static size_t on_body(char *data, size_t size, size_t nmemb, void *ctx)
{
	struct push_http *c = ctx;
	size_t n = size * nmemb;
	size_t room = sizeof(c->resp) - 1 - c->resp_len;
	size_t k = n < room ? n : room;
	memcpy(c->resp + c->resp_len, data, k);
	c->resp_len += k;
	return n;
}

/* printable text of the server's reply, one line */
static void reply_text(struct push_http *c, char *out, size_t len)
{
	size_t j = 0;
	for (size_t i = 0; i < c->resp_len && j + 1 < len; i++) {
		unsigned char ch = (unsigned char)c->resp[i];
		out[j++] = ch >= 0x20 && ch < 0x7f ? (char)ch : ' ';
	}
	while (j && out[j - 1] == ' ')
		j--;
	out[j] = '\0';
}

static enum push_outcome curl_outcome(CURLcode rc)
{
	switch (rc) {
	case CURLE_UNSUPPORTED_PROTOCOL:
	case CURLE_URL_MALFORMAT:
	case CURLE_SSL_CACERT_BADFILE:
	case CURLE_SSL_CERTPROBLEM:
	case CURLE_PEER_FAILED_VERIFICATION:
	case CURLE_SSL_ENGINE_NOTFOUND:
	case CURLE_SSL_CIPHER:
	case CURLE_NOT_BUILT_IN:
	case CURLE_OUT_OF_MEMORY:
		return PUSH_FATAL;
	default:
		/* refused, unreachable, resolving, time-out, reset, empty reply: the server
		 * may be back later */
		return PUSH_RETRY;
	}
}

enum push_outcome push_http_send(struct push_http *c, const char *query, const void *body,
				 size_t len, enum push_format fmt, struct push_reply *r)
{
	const struct tool_push_opts *o = c->o;
	r->status = 0;
	r->msg[0] = '\0';
	char *url;
	int un = fmt == PUSH_PARCA ? asprintf(&url, "%s/profiles/writeraw", c->url)
				   : asprintf(&url, "%s/ingest?%s", c->url, query);
	if (un < 0) {
		snprintf(r->msg, sizeof(r->msg), "out of memory");
		return PUSH_RETRY;
	}

	CURL *h = c->h;
	C.easy_reset(h);
	c->resp_len = 0;
	c->errbuf[0] = '\0';
	struct curl_slist *hdr = NULL;
	curl_mime *mime = NULL;
	C.easy_setopt(h, CURLOPT_URL, url);
	C.easy_setopt(h, CURLOPT_NOSIGNAL, 1L);       /* a thread of a process with signals */
	C.easy_setopt(h, CURLOPT_ERRORBUFFER, c->errbuf);
	C.easy_setopt(h, CURLOPT_USERAGENT, "perfkit/" PK_VERSION_STRING);
	C.easy_setopt(h, CURLOPT_TIMEOUT_MS, (long)o->timeout_ms);
	C.easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS,
		      (long)(o->timeout_ms < 10000 ? o->timeout_ms : 10000));
	C.easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
	C.easy_setopt(h, CURLOPT_WRITEDATA, c);
	/* only http(s): the URL comes from a command line or an environment variable */
	C.easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
	if (o->cacert)
		C.easy_setopt(h, CURLOPT_CAINFO, o->cacert);
	if (o->user) {
		C.easy_setopt(h, CURLOPT_HTTPAUTH, (long)CURLAUTH_BASIC);
		C.easy_setopt(h, CURLOPT_USERNAME, o->user);
		C.easy_setopt(h, CURLOPT_PASSWORD, o->password ? o->password : "");
	}
	if (c->auth_header)
		hdr = C.slist_append(hdr, c->auth_header);
	if (c->tenant_header)
		hdr = C.slist_append(hdr, c->tenant_header);
	if (fmt == PUSH_PPROF) {
		mime = C.mime_init(h);
		curl_mimepart *part = mime ? C.mime_addpart(mime) : NULL;
		if (part) {
			C.mime_name(part, "profile");
			C.mime_filename(part, "profile.pprof");
			C.mime_type(part, "application/octet-stream");
			C.mime_data(part, body, len);
		}
		C.easy_setopt(h, CURLOPT_MIMEPOST, mime);
	} else {
		hdr = C.slist_append(hdr, fmt == PUSH_PARCA ? "Content-Type: application/json"
							    : "Content-Type: binary/octet-stream");
		C.easy_setopt(h, CURLOPT_POSTFIELDS, body);
		C.easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
	}
	hdr = C.slist_append(hdr, "Expect:");   /* no 100-continue round trip */
	C.easy_setopt(h, CURLOPT_HTTPHEADER, hdr);

	CURLcode rc = C.easy_perform(h);
	enum push_outcome out;
	if (rc != CURLE_OK) {
		const char *why = c->errbuf[0] ? c->errbuf : C.easy_strerror(rc);
		size_t wl = strnlen(why, sizeof(r->msg) - 1);
		memcpy(r->msg, why, wl);
		r->msg[wl] = '\0';
		out = curl_outcome(rc);
	} else {
		long st = 0;
		C.easy_getinfo(h, CURLINFO_RESPONSE_CODE, &st);
		r->status = st;
		char txt[160];
		reply_text(c, txt, sizeof(txt));
		snprintf(r->msg, sizeof(r->msg), "HTTP %ld%s%s", st, txt[0] ? ": " : "", txt);
		if (st >= 200 && st < 300)
			out = PUSH_OK;
		else if (st == 401 || st == 403)
			out = PUSH_AUTH;
		else if (st == 429 || st == 408 || st >= 500)
			out = PUSH_RETRY;
		else
			out = PUSH_REJECTED;
	}
	C.mime_free(mime);
	C.slist_free_all(hdr);
	free(url);
	return out;
}
