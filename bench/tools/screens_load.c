/*
 * A fleet of simulated screens, for `make bench` (docs/SCREENS.md, "The fleet").
 *
 *   screens_load --port P --screens N --seconds S [--carousel NAME] [--senders K] [--first F] [--pause]
 *                [--anonymous]
 *
 * Opens N event streams, GET /carousels/NAME/banner/events?screen=sim-NNNNN, numbered from F
 * (default 0: several instances, one per replica, name different screens; one epoll loop,
 * non-blocking sockets). Like the page, each screen sends a receipt for every change it sees
 * after the first state: POST /carousels/NAME/screens/sim-NNNNN/receipts with the state's version
 * and banner, `shownAt` the instant the event arrived (this machine's clock is the service's),
 * over K keep-alive connections (default 4; 0: no receipts, streams only), one request outstanding
 * on each. Runs S seconds
 * once every stream has its first state, then prints one JSON object: streams connected and
 * lost, changes seen, receipts sent and answered by status.
 *
 * With --anonymous the same traffic names no screen, so the fleet takes no part in it: the streams
 * carry no `?screen=`, and each receipt is instead a GET /carousels/NAME/banner (the cheapest
 * request the service answers; 200 is counted as taken). What the service spends on that is what
 * the streams and the requests cost without the fleet: the floor of the comparison beside reads.
 *
 * With --pause it writes "ready" on stderr once every stream has its first state, and starts the S
 * seconds at a line on stdin (the caller reads the server's memory with every screen connected
 * meanwhile; the streams are still read, and a change then is not reported); after them it prints
 * its JSON line and waits for another line before it closes the connections (the caller reads the
 * server's CPU time spent on the run).
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

/* What a stream has read and not parsed yet: an event may come in pieces. */
struct screen {
    int fd;
    int states; /* state events seen */
    char pending[8192];
    size_t length;
};

/* A receipt waiting for a sender. */
struct receipt {
    int screen;
    long version;
    char banner[80];
    struct timespec at;
};

struct sender {
    int fd;
    int busy;
    char answer[4096];
    size_t length;
};

static struct receipt *queue;
static size_t queue_capacity, queue_head, queue_tail;

static void enqueue(int screen, long version, const char *banner, size_t banner_length) {
    if (queue_tail - queue_head == queue_capacity) return; /* senders far behind: dropped, counted */
    struct receipt *receipt = &queue[queue_tail++ % queue_capacity];
    receipt->screen = screen;
    receipt->version = version;
    if (banner_length >= sizeof receipt->banner) banner_length = sizeof receipt->banner - 1;
    memcpy(receipt->banner, banner, banner_length);
    receipt->banner[banner_length] = 0;
    clock_gettime(CLOCK_REALTIME, &receipt->at);
}

/* Parses complete `event: state` blocks: their id (the version) and the banner's id. */
static int parse(struct screen *screen, int index, int counting) {
    int seen = 0;
    for (;;) {
        char *event = memmem(screen->pending, screen->length, "event: state\nid: ", 17);
        if (!event) break;
        char *end = memmem(event, screen->length - (size_t)(event - screen->pending), "\n\n", 2);
        if (!end) break;
        long version = strtol(event + 17, NULL, 10);
        char *banner = memmem(event, (size_t)(end - event), "\"banner\":{\"id\":\"", 16);
        if (banner && screen->states++ > 0 && counting) {
            banner += 16;
            char *quote = memchr(banner, '"', (size_t)(end - banner));
            if (quote) enqueue(index, version, banner, (size_t)(quote - banner));
            seen++;
        }
        size_t consumed = (size_t)(end + 2 - screen->pending);
        memmove(screen->pending, end + 2, screen->length - consumed);
        screen->length -= consumed;
    }
    if (screen->length == sizeof screen->pending) screen->length = 0; /* not an event stream */
    return seen;
}

/* The number of this instance's first screen. */
static int first_screen = 0;
/* --anonymous: streams and requests name no screen, and reads stand for receipts. */
static int anonymous = 0;

