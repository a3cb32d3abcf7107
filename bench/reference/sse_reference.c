/*
 * The floor of event-stream fan-out, for `make bench`: a minimal single-threaded epoll server in
 * C that does what the service's `/banner/events` does and nothing else. `GET /banner/events`
 * gets the stream's headers and a first event; `POST /banner/next` bumps the id, is answered,
 * and one event of about the service's size (`--event-bytes`, chunked as libmicrohttpd sends it)
 * is written to every subscriber, one write each, in one pass. bench/tools/sse_fanout.c measures
 * it exactly as it measures the service.
 *
 *   sse_reference --port P [--event-bytes 700]      (prints "listening on P" when ready)
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

enum { request_capacity = 4096 };

struct client {
    int fd;
    int subscribed;
    size_t length; /* bytes of the request read so far */
    char request[request_capacity];
};

static struct client **subscribers;
static size_t subscriber_count, subscriber_capacity;
static long event_id = 1;
static char payload[65536];
static size_t payload_length;

/* Writes all of `data`; -1 when the socket cannot take it now (its buffer is full) or is gone. */
static int send_all(int fd, const char *data, size_t length) {
    while (length > 0) {
        ssize_t written = write(fd, data, length);
        if (written < 0 && errno == EINTR) continue;
        if (written <= 0) return -1;
        data += written;
        length -= (size_t)written;
    }
    return 0;
}

/* One chunk holding one event: "id: N\nevent: state\ndata: {…}\n\n". */
static size_t format_event(char *buffer, size_t capacity) {
    char body[65536 + 64];
    int body_length = snprintf(body, sizeof body, "id: %ld\nevent: state\ndata: %.*s\n\n", event_id,
                               (int)payload_length, payload);
    return (size_t)snprintf(buffer, capacity, "%x\r\n%s\r\n", body_length, body);
}

static void close_client(int epoll, struct client *client) {
    epoll_ctl(epoll, EPOLL_CTL_DEL, client->fd, NULL);
    close(client->fd);
    if (client->subscribed) {
        for (size_t i = 0; i < subscriber_count; i++) {
            if (subscribers[i] == client) {
                subscribers[i] = subscribers[--subscriber_count];
                break;
            }
        }
    }
    free(client);
}

static void broadcast(void) {
    static char event[65536 + 256];
    size_t length = format_event(event, sizeof event);
    for (size_t i = 0; i < subscriber_count; i++) {
        /* A subscriber that cannot take it is shut down; its read event then closes it (closing
           here could free a client still listed in this round of epoll events). */
        if (send_all(subscribers[i]->fd, event, length) != 0) shutdown(subscribers[i]->fd, SHUT_RDWR);
    }
}

/* A complete request is in `client->request`: answer it. Returns 0 to keep the connection. */
static int answer(struct client *client) {
    if (strncmp(client->request, "GET /banner/events ", 19) == 0) {
        static const char headers[] = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
                                      "Cache-Control: no-cache\r\nTransfer-Encoding: chunked\r\n\r\n";
        char event[65536 + 256];
        size_t length = format_event(event, sizeof event);
        if (send_all(client->fd, headers, sizeof headers - 1) != 0 || send_all(client->fd, event, length) != 0) return -1;
        if (subscriber_count == subscriber_capacity) {
            subscriber_capacity = subscriber_capacity ? subscriber_capacity * 2 : 1024;
            subscribers = realloc(subscribers, subscriber_capacity * sizeof *subscribers);
        }
        subscribers[subscriber_count++] = client;
        client->subscribed = 1;
        return 0;
    }
    if (strncmp(client->request, "POST /banner/next ", 18) == 0) {
        static const char ok[] = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 3\r\n"
                                 "Connection: close\r\n\r\n{}\n";
        event_id++;
        send_all(client->fd, ok, sizeof ok - 1);
        broadcast();
        return -1;
    }
    static const char missing[] = "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
    send_all(client->fd, missing, sizeof missing - 1);
    return -1;
}

int main(int argc, char **argv) {
    int port = -1;
    size_t event_bytes = 700;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--port") == 0) port = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--event-bytes") == 0) event_bytes = (size_t)atoi(argv[i + 1]);
    }
    if (port < 0 || event_bytes < 64 || event_bytes > 60000) {
        fprintf(stderr, "usage: %s --port P [--event-bytes 64…60000]\n", argv[0]);
        return 2;
    }
    signal(SIGPIPE, SIG_IGN);
    struct rlimit limit;
    getrlimit(RLIMIT_NOFILE, &limit);
    limit.rlim_cur = limit.rlim_max;
    setrlimit(RLIMIT_NOFILE, &limit);
    /* A JSON object of about the event's size: {"index":0,"padding":"xxx…"}. */
    payload_length = (size_t)snprintf(payload, sizeof payload, "{\"index\":0,\"padding\":\"");
    while (payload_length < event_bytes - 40) payload[payload_length++] = 'x';
    payload_length += (size_t)snprintf(payload + payload_length, sizeof payload - payload_length, "\"}");

    int listener = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    int one = 1;
    setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in address = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    inet_pton(AF_INET, "127.0.0.1", &address.sin_addr);
    socklen_t address_length = sizeof address;
    if (bind(listener, (struct sockaddr *)&address, sizeof address) != 0 || listen(listener, 4096) != 0 ||
        getsockname(listener, (struct sockaddr *)&address, &address_length) != 0) {
        perror("sse_reference: listen");
        return 1;
    }
    int epoll = epoll_create1(0);
    struct epoll_event listening = {.events = EPOLLIN, .data.ptr = NULL};
    epoll_ctl(epoll, EPOLL_CTL_ADD, listener, &listening);
    printf("listening on %d\n", ntohs(address.sin_port));
    fflush(stdout);

    struct epoll_event ready[512];
    for (;;) {
        int n = epoll_wait(epoll, ready, 512, -1);
        if (n < 0 && errno == EINTR) continue;
        for (int k = 0; k < n; k++) {
            struct client *client = ready[k].data.ptr;
            if (client == NULL) {
                int fd;
                while ((fd = accept4(listener, NULL, NULL, SOCK_NONBLOCK)) >= 0) {
                    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
                    struct client *accepted = calloc(1, sizeof *accepted);
                    accepted->fd = fd;
                    struct epoll_event event = {.events = EPOLLIN | EPOLLRDHUP, .data.ptr = accepted};
                    epoll_ctl(epoll, EPOLL_CTL_ADD, fd, &event);
                }
                continue;
            }
            char scratch[4096];
            for (;;) {
                char *into = client->subscribed ? scratch : client->request + client->length;
                size_t room = client->subscribed ? sizeof scratch : request_capacity - 1 - client->length;
                ssize_t length = room ? read(client->fd, into, room) : -1;
                if (length > 0) {
                    if (client->subscribed) continue; /* a subscriber says nothing more */
                    client->length += (size_t)length;
                    client->request[client->length] = '\0';
                    if (strstr(client->request, "\r\n\r\n") != NULL && answer(client) != 0) {
                        close_client(epoll, client);
                        break;
                    }
                    continue;
                }
                if (length == 0 || (errno != EAGAIN && errno != EINTR)) close_client(epoll, client);
                break;
            }
        }
    }
}
