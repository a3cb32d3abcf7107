// The C side of MicroHTTP: libmicrohttpd's header plus wrappers for the C that Swift cannot call
// directly (variadic functions such as MHD_start_daemon and syscall(), va_list callbacks).
#ifndef CMICROHTTPD_SHIM_H
#define CMICROHTTPD_SHIM_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <netinet/in.h>
#include <fcntl.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <microhttpd.h>

/// Receives one libmicrohttpd error message, already formatted.
typedef void (*cmhd_log_sink)(void *context, const char *message);

/// Where libmicrohttpd's error messages go. Owned by the Swift daemon; outlives MHD_stop_daemon.
struct cmhd_logger {
    cmhd_log_sink sink;
    void *context;
};

/// MHD_LogCallback takes a va_list, which Swift cannot receive: format here, hand Swift a string.
static void cmhd_format_log(void *cls, const char *format, va_list arguments) {
    const struct cmhd_logger *logger = (const struct cmhd_logger *)cls;
    char message[512];
    vsnprintf(message, sizeof message, format, arguments);
    logger->sink(logger->context, message);
}

/// Everything the daemon is started with, so the variadic MHD_start_daemon call stays here.
struct cmhd_daemon_options {
    unsigned int flags;
    unsigned int thread_pool_size;
    unsigned int connection_timeout_seconds;
    unsigned int connection_limit;
    unsigned int per_ip_connection_limit;
    size_t connection_memory_limit;
    MHD_AccessHandlerCallback handler;
    void *handler_context;
    MHD_RequestCompletedCallback completed;
    void *completed_context;
    MHD_NotifyConnectionCallback connection_notified;
    void *connection_notified_context;
    /// Called with each request's target as received (MHD_OPTION_URI_LOG_CALLBACK); returns NULL.
    void *(*target_received)(void *context, const char *target, struct MHD_Connection *connection);
    void *target_received_context;
    /// -1 when the daemon takes connections only from MHD_add_connection; else the listening
    /// socket it accepts on itself.
    int listen_socket;
    struct cmhd_logger *logger;
};

static inline struct MHD_Daemon *cmhd_start_daemon(const struct cmhd_daemon_options *options) {
    return MHD_start_daemon(
        options->flags, 0, NULL, NULL, options->handler, options->handler_context,
        MHD_OPTION_EXTERNAL_LOGGER, cmhd_format_log, (void *)options->logger,
        MHD_OPTION_THREAD_POOL_SIZE, options->thread_pool_size,
        MHD_OPTION_CONNECTION_TIMEOUT, options->connection_timeout_seconds,
        MHD_OPTION_CONNECTION_LIMIT, options->connection_limit,
        MHD_OPTION_PER_IP_CONNECTION_LIMIT, options->per_ip_connection_limit,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, options->connection_memory_limit,
        MHD_OPTION_NOTIFY_COMPLETED, options->completed, options->completed_context,
        MHD_OPTION_NOTIFY_CONNECTION, options->connection_notified, options->connection_notified_context,
        MHD_OPTION_URI_LOG_CALLBACK, options->target_received, options->target_received_context,
        options->listen_socket >= 0 ? MHD_OPTION_LISTEN_SOCKET : MHD_OPTION_END, options->listen_socket,
        MHD_OPTION_END);
}

/// Bytes written to a TCP socket that its peer has not acknowledged yet (SIOCOUTQ; ioctl is
/// variadic), or -1.
static inline int cmhd_unacknowledged_bytes(int descriptor) {
    int bytes = 0;
    return ioctl(descriptor, TIOCOUTQ, &bytes) == 0 ? bytes : -1;
}

/// The connection's socket descriptor (MHD_get_connection_info is variadic).
static inline int cmhd_connection_descriptor(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
    return info == NULL ? -1 : (int)info->connect_fd;
}

/// What the connection-notification callback stored for this connection.
static inline void *cmhd_connection_context(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return info == NULL ? NULL : info->socket_context;
}

/// Exempts one connection from the idle timeout (MHD_set_connection_option is variadic).
static inline enum MHD_Result cmhd_disable_connection_timeout(struct MHD_Connection *connection) {
    return MHD_set_connection_option(connection, MHD_CONNECTION_OPTION_TIMEOUT, 0u);
}

