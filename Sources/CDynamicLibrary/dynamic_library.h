// A C library opened on first use rather than linked (docs/PERFORMANCE.md, idle memory): what
// the shims of libvips, libcurl and libpq share. Included by path; not a module of its own.
#ifndef CDYNAMIC_LIBRARY_H
#define CDYNAMIC_LIBRARY_H

#include <dlfcn.h>

/// Defines `static void *function(void)`: the library `soname`, opened once with `flags`
/// (each translation unit keeps the handle it got: dlopen counts them); NULL when it cannot be
/// opened (dlerror says why).
#define DYNAMIC_LIBRARY(function, soname, flags)                                                               \
    static inline void *function(void) {                                                                       \
        static void *handle;                                                                                   \
        void *opened = __atomic_load_n(&handle, __ATOMIC_ACQUIRE);                                             \
        if (opened == NULL) {                                                                                  \
            opened = dlopen(soname, RTLD_NOW | (flags));                                                       \
            __atomic_store_n(&handle, opened, __ATOMIC_RELEASE);                                               \
        }                                                                                                      \
        return opened;                                                                                         \
    }

/// The function `name` of the library `library()` opens, typed as its header declares it (the
/// declaration is only read, never linked); looked up once per call site, atomically, since any
/// thread may be the first. Only used once the library is known to open.
#define DYNAMIC_SYMBOL(library, name)                                                                          \
    ({                                                                                                         \
        static __typeof__(&name) cached;                                                                       \
        __typeof__(&name) found = __atomic_load_n(&cached, __ATOMIC_ACQUIRE);                                  \
        if (found == NULL) {                                                                                   \
            found = (__typeof__(&name))dlsym(library(), #name);                                                \
            __atomic_store_n(&cached, found, __ATOMIC_RELEASE);                                                \
        }                                                                                                      \
        found;                                                                                                 \
    })

#endif
