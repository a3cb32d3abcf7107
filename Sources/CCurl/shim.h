// The C side of WebhookSender: libcurl's header plus what Swift cannot spell itself.
#ifndef CCURL_SHIM_H
#define CCURL_SHIM_H

#include <curl/curl.h>
#include <string.h>
#include <netinet/in.h>

// curl_easy_setopt and curl_easy_getinfo are variadic, which Swift does not call: one typed
// wrapper per kind of value.

static inline CURLcode ccurl_set_long(CURL *handle, CURLoption option, long value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode ccurl_set_string(CURL *handle, CURLoption option, const char *value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode ccurl_set_pointer(CURL *handle, CURLoption option, void *value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode ccurl_set_headers(CURL *handle, struct curl_slist *headers) {
    return curl_easy_setopt(handle, CURLOPT_HTTPHEADER, headers);
}

typedef curl_socket_t (*ccurl_open_socket)(void *context, curlsocktype purpose, struct curl_sockaddr *address);

static inline CURLcode ccurl_set_open_socket(CURL *handle, ccurl_open_socket open, void *context) {
    CURLcode code = curl_easy_setopt(handle, CURLOPT_OPENSOCKETFUNCTION, open);
    return code != CURLE_OK ? code : curl_easy_setopt(handle, CURLOPT_OPENSOCKETDATA, context);
}

typedef size_t (*ccurl_write)(char *bytes, size_t size, size_t count, void *context);

static inline CURLcode ccurl_set_write(CURL *handle, ccurl_write write) {
    return curl_easy_setopt(handle, CURLOPT_WRITEFUNCTION, write);
}

static inline CURLcode ccurl_response_code(CURL *handle, long *code) {
    return curl_easy_getinfo(handle, CURLINFO_RESPONSE_CODE, code);
}

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