/// Whether `address` is on this host: 127.0.0.0/8, ::1, or ::ffff:127.0.0.0/104.
static inline int cmhd_address_is_loopback(const struct sockaddr *address) {
    if (address == NULL) return 0;
    if (address->sa_family == AF_INET) {
        const unsigned char *bytes = (const unsigned char *)&((const struct sockaddr_in *)address)->sin_addr;
        return bytes[0] == 127;
    }
    if (address->sa_family == AF_INET6) {
        const unsigned char *bytes = ((const struct sockaddr_in6 *)address)->sin6_addr.s6_addr;
        static const unsigned char loopback[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
        static const unsigned char mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
        int isLoopback = 1, isMapped = 1;
        for (int i = 0; i < 16; i++) isLoopback &= bytes[i] == loopback[i];
        for (int i = 0; i < 12; i++) isMapped &= bytes[i] == mapped[i];
        return isLoopback || (isMapped && bytes[12] == 127);
    }
    return 0;
}

/// Whether the client of `connection` is on this host (MHD_get_connection_info is variadic).
static inline int cmhd_client_is_loopback(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    return info == NULL ? 0 : cmhd_address_is_loopback(info->client_addr);
}

/// The current time as an HTTP date (`Tue, 01 Dec 2026 19:45:16 GMT`, RFC 9110) in `buffer`
/// (30 bytes at least); its length.
static inline size_t cmhd_http_date(char *buffer, size_t size) {
    static const char *days[] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
    static const char *months[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
    time_t now = time(NULL);
    struct tm parts;
    if (gmtime_r(&now, &parts) == NULL) return 0;
    int length = snprintf(
        buffer, size, "%s, %02d %s %04d %02d:%02d:%02d GMT", days[parts.tm_wday], parts.tm_mday,
        months[parts.tm_mon], parts.tm_year + 1900, parts.tm_hour, parts.tm_min, parts.tm_sec);
    return length > 0 && (size_t)length < size ? (size_t)length : 0;
}

/// accept4 with SOCK_NONBLOCK and SOCK_CLOEXEC (glibc declares accept4 only under _GNU_SOURCE).
static inline int cmhd_accept(int listening, struct sockaddr *address, socklen_t *length) {
    return (int)syscall(SYS_accept4, listening, address, length, SOCK_NONBLOCK | SOCK_CLOEXEC);
}

/// CPUs this process may run on (its affinity mask), or 0 if unknown. Through the variadic
/// syscall(): glibc's sched_getaffinity is only declared under _GNU_SOURCE.
static inline int cmhd_allowed_cpu_count(void) {
    unsigned long mask[16]; /* 1024 CPUs */
    long bytes = syscall(SYS_sched_getaffinity, 0, sizeof mask, mask);
    int count = 0;
    for (long word = 0; bytes > 0 && word < bytes / (long)sizeof mask[0]; word++) {
        count += __builtin_popcountl(mask[word]);
    }
    return count;
}

/// open()'s O_TMPFILE (glibc declares it only under _GNU_SOURCE): opening a directory with it
/// makes a file with no name there. Its bits differ by architecture only through O_DIRECTORY.
static inline int cmhd_unnamed_file_flag(void) {
    return 020000000 /* __O_TMPFILE */ | O_DIRECTORY;
}

/// An anonymous in-memory file, closed on exec, that can be sealed (glibc declares memfd_create
/// only under _GNU_SOURCE); -1 and errno when it cannot be made.
static inline int cmhd_memory_file(const char *name) {
    return (int)syscall(SYS_memfd_create, name, 0x0001U /* MFD_CLOEXEC */ | 0x0002U /* MFD_ALLOW_SEALING */);
}

/// Seals a memory file as it is: it can no longer grow, shrink or be written (fcntl is
/// variadic; the F_SEAL_* names are also _GNU_SOURCE's). 0, or -1 and errno.
static inline int cmhd_seal_memory_file(int descriptor) {
    const int addSeals = 1024 + 9; /* F_LINUX_SPECIFIC_BASE + 9 */
    const int seals = 0x0001 /* SEAL */ | 0x0002 /* SHRINK */ | 0x0004 /* GROW */ | 0x0008 /* WRITE */;
    return fcntl(descriptor, addSeals, seals);
}

#endif
