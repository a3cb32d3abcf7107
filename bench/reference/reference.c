/*
 * The floor of our own stack: libmicrohttpd in C answering every request with one pre-built
 * response, with the same daemon settings as banner-server (epoll, a worker thread pool,
 * keep-alive: answer on the second access-handler call). `make bench` runs it beside the
 * service and nginx.
 *
 *   reference --port P --threads N --body FILE [--header "Name: value"]... [--memory-kib K] [--turbo]
 *
 * `make bench` passes the service's own response headers, so both send the same bytes.
 */
#include <microhttpd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static struct MHD_Response *prepared;

static enum MHD_Result answer(void *cls, struct MHD_Connection *connection, const char *url, const char *method,
                              const char *version, const char *upload_data, size_t *upload_data_size,
                              void **req_cls) {
    static int first_call_marker;
    (void)cls, (void)url, (void)method, (void)version, (void)upload_data;
    if (*req_cls == NULL) { /* first call: headers only; answering now would cost keep-alive */
        *req_cls = &first_call_marker;
        return MHD_YES;
    }
    *upload_data_size = 0;
    return MHD_queue_response(connection, MHD_HTTP_OK, prepared);
}

static char *read_file(const char *path, size_t *size) {
    FILE *file = fopen(path, "rb");
    if (file == NULL) return NULL;
    fseek(file, 0, SEEK_END);
    long length = ftell(file);
    rewind(file);
    char *bytes = malloc((size_t)length);
    *size = fread(bytes, 1, (size_t)length, file);
    fclose(file);
    return bytes;
}

int main(int argc, char **argv) {
    unsigned int port = 0, threads = 2, memory_kib = 16, flags = MHD_USE_EPOLL_INTERNAL_THREAD | MHD_USE_ERROR_LOG;
    const char *body_path = NULL;
    const char *headers[16];
    int header_count = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--port") == 0 && i + 1 < argc) port = (unsigned int)atoi(argv[++i]);
        else if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc) threads = (unsigned int)atoi(argv[++i]);
        else if (strcmp(argv[i], "--body") == 0 && i + 1 < argc) body_path = argv[++i];
        else if (strcmp(argv[i], "--turbo") == 0) flags |= MHD_USE_TURBO;
        else if (strcmp(argv[i], "--header") == 0 && i + 1 < argc && header_count < 16) headers[header_count++] = argv[++i];
        else if (strcmp(argv[i], "--memory-kib") == 0 && i + 1 < argc) memory_kib = (unsigned int)atoi(argv[++i]);
        else {
            fprintf(stderr, "usage: %s --port P --threads N --body FILE [--header 'Name: value']... [--turbo]\n", argv[0]);
            return 2;
        }
    }
    size_t size = 0;
    char *body = body_path ? read_file(body_path, &size) : NULL;
    if (body == NULL) { fprintf(stderr, "reference: cannot read --body file\n"); return 2; }
    prepared = MHD_create_response_from_buffer(size, body, MHD_RESPMEM_MUST_COPY);
    for (int h = 0; h < header_count; h++) {
        char name[256];
        const char *colon = strchr(headers[h], ':');
        if (colon == NULL || (size_t)(colon - headers[h]) >= sizeof name) continue;
        memcpy(name, headers[h], (size_t)(colon - headers[h]));
        name[colon - headers[h]] = '\0';
        const char *value = colon + 1;
        while (*value == ' ') value++;
        MHD_add_response_header(prepared, name, value);
    }

    /* Blocked before the daemon's threads exist, so they inherit the mask and sigwait gets them. */
    sigset_t stop;
    sigemptyset(&stop);
    sigaddset(&stop, SIGTERM);
    sigaddset(&stop, SIGINT);
    pthread_sigmask(SIG_BLOCK, &stop, NULL);
    struct MHD_Daemon *daemon = MHD_start_daemon(
        flags, (uint16_t)port, NULL, NULL, answer, NULL,
        MHD_OPTION_THREAD_POOL_SIZE, threads,
        MHD_OPTION_CONNECTION_TIMEOUT, 60u,
        MHD_OPTION_CONNECTION_LIMIT, 4096u,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)memory_kib * 1024,
        MHD_OPTION_END);
    if (daemon == NULL) { fprintf(stderr, "reference: cannot start on port %u\n", port); return 1; }
    printf("listening on http://127.0.0.1:%u\n", port);
    fflush(stdout);

    int received;
    sigwait(&stop, &received);
    MHD_stop_daemon(daemon);
    MHD_destroy_response(prepared);
    free(body);
    return 0;
}
