// The C side of the Media module: libvips' header plus wrappers for its variadic calls, which
// Swift cannot make. Each wrapper sets every option this service relies on, so the Swift side
// never chooses a loader, a limit or an encoder setting by itself (docs/MEDIA.md).
#ifndef CVIPS_SHIM_H
#define CVIPS_SHIM_H

#include "../CDynamicLibrary/dynamic_library.h"
#include <malloc.h>
#include <stddef.h>
#include <stdio.h>

// libvips is opened on first use (an upload), not linked: it and the 90 libraries it brings
// (GLib, the image codecs, ImageMagick, poppler…) cost some 12 MiB of resident memory to map and
// relocate at every start, which a service that takes no upload should not carry
// (docs/PERFORMANCE.md, idle memory). So this header declares the little of libvips' and GLib's
// API it calls, as libvips 8's headers (ABI 42, libvips.so.42) declare it — their own headers
// need GLib's include paths, whose pkg-config entry would link libvips in again — and every call
// goes through a pointer found once with dlsym. `cvips_start` checks the ABI first.

typedef struct _VipsImage VipsImage;
typedef int gboolean;
typedef char gchar;
typedef void *gpointer;
typedef int GLogLevelFlags;
typedef void (*GLogFunc)(const gchar *domain, GLogLevelFlags level, const gchar *message, gpointer data);

#define TRUE 1
#define FALSE 0
/// The ABI this header is written for: libvips.so.42 (VIPS_LIBRARY_CURRENT − VIPS_LIBRARY_AGE).
#define CVIPS_ABI 42
#define CVIPS_LOG_WARNING (1 << 4)  // G_LOG_LEVEL_WARNING
#define CVIPS_LOG_MESSAGE (1 << 5)  // G_LOG_LEVEL_MESSAGE
#define CVIPS_FAIL_ON_ERROR 2  // VipsFailOn: none, truncated, error, warning
#define CVIPS_SIZE_DOWN 2  // VipsSize: both, up, down, force
#define CVIPS_MAX_COORD 10000000  // VIPS_MAX_COORD

int vips_version(int flag);
int vips_init(const char *argv0);
char *vips_error_buffer_copy(void);
void vips_operation_block_set(const char *name, gboolean state);
void vips_cache_set_max(int max);
void vips_concurrency_set(int concurrency);
VipsImage *vips_image_new_from_buffer(const void *buf, size_t len, const char *option_string, ...);
int vips_thumbnail_buffer(void *buf, size_t len, VipsImage **out, int width, ...);
int vips_thumbnail_image(VipsImage *in, VipsImage **out, int width, ...);
int vips_webpsave_buffer(VipsImage *in, void **buf, size_t *len, ...);
VipsImage *vips_image_copy_memory(VipsImage *image);
int vips_image_get_width(const VipsImage *image);
int vips_image_get_height(const VipsImage *image);
int vips_image_get_orientation(VipsImage *image);
gboolean vips_image_get_orientation_swap(VipsImage *image);
unsigned int g_log_set_handler(const gchar *domain, GLogLevelFlags levels, GLogFunc handler, gpointer data);
void g_object_unref(gpointer object);
void g_free(gpointer pointer);

/// libvips, opened once; RTLD_GLOBAL, as its modules (the HEIF loader) expect to find it.
DYNAMIC_LIBRARY(cvips_library, "libvips.so.42", RTLD_GLOBAL)
/// The function `name` of libvips (or of GLib, which it links). Only called once `cvips_start`
/// succeeded.
#define CVIPS(name) DYNAMIC_SYMBOL(cvips_library, name)

/// Allocations of 1 MiB and more (an upload's body, a decode's buffers) mapped on their own and
/// unmapped when freed. glibc's threshold otherwise rises to 32 MiB as large blocks are freed, and
/// later ones stay in its arenas: 14 photos decoded left the process ~130 MiB larger for good
/// (docs/MEDIA.md, memory).
static inline void cvips_unmap_large_allocations(void) { mallopt(M_MMAP_THRESHOLD, 1 << 20); }

/// Gives what the arenas hold free back to the system.
static inline void cvips_release_freed_memory(void) { malloc_trim(0); }

/// Starts libvips once per process (opening it). Every loader is blocked but the five formats the service
/// accepts (an upload never reaches ImageMagick, SVG, PDF or any other parser libvips links),
/// and libvips' operation cache is off (each upload is decoded once; a cache only holds memory).
static void cvips_quiet(const gchar *domain, GLogLevelFlags level, const gchar *message, gpointer data) {}

