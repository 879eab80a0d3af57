/*
 * hurray_test.h - the tiny assertion and fixture helpers shared by the C test suite
 * (tests/c/test_*.c). Plain C11 + POSIX threads; no test framework.
 *
 * Each test program is a list of test functions run from main() with RUN(test_x);
 * the first failed CHECK prints file, line and the expression, and exits 1. Every
 * program ends with END_TESTS(), which also asserts hurray_debug_live_objects() == 0.
 *
 * Environment (set by `cargo xtask test`, stage "C test suite"):
 *   HURRAY_CONFORMANCE_DIR  ../shared/conformance (tests needing it skip without it)
 *   HURRAY_TEST_TMPDIR      a scratch directory for files the tests write
 *   HURRAY_TEST_DEBUG_BUILD "1" when linked against a debug build of hurray-ffi
 */
#ifndef HURRAY_TEST_H
#define HURRAY_TEST_H

/* POSIX (pthreads, stat, unlink, dlopen) on top of strict C11; include this first. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hurray.h"

static int hurray_test_checks = 0;

#define CHECK(cond)                                                                  \
    do {                                                                             \
        hurray_test_checks++;                                                        \
        if (!(cond)) {                                                               \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
            exit(1);                                                                 \
        }                                                                            \
    } while (0)

/* Asserts a call returns HURRAY_OK; prints the status and message otherwise. */
#define CHECK_OK(call)                                                               \
    do {                                                                             \
        HurrayStatus s_ = (call);                                                    \
        hurray_test_checks++;                                                        \
        if (s_ != HURRAY_OK) {                                                       \
            const char *m_ = hurray_last_error_message();                            \
            fprintf(stderr, "%s:%d: %s returned %s: %s\n", __FILE__, __LINE__, #call, \
                    hurray_status_name(s_), m_ ? m_ : "(no message)");               \
            exit(1);                                                                 \
        }                                                                            \
    } while (0)

/*
 * Asserts a call fails with `want` and leaves a non-empty message that starts with
 * the status name and carries some detail after it.
 */
