// The C side of PostgresStore: libpq's header (Debian's libpq-dev, /usr/include/postgresql) and
// a wrapper for each function the store calls.
#ifndef CPOSTGRES_SHIM_H
#define CPOSTGRES_SHIM_H

#include "../CDynamicLibrary/dynamic_library.h"
#include <postgresql/libpq-fe.h>

// libpq is opened when a store on PostgreSQL is, not linked: it and what it brings (Kerberos,
// LDAP, OpenSSL) cost some 3 MiB of resident memory to map at every start, on SQLite too
// (docs/PERFORMANCE.md, idle memory). Its header gives the types and signatures; each wrapper
// calls through a pointer found once with dlsym.

DYNAMIC_LIBRARY(cpq_library, "libpq.so.5", RTLD_LOCAL)
/// libpq's function `name`. Only called once `cpq_start` succeeded.
#define CPQ(name) DYNAMIC_SYMBOL(cpq_library, name)

/// Opens libpq, before a store on PostgreSQL is opened: NULL when it is open, else why not.
static inline const char *cpq_start(void) { return cpq_library() == NULL ? dlerror() : NULL; }

static inline void cpq_clear(PGresult *res) { CPQ(PQclear)(res); }
static inline PGconn *cpq_connectdbParams(const char *const *keywords, const char *const *values, int expand_dbname) {
    return CPQ(PQconnectdbParams)(keywords, values, expand_dbname);
}
static inline void cpq_conninfoFree(PQconninfoOption *options) { CPQ(PQconninfoFree)(options); }
static inline PQconninfoOption *cpq_conninfoParse(const char *conninfo, char **errmsg) {
    return CPQ(PQconninfoParse)(conninfo, errmsg);
}
static inline int cpq_consumeInput(PGconn *conn) { return CPQ(PQconsumeInput)(conn); }
static inline char *cpq_errorMessage(const PGconn *conn) { return CPQ(PQerrorMessage)(conn); }
static inline PGresult *cpq_exec(PGconn *conn, const char *query) { return CPQ(PQexec)(conn, query); }
static inline PGresult *cpq_execPrepared(PGconn *conn, const char *name, int count, const char *const *values,
    const int *lengths, const int *formats, int resultFormat) {
    return CPQ(PQexecPrepared)(conn, name, count, values, lengths, formats, resultFormat);
}
static inline void cpq_finish(PGconn *conn) { CPQ(PQfinish)(conn); }
static inline void cpq_freemem(void *pointer) { CPQ(PQfreemem)(pointer); }
static inline int cpq_getisnull(const PGresult *res, int row, int field) { return CPQ(PQgetisnull)(res, row, field); }
static inline char *cpq_getvalue(const PGresult *res, int row, int field) { return CPQ(PQgetvalue)(res, row, field); }
static inline int cpq_nfields(const PGresult *res) { return CPQ(PQnfields)(res); }
static inline PGnotify *cpq_notifies(PGconn *conn) { return CPQ(PQnotifies)(conn); }
static inline int cpq_ntuples(const PGresult *res) { return CPQ(PQntuples)(res); }
static inline PGresult *cpq_prepare(PGconn *conn, const char *name, const char *query, int count, const Oid *types) {
    return CPQ(PQprepare)(conn, name, query, count, types);
}
static inline char *cpq_resultErrorField(const PGresult *res, int code) { return CPQ(PQresultErrorField)(res, code); }
static inline char *cpq_resultErrorMessage(const PGresult *res) { return CPQ(PQresultErrorMessage)(res); }
static inline ExecStatusType cpq_resultStatus(const PGresult *res) { return CPQ(PQresultStatus)(res); }
static inline int cpq_serverVersion(const PGconn *conn) { return CPQ(PQserverVersion)(conn); }
static inline int cpq_socket(const PGconn *conn) { return CPQ(PQsocket)(conn); }
static inline ConnStatusType cpq_status(const PGconn *conn) { return CPQ(PQstatus)(conn); }

#endif