/// 0 on success; else -1 with why in `failure` (`size` bytes at most): libvips missing, of
/// another ABI than the header's, or its own error.
static inline int cvips_start(char *failure, size_t size) {
    if (cvips_library() == NULL) {
        snprintf(failure, size, "libvips cannot be loaded: %s (install libvips42)", dlerror());
        return -1;
    }
    int abi = CVIPS(vips_version)(3) - CVIPS(vips_version)(5);
    if (abi != CVIPS_ABI) {
        snprintf(failure, size, "libvips has ABI version %d, this build calls ABI %d (libvips.so.42)", abi, CVIPS_ABI);
        return -1;
    }
    if (CVIPS(vips_init)("banner-server")) {
        char *reason = CVIPS(vips_error_buffer_copy)();
        snprintf(failure, size, "libvips did not start: %s", reason);
        CVIPS(g_free)(reason);
        return -1;
    }
    // libvips prints its warnings about a bad file on stderr; the service reports the file's
    // refusal with libvips' error text in its own log line instead.
    CVIPS(g_log_set_handler)("VIPS", CVIPS_LOG_WARNING | CVIPS_LOG_MESSAGE, cvips_quiet, NULL);
    CVIPS(vips_operation_block_set)("VipsForeignLoad", TRUE);
    CVIPS(vips_operation_block_set)("VipsForeignLoadJpeg", FALSE);
    CVIPS(vips_operation_block_set)("VipsForeignLoadPng", FALSE);
    CVIPS(vips_operation_block_set)("VipsForeignLoadWebp", FALSE);
    CVIPS(vips_operation_block_set)("VipsForeignLoadNsgif", FALSE);
    CVIPS(vips_operation_block_set)("VipsForeignLoadHeif", FALSE);
    CVIPS(vips_cache_set_max)(0);
    // One thread per decode: the service bounds decodes itself (mediaDecodes), so that uploads
    // never take every core from the request threads.
    CVIPS(vips_concurrency_set)(1);
    return 0;
}

/// The image's header only (no pixel is decoded): width, height, and whether the file is one of
/// the allowed loaders' at all. `data` must outlive the image. NULL on failure (vips_error_buffer).
static inline VipsImage *cvips_header(const void *data, size_t length) {
    return CVIPS(vips_image_new_from_buffer)(data, length, "", "fail_on", CVIPS_FAIL_ON_ERROR, NULL);
}

/// The image decoded (the first frame of an animation), turned upright by its orientation tag,
/// in sRGB, scaled down to at most `width` pixels wide (never up), held in memory: what every
/// variant is made from. NULL on failure, a truncated or corrupt file included.
static inline VipsImage *cvips_decode(const void *data, size_t length, int width) {
    VipsImage *scaled = NULL;
    if (CVIPS(vips_thumbnail_buffer)((void *)data, length, &scaled, width, "height", CVIPS_MAX_COORD, "size",
            CVIPS_SIZE_DOWN,
            "option_string", "fail_on=error", NULL))
        return NULL;
    VipsImage *decoded = CVIPS(vips_image_copy_memory)(scaled);
    CVIPS(g_object_unref)(scaled);
    return decoded;
}

/// `image` scaled to exactly `width` pixels wide and saved as WebP, asking for no metadata (no
/// EXIF, no GPS, no XMP, no ICC: the pixels are sRGB already; LibVips.swift says why that is not
/// enough). The buffer is g_free'd by the caller.
static inline int cvips_webp_variant(VipsImage *image, int width, int quality, void **buffer, size_t *length) {
    VipsImage *scaled = NULL;
    if (CVIPS(vips_thumbnail_image)(image, &scaled, width, "height", CVIPS_MAX_COORD, "size", CVIPS_SIZE_DOWN, NULL))
        return -1;
    int result = CVIPS(vips_webpsave_buffer)(scaled, buffer, length, "Q", quality, "strip", TRUE, NULL);
    CVIPS(g_object_unref)(scaled);
    return result;
}

static inline int cvips_width(VipsImage *image) { return CVIPS(vips_image_get_width)(image); }
static inline int cvips_height(VipsImage *image) { return CVIPS(vips_image_get_height)(image); }
/// Whether the orientation tag turns the image a quarter (width and height swap when upright).
/// The EXIF orientation tag (1 upright … 8), 1 when there is none.
static inline int cvips_orientation(VipsImage *image) { return CVIPS(vips_image_get_orientation)(image); }
static inline int cvips_turns_sideways(VipsImage *image) { return CVIPS(vips_image_get_orientation_swap)(image); }
/// What libvips reported since the last call, copied (the caller frees it with g_free), and cleared.
static inline char *cvips_take_error(void) { return CVIPS(vips_error_buffer_copy)(); }
static inline void cvips_free(void *pointer) { CVIPS(g_free)(pointer); }
static inline void cvips_release(VipsImage *image) { CVIPS(g_object_unref)(image); }

#endif