#define CHECK_ERR(want, call)                                                        \
    do {                                                                             \
        HurrayStatus s_ = (call);                                                    \
        hurray_test_checks++;                                                        \
        if (s_ != (want)) {                                                          \
            const char *m_ = hurray_last_error_message();                            \
            fprintf(stderr, "%s:%d: %s returned %s, expected %s (%s)\n", __FILE__,     \
                    __LINE__, #call, hurray_status_name(s_), hurray_status_name(want), \
                    s_ != HURRAY_OK && m_ ? m_ : "");                                \
            exit(1);                                                                 \
        }                                                                            \
        hurray_test_check_message(__FILE__, __LINE__, #call, want);                  \
    } while (0)

static inline void hurray_test_check_message(const char *file, int line, const char *call,
                                             HurrayStatus want) {
    const char *m = hurray_last_error_message();
    const char *name = hurray_status_name(want);
    size_t n = strlen(name);
    if (m == NULL || strncmp(m, name, n) != 0 || strlen(m) < n + 3) {
        fprintf(stderr, "%s:%d: %s: last error message %s%s%s lacks \"%s: <detail>\"\n", file,
                line, call, m ? "\"" : "", m ? m : "NULL", m ? "\"" : "", name);
        exit(1);
    }
}

#define RUN(test)                                   \
    do {                                            \
        int before_ = hurray_test_checks;           \
        test();                                     \
        printf("ok   %s (%d checks)\n", #test, hurray_test_checks - before_); \
        fflush(stdout);                             \
    } while (0)

#define SKIP(why)                          \
    do {                                   \
        printf("skip %s: %s\n", __func__, why); \
        return;                            \
    } while (0)

/* Every program ends here: nothing leaked, nothing released twice. */
#define END_TESTS()                                                                  \
    do {                                                                             \
        int64_t live_ = hurray_debug_live_objects();                                 \
        if (live_ != 0) {                                                            \
            fprintf(stderr, "hurray_debug_live_objects() = %lld at exit\n", (long long)live_); \
            return 1;                                                                \
        }                                                                            \
        printf("all passed (%d checks, 0 live objects)\n", hurray_test_checks);      \
        return 0;                                                                    \
    } while (0)

/* ---- fixtures ------------------------------------------------------------------ */

/* A counting release context: the callback may run on any thread. */
typedef struct Released {
    atomic_int count;
    void *memory; /* freed by the callback when not NULL */
} Released;

static inline void released_init(Released *r, void *memory) {
    atomic_init(&r->count, 0);
    r->memory = memory;
}

static inline void count_release(void *context) {
    Released *r = (Released *)context;
    free(r->memory);
    r->memory = NULL;
    atomic_fetch_add(&r->count, 1);
}

static inline int released_count(Released *r) { return atomic_load(&r->count); }

/* 64-byte-aligned heap memory of at least `size` bytes (aligned_alloc wants a multiple). */
static inline void *alloc64(size_t size) {
    size_t rounded = (size + 63) / 64 * 64;
    void *p = aligned_alloc(64, rounded ? rounded : 64);
    if (p == NULL) {
        fprintf(stderr, "out of memory\n");
        exit(1);
    }
    return p;
}

/* Encoded bytes of a dense row-major descriptor; *len receives the length. */
static inline uint8_t *dense_descriptor_bytes(uint8_t type_tag, uint32_t rank, const uint64_t *shape,
                                              uint64_t *len) {
    HurrayDescriptor *d = NULL;
    CHECK_OK(hurray_descriptor_dense(type_tag, rank, shape, &d));
    CHECK_OK(hurray_descriptor_encode(d, NULL, 0, len));
    uint8_t *bytes = (uint8_t *)malloc(*len);
    CHECK(bytes != NULL);
    uint64_t written = 0;
    CHECK_OK(hurray_descriptor_encode(d, bytes, *len, &written));
    CHECK(written == *len);
    CHECK_OK(hurray_descriptor_destroy(&d));
    CHECK(d == NULL);
    return bytes;
}

/*
 * A dense float32 tensor of `count` elements over freshly allocated 64-byte-aligned
 * memory holding 0, 1, 2, ...; the buffer's release callback frees the memory and
 * counts in `rel`. `owner_rel` (may be NULL) is counted as the tensor's owner.
 */
static inline HurrayTensor *own_memory_tensor(uint64_t count, Released *rel, Released *owner_rel) {
    size_t size = (size_t)count * sizeof(float);
    float *data = (float *)alloc64(size);
    for (uint64_t i = 0; i < count; i++) data[i] = (float)i;
    released_init(rel, data);
    uint64_t len = 0;
    uint8_t *desc = dense_descriptor_bytes(HURRAY_TYPE_FLOAT32, 1, &count, &len);
    HurrayBuffer *buf = NULL;
    CHECK_OK(hurray_buffer_new(data, size, 64, HURRAY_DEVICE_CPU, HURRAY_SYNC_PRODUCER_SYNCED,
                               HURRAY_MEMORY_STANDARD, NULL, count_release, rel, &buf));
    HurrayBufferList *list = NULL;
    CHECK_OK(hurray_buffer_list_new(&list));
    CHECK_OK(hurray_buffer_list_push(list, &buf));
    CHECK(buf == NULL);
    HurrayTensor *t = NULL;
    if (owner_rel) released_init(owner_rel, NULL);
    CHECK_OK(hurray_tensor_new(HURRAY_C_ABI_VERSION, desc, len, list, owner_rel,
                               owner_rel ? count_release : NULL, &t));
    free(desc);
    CHECK(t != NULL);
    return t;
}

/* The bytes of buffer `i` of a tensor (borrowed). */
static inline const uint8_t *tensor_bytes(const HurrayTensor *t, uint64_t i, uint64_t *size) {
    const void *data = NULL;
    CHECK_OK(hurray_tensor_buffer_data(t, i, &data, size));
    return (const uint8_t *)data;
}

/* Whether two tensors have equal descriptors (encoded bytes) and buffer bytes. */
static inline int tensors_equal(const HurrayTensor *a, const HurrayTensor *b) {
    const HurrayDescriptor *da = NULL, *db = NULL;
    CHECK_OK(hurray_tensor_descriptor(a, &da));
    CHECK_OK(hurray_tensor_descriptor(b, &db));
    uint8_t ea[4096], eb[4096];
    uint64_t la = 0, lb = 0;
    CHECK_OK(hurray_descriptor_encode(da, ea, sizeof ea, &la));
    CHECK_OK(hurray_descriptor_encode(db, eb, sizeof eb, &lb));
    if (la != lb || memcmp(ea, eb, la) != 0) return 0;
    const HurrayBufferList *ba = NULL, *bb = NULL;
    uint64_t na = 0, nb = 0;
    CHECK_OK(hurray_tensor_buffers(a, &ba));
    CHECK_OK(hurray_tensor_buffers(b, &bb));
    CHECK_OK(hurray_buffer_list_len(ba, &na));
    CHECK_OK(hurray_buffer_list_len(bb, &nb));
    if (na != nb) return 0;
    for (uint64_t i = 0; i < na; i++) {
        uint64_t sa = 0, sb = 0;
        const uint8_t *pa = tensor_bytes(a, i, &sa);
        const uint8_t *pb = tensor_bytes(b, i, &sb);
        if (sa != sb || (sa && memcmp(pa, pb, sa) != 0)) return 0;
    }
    return 1;
}

/* A growable byte array: the in-memory "stream" the stream tests write and read. */
typedef struct Bytes {
    uint8_t *data;
    size_t len, cap;
} Bytes;

static inline void bytes_append(Bytes *b, const void *p, size_t n) {
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + n) cap *= 2;
        b->data = (uint8_t *)realloc(b->data, cap);
        CHECK(b->data != NULL);
        b->cap = cap;
    }
    if (n) memcpy(b->data + b->len, p, n);
    b->len += n;
}

