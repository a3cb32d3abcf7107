// The C side of the Media module: libvips' header plus wrappers for its variadic calls, which
// Swift cannot make. Each wrapper sets every option this service relies on, so the Swift side
// never chooses a loader, a limit or an encoder setting by itself (docs/MEDIA.md).
#ifndef CVIPS_SHIM_H
#define CVIPS_SHIM_H

#include <malloc.h>
#include <vips/vips.h>

/// Allocations of 1 MiB and more (an upload's body, a decode's buffers) mapped on their own and
/// unmapped when freed. glibc's threshold otherwise rises to 32 MiB as large blocks are freed, and
/// later ones stay in its arenas: 14 photos decoded left the process ~130 MiB larger for good
/// (docs/MEDIA.md, memory).
static inline void cvips_unmap_large_allocations(void) { mallopt(M_MMAP_THRESHOLD, 1 << 20); }

/// Gives what the arenas hold free back to the system.
static inline void cvips_release_freed_memory(void) { malloc_trim(0); }

/// Starts libvips once per process. Every loader is blocked but the five formats the service
/// accepts (an upload never reaches ImageMagick, SVG, PDF or any other parser libvips links),
/// and libvips' operation cache is off (each upload is decoded once; a cache only holds memory).
/// 0 on success.
static void cvips_quiet(const gchar *domain, GLogLevelFlags level, const gchar *message, gpointer data) {}

static inline int cvips_start(void) {
    if (VIPS_INIT("banner-server")) return -1;
    // libvips prints its warnings about a bad file on stderr; the service reports the file's
    // refusal with libvips' error text in its own log line instead.
    g_log_set_handler("VIPS", G_LOG_LEVEL_WARNING | G_LOG_LEVEL_MESSAGE, cvips_quiet, NULL);
    vips_operation_block_set("VipsForeignLoad", TRUE);
    vips_operation_block_set("VipsForeignLoadJpeg", FALSE);
    vips_operation_block_set("VipsForeignLoadPng", FALSE);
    vips_operation_block_set("VipsForeignLoadWebp", FALSE);
    vips_operation_block_set("VipsForeignLoadNsgif", FALSE);
    vips_operation_block_set("VipsForeignLoadHeif", FALSE);
    vips_cache_set_max(0);
    // One thread per decode: the service bounds decodes itself (mediaDecodes), so that uploads
    // never take every core from the request threads.
    vips_concurrency_set(1);
    return 0;
}

/// The image's header only (no pixel is decoded): width, height, and whether the file is one of
/// the allowed loaders' at all. `data` must outlive the image. NULL on failure (vips_error_buffer).
static inline VipsImage *cvips_header(const void *data, size_t length) {
    return vips_image_new_from_buffer(data, length, "", "fail_on", VIPS_FAIL_ON_ERROR, NULL);
}

/// The image decoded (the first frame of an animation), turned upright by its orientation tag,
/// in sRGB, scaled down to at most `width` pixels wide (never up), held in memory: what every
/// variant is made from. NULL on failure, a truncated or corrupt file included.
static inline VipsImage *cvips_decode(const void *data, size_t length, int width) {
    VipsImage *scaled = NULL;
    if (vips_thumbnail_buffer((void *)data, length, &scaled, width, "height", VIPS_MAX_COORD, "size", VIPS_SIZE_DOWN,
            "option_string", "fail_on=error", NULL))
        return NULL;
    VipsImage *decoded = vips_image_copy_memory(scaled);
    g_object_unref(scaled);
    return decoded;
}

/// `image` scaled to exactly `width` pixels wide and saved as WebP, asking for no metadata (no
/// EXIF, no GPS, no XMP, no ICC: the pixels are sRGB already; LibVips.swift says why that is not
/// enough). The buffer is g_free'd by the caller.
static inline int cvips_webp_variant(VipsImage *image, int width, int quality, void **buffer, size_t *length) {
    VipsImage *scaled = NULL;
    if (vips_thumbnail_image(image, &scaled, width, "height", VIPS_MAX_COORD, "size", VIPS_SIZE_DOWN, NULL)) return -1;
    int result = vips_webpsave_buffer(scaled, buffer, length, "Q", quality, "strip", TRUE, NULL);
    g_object_unref(scaled);
    return result;
}

static inline int cvips_width(VipsImage *image) { return vips_image_get_width(image); }
static inline int cvips_height(VipsImage *image) { return vips_image_get_height(image); }
/// Whether the orientation tag turns the image a quarter (width and height swap when upright).
/// The EXIF orientation tag (1 upright … 8), 1 when there is none.
static inline int cvips_orientation(VipsImage *image) { return vips_image_get_orientation(image); }
static inline int cvips_turns_sideways(VipsImage *image) { return vips_image_get_orientation_swap(image); }
/// What libvips reported since the last call, copied (the caller frees it with g_free), and cleared.
static inline char *cvips_take_error(void) { return vips_error_buffer_copy(); }
static inline void cvips_free(void *pointer) { g_free(pointer); }
static inline void cvips_release(VipsImage *image) { g_object_unref(image); }

#endif