static int send_receipt(struct sender *sender, const char *carousel, struct receipt *receipt) {
    struct tm utc;
    gmtime_r(&receipt->at.tv_sec, &utc);
    char shown[40];
    strftime(shown, sizeof shown, "%Y-%m-%dT%H:%M:%S", &utc);
    char body[256];
    int body_length = snprintf(body, sizeof body,
                               "{\"receipts\":[{\"version\":%ld,\"banner\":\"%s\",\"shownAt\":\"%s.%03ldZ\"}]}",
                               receipt->version, receipt->banner, shown, receipt->at.tv_nsec / 1000000);
    char request[640];
    int length = anonymous ? snprintf(request, sizeof request, "GET /carousels/%s/banner HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
                                      carousel)
                           : snprintf(request, sizeof request,
                          "POST /carousels/%s/screens/sim-%05d/receipts HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                          "Content-Type: application/json\r\nContent-Length: %d\r\n\r\n%s",
                          carousel, first_screen + receipt->screen, body_length, body);
    if (write(sender->fd, request, (size_t)length) != length) return -1;
    sender->busy = 1;
    sender->length = 0;
    return 0;
}

/* Connects sender number k (non-blocking, watched by `epoll`); 0, or -1 saying why. */
static int open_sender(struct sender *sender, int k, int epoll, int port) {
    sender->fd = connect_to(port);
    if (sender->fd < 0) {
        fprintf(stderr, "screens_load: cannot connect a sender\n");
        return -1;
    }
    sender->busy = 0;
    sender->length = 0;
    fcntl(sender->fd, F_SETFL, O_NONBLOCK);
    struct epoll_event event = {.events = EPOLLIN, .data.u32 = (uint32_t)(100000 + k)};
    epoll_ctl(epoll, EPOLL_CTL_ADD, sender->fd, &event);
    return 0;
}

