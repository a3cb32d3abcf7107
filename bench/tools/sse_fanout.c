/*
 * Fan-out of one change to many Server-Sent Events subscribers, for `make bench`.
 *
 *   sse_fanout --port P --subscribers N [--changes K] [--pause]
 *
 * Opens N connections to GET /banner/events (one epoll loop, non-blocking sockets), waits
 * until every one has its first event, then K times: notes the time, sends POST /banner/next on
 * a separate connection, and records when each subscriber sees the event with the next id.
 * Prints one JSON object: connection counts, then the delays (milliseconds) of all K × N
 * deliveries: p50, p99, max. Written in C so that the client, not the server, is never the
 * slow side of a 5,000-subscriber measurement.
 *
 * With --pause, once every subscriber has its first event it writes "ready" on stderr and waits
 * for a line on stdin before the first change: the caller measures the server's memory with
 * every subscriber connected and idle. After the last change it prints its JSON line and waits
 * for another line before it closes the connections: the caller reads the server's CPU time spent
 * on the changes alone.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "net.h"

struct subscriber {
    int fd;
    long last_id;       /* highest "id: N" seen so far */
    long first_id;      /* its id when every subscriber had its first event: its audience's version */
    char tail[32];      /* the end of what was read before, for ids split across reads */
    size_t tail_length;
};

/* Scans new bytes for "id: <number>" lines; keeps the highest id. */
static void scan(struct subscriber *subscriber, const char *data, size_t length) {
    char buffer[65536 + sizeof subscriber->tail];
    memcpy(buffer, subscriber->tail, subscriber->tail_length);
    memcpy(buffer + subscriber->tail_length, data, length);
    size_t total = subscriber->tail_length + length;
    for (size_t i = 0; i + 4 < total; i++) {
        if ((i == 0 || buffer[i - 1] == '\n') && memcmp(buffer + i, "id: ", 4) == 0) {
            size_t end = i + 4;
            while (end < total && buffer[end] >= '0' && buffer[end] <= '9') end++;
            if (end < total && buffer[end] == '\n') {
                long id = strtol(buffer + i + 4, NULL, 10);
                if (id > subscriber->last_id) subscriber->last_id = id;
            }
        }
    }
    size_t keep = total < sizeof subscriber->tail ? total : sizeof subscriber->tail;
    memmove(subscriber->tail, buffer + total - keep, keep);
    subscriber->tail_length = keep;
}

