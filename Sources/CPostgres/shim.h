// The C side of PostgresStore: libpq's header (Debian's libpq-dev, /usr/include/postgresql).
#ifndef CPOSTGRES_SHIM_H
#define CPOSTGRES_SHIM_H

#include <libpq-fe.h>

#endif
