/*
 * When each event of a Server-Sent Events stream arrives, for `make bench`'s timing figures.
 *
 *   sse_arrivals --port P [--path /banner/events] --events N [--seconds S]
 *
 * Subscribes, then for each of the first N events (or those that came within S seconds, 60 by
 * default) prints one line: the arrival time
 * (CLOCK_REALTIME, seconds since the epoch with microseconds, read as soon as recv returns) and
 * the event's data. A blocking recv in C wakes as fast as the kernel allows; a Python client's
 * own wake-up tail (milliseconds on an idle VM) would otherwise be counted as the server's lateness.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv) {
    int port = 0, events = 0;
    double seconds = 60;
    const char *path = "/banner/events";
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--port")) port = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--path")) path = argv[i + 1];
        else if (!strcmp(argv[i], "--events")) events = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--seconds")) seconds = atof(argv[i + 1]);
    }
    if (port <= 0 || events <= 0) {
        fprintf(stderr, "usage: sse_arrivals --port P [--path /banner/events] --events N [--seconds S]\n");
        return 2;
    }
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in address = {.sin_family = AF_INET, .sin_port = htons((unsigned short)port)};
    inet_pton(AF_INET, "127.0.0.1", &address.sin_addr);
    if (connect(fd, (struct sockaddr *)&address, sizeof address) != 0) {
        perror("sse_arrivals: connect");
        return 1;
    }
    char request[512];
    int length = snprintf(request, sizeof request, "GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", path);
    if (write(fd, request, (size_t)length) != length) {
        perror("sse_arrivals: write");
        return 1;
    }
    static char buffer[1 << 20];
    size_t used = 0;
    int seen = 0;
    struct timespec start;
    clock_gettime(CLOCK_MONOTONIC, &start);
    while (seen < events) {
        struct timespec clock;
        clock_gettime(CLOCK_MONOTONIC, &clock);
        double left = seconds - (double)(clock.tv_sec - start.tv_sec) - (clock.tv_nsec - start.tv_nsec) / 1e9;
        if (left <= 0) break;  /* what came in time is the answer */
        struct timeval wait = {.tv_sec = (time_t)left, .tv_usec = (suseconds_t)((left - (long)left) * 1e6) + 1};
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &wait, sizeof wait);
        ssize_t count = recv(fd, buffer + used, sizeof buffer - used - 1, 0);
        struct timespec now;
        clock_gettime(CLOCK_REALTIME, &now);
        if (count < 0) continue;  /* the deadline; checked above */
        if (count == 0) {
            fprintf(stderr, "sse_arrivals: the stream ended after %d events\n", seen);
            return 1;
        }
        used += (size_t)count;
        buffer[used] = 0;
        char *cursor = buffer;
        char *data;
        /* An event's data line ends with "\n\n"; chunk framing never splits a line we print. */
        while (seen < events && (data = strstr(cursor, "\ndata: ")) && strstr(data + 7, "\n\n")) {
            char *end = strstr(data + 7, "\n");
            printf("%ld.%06ld %.*s\n", (long)now.tv_sec, now.tv_nsec / 1000, (int)(end - data - 7), data + 7);
            seen++;
            cursor = end;
        }
        used = (size_t)(buffer + used - cursor);
        memmove(buffer, cursor, used);
    }
    fflush(stdout);
    close(fd);
    return 0;
}