static int compare(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int post_next(int port) {
    int fd = connect_to(port);
    if (fd < 0) return -1;
    const char *request = "POST /banner/next HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";
    if (write(fd, request, strlen(request)) < 0) {
        close(fd);
        return -1;
    }
    return fd; /* read and closed by the caller's loop */
}

int main(int argc, char **argv) {
    int port = 0, count = 1000, changes = 5, pause = 0, audiences = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--pause") == 0) {
            pause = 1;
            continue;
        }
        if (i + 1 == argc) break;
        if (strcmp(argv[i], "--port") == 0) port = atoi(argv[++i]);
        else if (strcmp(argv[i], "--subscribers") == 0) count = atoi(argv[++i]);
        else if (strcmp(argv[i], "--changes") == 0) changes = atoi(argv[++i]);
        else if (strcmp(argv[i], "--audiences") == 0) audiences = atoi(argv[++i]);
    }
    if (port <= 0 || count <= 0 || changes <= 0 || audiences < 0) {
        fprintf(stderr, "usage: %s --port P --subscribers N [--changes K] [--audiences A]\n", argv[0]);
        return 2;
    }
    raise_descriptor_limit();

    struct subscriber *subscribers = calloc((size_t)count, sizeof *subscribers);
    int epoll = epoll_create1(0);
    int connected = 0;
    double connect_start = now_ms();
    for (int i = 0; i < count; i++) {
        /* With --audiences A, subscriber i is a screen of audience a(i mod A): each audience has
           its own versions, so every subscriber waits for its own first version plus one per change. */
        char request[128];
        if (audiences > 0)
            snprintf(request, sizeof request, "GET /banner/events?audience=a%d HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
                     i % audiences);
        else
            snprintf(request, sizeof request, "GET /banner/events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
        int fd = connect_to(port);
        if (fd < 0) break;
        if (write(fd, request, strlen(request)) < 0) {
            close(fd);
            break;
        }
        fcntl(fd, F_SETFL, O_NONBLOCK);
        subscribers[i] = (struct subscriber){.fd = fd, .last_id = -1};
        struct epoll_event event = {.events = EPOLLIN, .data.u32 = (uint32_t)i};
        epoll_ctl(epoll, EPOLL_CTL_ADD, fd, &event);
        connected++;
    }

    double *delays = calloc((size_t)connected * (size_t)changes, sizeof *delays);
    size_t delivered = 0;
    char data[65536];
    struct epoll_event ready[512];
    long target = -1;
    double started = 0;
    int reached = 0, change = -1, post_fd = -1, lost = 0;
    double deadline = now_ms() + 60000;

    for (;;) {
        /* Between changes: once every subscriber is at the target id, trigger the next change. */
        int all_at_target = 1;
        if (target < 0) {
            for (int i = 0; i < connected; i++) {
                if (subscribers[i].last_id < 0) { all_at_target = 0; break; }
            }
        } else {
            all_at_target = reached == connected - lost;
        }
        if (all_at_target) {
            if (target < 0) {
                target = 0;
                for (int i = 0; i < connected; i++) subscribers[i].first_id = subscribers[i].last_id;
                printf("{\"connected\": %d, \"connect_seconds\": %.2f", connected, (now_ms() - connect_start) / 1e3);
                if (pause) {
                    fprintf(stderr, "ready\n");
                    fflush(stderr);
                    char line[16];
                    if (fgets(line, sizeof line, stdin) == NULL) break;
                }
            }
            if (++change == changes) break;
            target++;
            reached = 0;
            started = now_ms();
            if (post_fd >= 0) close(post_fd);
            post_fd = post_next(port);
        }
        if (now_ms() > deadline) break;
        int n = epoll_wait(epoll, ready, 512, 100);
        for (int k = 0; k < n; k++) {
            struct subscriber *subscriber = &subscribers[ready[k].data.u32];
            for (;;) {
                ssize_t length = read(subscriber->fd, data, sizeof data);
                if (length > 0) {
                    long before = subscriber->last_id;
                    scan(subscriber, data, (size_t)length);
                    long own = subscriber->first_id + target;
                    if (change >= 0 && before < own && subscriber->last_id >= own) {
                        delays[delivered++] = now_ms() - started;
                        reached++;
                    }
                    continue;
                }
                if (length == 0 || (errno != EAGAIN && errno != EINTR)) {
                    epoll_ctl(epoll, EPOLL_CTL_DEL, subscriber->fd, NULL);
                    close(subscriber->fd);
                    lost++;
                }
                break;
            }
        }
    }
    qsort(delays, delivered, sizeof *delays, compare);
    double p50 = delivered ? delays[delivered / 2] : -1;
    double p99 = delivered ? delays[(size_t)((double)delivered * 0.99) < delivered ? (size_t)((double)delivered * 0.99) : delivered - 1] : -1;
    double max = delivered ? delays[delivered - 1] : -1;
    if (target < 0) printf("{\"connected\": %d, \"connect_seconds\": 0", connected);
    printf(", \"changes\": %d, \"deliveries\": %zu, \"expected\": %d, \"lost\": %d, "
           "\"p50_ms\": %.3f, \"p99_ms\": %.3f, \"max_ms\": %.3f}\n",
           change < 0 ? 0 : change, delivered, connected * changes, lost, p50, p99, max);
    fflush(stdout);
    if (pause) {
        char line[16];
        if (fgets(line, sizeof line, stdin) == NULL) { /* the caller is gone: close all the same */ }
    }
    return delivered == (size_t)connected * (size_t)changes ? 0 : 1;
}