int main(int argc, char **argv) {
    int port = 0, count = 1000, seconds = 10, senders_count = 4, pause = 0;
    const char *carousel = "default";
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--pause") == 0) {
            pause = 1;
            continue;
        }
        if (strcmp(argv[i], "--anonymous") == 0) {
            anonymous = 1;
            continue;
        }
        if (i + 1 == argc) break;
        if (strcmp(argv[i], "--port") == 0) port = atoi(argv[++i]);
        else if (strcmp(argv[i], "--screens") == 0) count = atoi(argv[++i]);
        else if (strcmp(argv[i], "--seconds") == 0) seconds = atoi(argv[++i]);
        else if (strcmp(argv[i], "--senders") == 0) senders_count = atoi(argv[++i]);
        else if (strcmp(argv[i], "--carousel") == 0) carousel = argv[++i];
        else if (strcmp(argv[i], "--first") == 0) first_screen = atoi(argv[++i]);
    }
    if (port <= 0 || count <= 0 || first_screen < 0 || first_screen + count > 100000 || seconds <= 0 ||
        senders_count < 0) {
        fprintf(stderr,
                "usage: %s --port P --screens N --seconds S [--carousel NAME] [--senders K] [--first F] [--pause] "
                "[--anonymous]\n",
                argv[0]);
        return 2;
    }
    raise_descriptor_limit();

    queue_capacity = (size_t)count * 4;
    queue = calloc(queue_capacity, sizeof *queue);
    struct screen *screens = calloc((size_t)count, sizeof *screens);
    struct sender *senders = calloc((size_t)senders_count + 1, sizeof *senders);
    int epoll = epoll_create1(0);
    int connected = 0;
    for (int i = 0; i < count; i++) {
        int fd = connect_to(port);
        if (fd < 0) break;
        char request[256];
        int length = anonymous ? snprintf(request, sizeof request,
                                          "GET /carousels/%s/banner/events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", carousel)
                               : snprintf(request, sizeof request,
                                          "GET /carousels/%s/banner/events?screen=sim-%05d HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
                                          carousel, first_screen + i);
        if (write(fd, request, (size_t)length) != length) {
            close(fd);
            break;
        }
        fcntl(fd, F_SETFL, O_NONBLOCK);
        screens[i].fd = fd;
        struct epoll_event event = {.events = EPOLLIN, .data.u32 = (uint32_t)i};
        epoll_ctl(epoll, EPOLL_CTL_ADD, fd, &event);
        connected++;
    }
    for (int k = 0; k < senders_count; k++) {
        if (open_sender(&senders[k], k, epoll, port) != 0) return 1;
    }

    long changes = 0, sent = 0, ok = 0, refused = 0;
    int lost = 0, counting = 0, ready_count = 0, waiting = 0, go = 0;
    double end = now_ms() + 60000; /* for every stream's first state */
    char data[65536];
    struct epoll_event ready[512];
    for (;;) {
        if (!counting && ready_count == connected - lost) {
            if (!waiting) {
                printf("{\"screens\": %d, \"connected\": %d", count, connected);
                fflush(stdout);
            }
            if (pause && !waiting) {
                /* Streams are still read while the caller measures: a change meanwhile is seen when
                   it comes, not counted, and not reported late once the run starts. */
                fprintf(stderr, "ready\n");
                fflush(stderr);
                struct epoll_event event = {.events = EPOLLIN, .data.u32 = 200000};
                epoll_ctl(epoll, EPOLL_CTL_ADD, 0, &event);
                waiting = 1;
                end = now_ms() + 600000;
            } else if (!pause || go) {
                counting = 1;
                end = now_ms() + seconds * 1000.0;
            }
        }
        if (now_ms() > end) break;
        for (int k = 0; k < senders_count && counting; k++) {
            if (senders[k].busy || queue_head == queue_tail) continue;
            if (send_receipt(&senders[k], carousel, &queue[queue_head++ % queue_capacity]) == 0) sent++;
        }
        int n = epoll_wait(epoll, ready, 512, 50);
        for (int e = 0; e < n; e++) {
            uint32_t which = ready[e].data.u32;
            if (which == 200000) {
                char line[16];
                if (read(0, line, sizeof line) <= 0) return 1;
                epoll_ctl(epoll, EPOLL_CTL_DEL, 0, NULL);
                go = 1;
                continue;
            }
            if (which >= 100000) {
                struct sender *sender = &senders[which - 100000];
                ssize_t length = read(sender->fd, sender->answer + sender->length,
                                      sizeof sender->answer - sender->length - 1);
                if (length <= 0) {
                    if (length < 0 && (errno == EAGAIN || errno == EINTR)) continue;
                    if (sender->busy) {
                        fprintf(stderr, "screens_load: a sender's connection closed before its answer\n");
                        return 1;
                    }
                    /* Idle past the service's connection timeout (few receipts: the first sender
                       takes them all): another connection, as a browser would open. */
                    epoll_ctl(epoll, EPOLL_CTL_DEL, sender->fd, NULL);
                    close(sender->fd);
                    if (open_sender(sender, which - 100000, epoll, port) != 0) return 1;
                    continue;
                }
                sender->length += (size_t)length;
                sender->answer[sender->length] = 0;
                char *head_end = strstr(sender->answer, "\r\n\r\n");
                if (!head_end) continue;
                /* 204 has no body; a problem's body or a read's is short and its length is given. */
                char *content_length = strcasestr(sender->answer, "content-length: ");
                size_t body = content_length && content_length < head_end ? (size_t)atol(content_length + 16) : 0;
                if (sender->length < (size_t)(head_end + 4 - sender->answer) + body) continue;
                if (strncmp(sender->answer, anonymous ? "HTTP/1.1 200" : "HTTP/1.1 204", 12) == 0) ok++;
                else refused++;
                sender->busy = 0;
                sender->length = 0;
                continue;
            }
            struct screen *screen = &screens[which];
            for (;;) {
                ssize_t length = read(screen->fd, data, sizeof data);
                if (length > 0) {
                    size_t offset = 0;
                    while (offset < (size_t)length) {
                        size_t room = sizeof screen->pending - screen->length;
                        size_t piece = (size_t)length - offset < room ? (size_t)length - offset : room;
                        memcpy(screen->pending + screen->length, data + offset, piece);
                        screen->length += piece;
                        offset += piece;
                        int before = screen->states;
                        changes += parse(screen, (int)which, counting);
                        if (before == 0 && screen->states > 0) ready_count++;
                    }
                    continue;
                }
                if (length == 0 || (errno != EAGAIN && errno != EINTR)) {
                    epoll_ctl(epoll, EPOLL_CTL_DEL, screen->fd, NULL);
                    close(screen->fd);
                    lost++;
                }
                break;
            }
        }
    }
    printf(", \"lost\": %d, \"changes\": %ld, \"receipts\": %ld, \"answered\": {\"ok\": %ld, \"other\": %ld},"
           " \"unsent\": %ld, \"seconds\": %d}\n",
           lost, changes, sent, ok, refused, (long)(queue_tail - queue_head), seconds);
    fflush(stdout);
    if (pause) {
        char line[16];
        (void)fgets(line, sizeof line, stdin);
    }
    return 0;
}