static inline void bytes_free(Bytes *b) {
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}

/* Writes one tensor to `out` through a stream encoder (chunks appended in order). */
static inline void encode_tensor(HurrayStreamEncoder *enc, const HurrayTensor *t, Bytes *out) {
    uint64_t chunks = 0, total = 0;
    CHECK_OK(hurray_stream_encoder_begin_tensor(enc, t, &chunks, &total));
    size_t start = out->len;
    for (uint64_t i = 0; i < chunks; i++) {
        const uint8_t *p = NULL;
        uint64_t n = 0;
        CHECK_OK(hurray_stream_encoder_chunk(enc, i, &p, &n));
        CHECK(n > 0);
        bytes_append(out, p, (size_t)n);
    }
    CHECK(out->len - start == total);
}

/* A whole file, NUL-terminated (malloc'ed; *len excludes the NUL), or NULL when it
 * cannot be opened. */
static inline char *read_whole(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    CHECK(fseek(f, 0, SEEK_END) == 0);
    long n = ftell(f);
    CHECK(n >= 0);
    CHECK(fseek(f, 0, SEEK_SET) == 0);
    char *buf = (char *)malloc((size_t)n + 1);
    CHECK(buf != NULL);
    CHECK(fread(buf, 1, (size_t)n, f) == (size_t)n);
    buf[n] = 0;
    fclose(f);
    *len = (size_t)n;
    return buf;
}

/*
 * An owned float32 composite-head descriptor of shape [2] grouping `members` tensors,
 * built in one call from a view filled in by hand (zeroed first: every field this
 * layout does not have stays NULL or 0).
 */
