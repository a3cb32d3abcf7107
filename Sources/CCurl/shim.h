// The C side of WebhookSender: libcurl's header plus what Swift cannot spell itself.
#ifndef CCURL_SHIM_H
#define CCURL_SHIM_H

#include "../CDynamicLibrary/dynamic_library.h"
#include <curl/curl.h>
#include <netinet/in.h>
#include <string.h>

// libcurl is opened on the first delivery, not linked: it and the libraries it brings (OpenSSL,
// Kerberos, LDAP, nghttp2, libssh…) cost megabytes of resident memory to map at every start, in
// a service that may have no webhook (docs/PERFORMANCE.md, idle memory). Its header gives the
// types and signatures; every call goes through a pointer found once with dlsym.

DYNAMIC_LIBRARY(ccurl_library, "libcurl.so.4", RTLD_LOCAL)
/// libcurl's function `name`. Only called once `ccurl_start` succeeded.
#define CCURL(name) DYNAMIC_SYMBOL(ccurl_library, name)

/// Opens libcurl and runs curl_global_init; once per process, before the first handle (it is not
/// thread-safe). NULL on success, else why not.
static inline const char *ccurl_start(void) {
    if (ccurl_library() == NULL) return dlerror();
    return CCURL(curl_global_init)(CURL_GLOBAL_DEFAULT) == CURLE_OK ? NULL : "curl_global_init failed";
}

static inline CURL *ccurl_easy_init(void) { return CCURL(curl_easy_init)(); }
static inline void ccurl_easy_cleanup(CURL *handle) { CCURL(curl_easy_cleanup)(handle); }
static inline CURLcode ccurl_easy_perform(CURL *handle) { return CCURL(curl_easy_perform)(handle); }
static inline const char *ccurl_easy_strerror(CURLcode code) { return CCURL(curl_easy_strerror)(code); }
static inline struct curl_slist *ccurl_slist_append(struct curl_slist *list, const char *line) {
    return CCURL(curl_slist_append)(list, line);
}
static inline void ccurl_slist_free_all(struct curl_slist *list) { CCURL(curl_slist_free_all)(list); }

// curl_easy_setopt and curl_easy_getinfo are variadic, which Swift does not call: one typed
// wrapper per kind of value.

static inline CURLcode ccurl_set_long(CURL *handle, CURLoption option, long value) {
    return CCURL(curl_easy_setopt)(handle, option, value);
}

static inline CURLcode ccurl_set_string(CURL *handle, CURLoption option, const char *value) {
    return CCURL(curl_easy_setopt)(handle, option, value);
}

static inline CURLcode ccurl_set_pointer(CURL *handle, CURLoption option, void *value) {
    return CCURL(curl_easy_setopt)(handle, option, value);
}

static inline CURLcode ccurl_set_headers(CURL *handle, struct curl_slist *headers) {
    return CCURL(curl_easy_setopt)(handle, CURLOPT_HTTPHEADER, headers);
}

typedef curl_socket_t (*ccurl_open_socket)(void *context, curlsocktype purpose, struct curl_sockaddr *address);

static inline CURLcode ccurl_set_open_socket(CURL *handle, ccurl_open_socket open, void *context) {
    CURLcode code = CCURL(curl_easy_setopt)(handle, CURLOPT_OPENSOCKETFUNCTION, open);
    return code != CURLE_OK ? code : CCURL(curl_easy_setopt)(handle, CURLOPT_OPENSOCKETDATA, context);
}

typedef size_t (*ccurl_write)(char *bytes, size_t size, size_t count, void *context);

static inline CURLcode ccurl_set_write(CURL *handle, ccurl_write write) {
    return CCURL(curl_easy_setopt)(handle, CURLOPT_WRITEFUNCTION, write);
}

static inline CURLcode ccurl_response_code(CURL *handle, long *code) {
    return CCURL(curl_easy_getinfo)(handle, CURLINFO_RESPONSE_CODE, code);
}

/// How libcurl reads `text` as a URL (curl_url: the parser behind CURLOPT_URL, the path left as
/// given, as deliveries send it with CURLOPT_PATH_AS_IS): 0, and its scheme, host (an IPv6
/// address in brackets), port (the scheme's when none is given), path and query (NULL when none),
/// each freed with `ccurl_free`; else libcurl's CURLUcode. What tests hold `WebhookURL` to.
static inline int ccurl_url_parts(const char *text, char **scheme, char **host, char **port, char **path, char **query) {
    CURLU *url = CCURL(curl_url)();
    if (url == NULL) return CURLUE_OUT_OF_MEMORY;
    CURLUcode code = CCURL(curl_url_set)(url, CURLUPART_URL, text, CURLU_PATH_AS_IS);
    if (code == CURLUE_OK) {
        CCURL(curl_url_get)(url, CURLUPART_SCHEME, scheme, 0);
        CCURL(curl_url_get)(url, CURLUPART_HOST, host, 0);
        CCURL(curl_url_get)(url, CURLUPART_PORT, port, CURLU_DEFAULT_PORT);
        CCURL(curl_url_get)(url, CURLUPART_PATH, path, 0);
        if (CCURL(curl_url_get)(url, CURLUPART_QUERY, query, 0) != CURLUE_OK) *query = NULL;
    }
    CCURL(curl_url_cleanup)(url);
    return (int)code;
}

static inline void ccurl_free(char *text) { CCURL(curl_free)(text); }

/// The IP address curl is about to connect to: its 4 or 16 bytes copied to `out`; 0 for another
/// family.
static inline int ccurl_address_bytes(const struct curl_sockaddr *address, unsigned char out[16]) {
    if (address->family == AF_INET && address->addrlen >= sizeof(struct sockaddr_in)) {
        memcpy(out, &((const struct sockaddr_in *)&address->addr)->sin_addr, 4);
        return 4;
    }
    if (address->family == AF_INET6 && address->addrlen >= sizeof(struct sockaddr_in6)) {
        memcpy(out, &((const struct sockaddr_in6 *)&address->addr)->sin6_addr, 16);
        return 16;
    }
    return 0;
}

#endif