static inline HurrayDescriptor *composite_head_descriptor(uint32_t members) {
    uint64_t shape = 2;
    HurrayCompositeHead head;
    memset(&head, 0, sizeof head);
    head.member_count = members;
    head.composition_rule = HURRAY_COMPOSITION_GROUP;
    head.combine_op = HURRAY_COMBINE_NONE;
    HurrayDescriptorView v;
    memset(&v, 0, sizeof v);
    v.header.type_tag = HURRAY_TYPE_FLOAT32;
    v.header.layout_tag = HURRAY_LAYOUT_COMPOSITE_HEAD;
    v.header.rank = 1;
    v.shape = &shape;
    v.composite_head = &head;
    HurrayDescriptor *d = NULL;
    CHECK_OK(hurray_descriptor_from_view(&v, &d));
    return d;
}

/* ---- KV through the tagged value ------------------------------------------------ */

static inline HurrayKvValue kv_of(uint8_t type_tag) {
    HurrayKvValue v;
    memset(&v, 0, sizeof v);
    v.type_tag = type_tag;
    return v;
}
static inline HurrayKvValue kv_string(const char *s) {
    HurrayKvValue v = kv_of(HURRAY_KV_TYPE_STRING);
    v.data = s;
    v.len = s ? strlen(s) : 0;
    return v;
}
static inline HurrayKvValue kv_int64(int64_t x) {
    HurrayKvValue v = kv_of(HURRAY_KV_TYPE_INT64);
    v.int64_value = x;
    return v;
}
static inline HurrayKvValue kv_uint64(uint64_t x) {
    HurrayKvValue v = kv_of(HURRAY_KV_TYPE_UINT64);
    v.uint64_value = x;
    return v;
}
static inline HurrayKvValue kv_float64(double x) {
    HurrayKvValue v = kv_of(HURRAY_KV_TYPE_FLOAT64);
    v.float64_value = x;
    return v;
}
static inline HurrayKvValue kv_bool(uint8_t x) {
    HurrayKvValue v = kv_of(HURRAY_KV_TYPE_BOOL);
    v.bool_value = x;
    return v;
}
/* Bytes (`n` of them), or an array of `n` elements of type `elem` at `p`. */
static inline HurrayKvValue kv_data(uint8_t type_tag, uint8_t elem, const void *p, uint64_t n) {
    HurrayKvValue v = kv_of(type_tag);
    v.element_type = elem;
    v.data = p;
    v.len = n;
    return v;
}

/* Adds KV entry `key` (NUL-terminated) in one call. */
static inline HurrayStatus add_kv(HurrayFileWriter *w, const char *key, HurrayKvValue v) {
    return hurray_file_writer_add_kv(w, key, strlen(key), &v);
}

/* The value of KV entry `key` of r (which must exist), in one call after the lookup. */
static inline HurrayKvValue kv_get(const HurrayFileReader *r, const char *key) {
    uint64_t i = 0;
    HurrayKvValue v;
    CHECK_OK(hurray_file_reader_kv_find(r, key, &i));
    CHECK_OK(hurray_file_reader_kv_value(r, i, &v));
    return v;
}

/* An environment variable, or NULL when unset or empty. */
static inline const char *env_or_null(const char *name) {
    const char *v = getenv(name);
    return v && *v ? v : NULL;
}

/* `dir`/`name` into `out` (PATH_MAX-ish buffer). */
static inline void join_path(char *out, size_t cap, const char *dir, const char *name) {
    int n = snprintf(out, cap, "%s/%s", dir, name);
    CHECK(n > 0 && (size_t)n < cap);
}

/* The scratch directory for files (HURRAY_TEST_TMPDIR, else /tmp). */
static inline const char *tmp_dir(void) {
    const char *d = env_or_null("HURRAY_TEST_TMPDIR");
    return d ? d : "/tmp";
}

static inline int debug_build(void) {
    const char *d = env_or_null("HURRAY_TEST_DEBUG_BUILD");
    return d && strcmp(d, "1") == 0;
}

#endif /* HURRAY_TEST_H */
