/*
 * test_stream.c - the streaming format through the sans-io C ABI: an encoder that
 * points at the caller's buffers, a decoder that hands out the destination slice,
 * items, composites, and every end-of-input outcome.
 */
#include "hurray_test.h"

#include <unistd.h>

/* Decodes `in` with demand/advance, reading at most `step` bytes at a time (like a
 * read(2) loop), and returns the tensors it yields (at most `max`). */
static size_t decode_all(const Bytes *in, size_t step, HurrayTensor **out, size_t max,
                         HurrayStatus *finish_status) {
    HurrayStreamDecoder *dec = NULL;
    CHECK_OK(hurray_stream_decoder_new(NULL, &dec));
    size_t got = 0, pos = 0;
    for (;;) {
        HurrayTensor *t = NULL;
        for (;;) {
            CHECK_OK(hurray_stream_decoder_next_tensor(dec, &t));
            if (t == NULL) break;
            CHECK(got < max);
            out[got++] = t;
        }
        uint8_t *dst = NULL;
        uint64_t want = 0;
        CHECK_OK(hurray_stream_decoder_demand(dec, &dst, &want));
        if (want == 0) break;
        CHECK(dst != NULL);
        size_t n = in->len - pos;
        if (n > step) n = step;
        if (n > want) n = (size_t)want;
        if (n == 0) {
            *finish_status = hurray_stream_decoder_finish(dec);
            /* Items completed before the end are still there. */
            HurrayTensor *rest = NULL;
            while (hurray_stream_decoder_next_tensor(dec, &rest) == HURRAY_OK && rest) {
                CHECK(got < max);
                out[got++] = rest;
            }
            break;
        }
        memcpy(dst, in->data + pos, n); /* the caller's "read" lands in the final buffer */
        pos += n;
        CHECK_OK(hurray_stream_decoder_advance(dec, n));
    }
    uint64_t position = 0;
    CHECK_OK(hurray_stream_decoder_position(dec, &position));
    CHECK(position == pos);
    CHECK_OK(hurray_stream_decoder_destroy(&dec));
    CHECK(dec == NULL);
    return got;
}

static void test_roundtrip_own_memory(void) {
    Released rel, owner;
    HurrayTensor *t = own_memory_tensor(1000, &rel, &owner);
    HurrayStreamEncoder *enc = NULL;
    CHECK_OK(hurray_stream_encoder_new(NULL, &enc));
    Bytes s = {0};
    uint64_t chunks = 0, total = 0;
    CHECK_OK(hurray_stream_encoder_begin_tensor(enc, t, &chunks, &total));
    CHECK(chunks == 2); /* the descriptor, then the buffer */
    const uint8_t *p = NULL;
    uint64_t n = 0;
    CHECK_OK(hurray_stream_encoder_chunk(enc, 1, &p, &n));
    CHECK(p == rel.memory && n == 4000); /* points at the caller's buffer: no copy */
    CHECK_OK(hurray_stream_encoder_chunk(enc, 0, &p, &n));
    bytes_append(&s, p, n);
    CHECK_OK(hurray_stream_encoder_chunk(enc, 1, &p, &n));
    bytes_append(&s, p, n);
    CHECK(s.len == total);
    /* Twice more, through the helper, so the stream holds three tensors. */
    encode_tensor(enc, t, &s);
    encode_tensor(enc, t, &s);
    uint64_t position = 0;
    CHECK_OK(hurray_stream_encoder_position(enc, &position));
    CHECK(position == s.len);

    /* The encoder holds the buffers until it lets go: destroying the tensor now does
     * not release the memory yet. */
    CHECK_OK(hurray_tensor_destroy(&t));
    CHECK(released_count(&rel) == 0);
    CHECK(released_count(&owner) == 0);
    CHECK_OK(hurray_stream_encoder_chunk(enc, 1, &p, &n));
    CHECK(p == rel.memory);
    const float *f = (const float *)p;
    CHECK(f[999] == 999.0f);

    /* Recreate a reference tensor to compare with (same values, own memory). */
    Released rel2;
    HurrayTensor *want = own_memory_tensor(1000, &rel2, NULL);
    size_t steps[] = {1, 7, 64, 4096, 1 << 20};
    for (size_t k = 0; k < sizeof steps / sizeof *steps; k++) {
        HurrayTensor *got[4] = {0};
        HurrayStatus fin = -999;
        size_t m = decode_all(&s, steps[k], got, 4, &fin);
        CHECK(fin == HURRAY_OK);
        CHECK(m == 3);
        for (size_t i = 0; i < m; i++) {
            CHECK(tensors_equal(got[i], want));
            uint64_t size = 0;
            const uint8_t *data = tensor_bytes(got[i], 0, &size);
            CHECK(((uintptr_t)data) % 64 == 0); /* the final aligned buffer */
            uint32_t v = 0;
            CHECK_OK(hurray_tensor_abi_version(got[i], &v));
            CHECK(v == HURRAY_C_ABI_VERSION);
            CHECK_OK(hurray_tensor_destroy(&got[i]));
        }
    }

    CHECK_OK(hurray_stream_encoder_end(enc));
    CHECK(released_count(&rel) == 1); /* exactly once, after the last holder let go */
    CHECK(released_count(&owner) == 1);
    CHECK_ERR(HURRAY_ERR_STATE, hurray_stream_encoder_chunk(enc, 0, &p, &n));
    CHECK_OK(hurray_stream_encoder_destroy(&enc));
    CHECK_OK(hurray_tensor_destroy(&want));
    CHECK(released_count(&rel) == 1);
    CHECK(released_count(&rel2) == 1);
    bytes_free(&s);
}

static void test_feed_and_items(void) {
    Released rel;
    HurrayTensor *t = own_memory_tensor(10, &rel, NULL);
    HurrayStreamEncoder *enc = NULL;
    CHECK_OK(hurray_stream_encoder_new(NULL, &enc));
    Bytes s = {0};
    encode_tensor(enc, t, &s);
    CHECK_OK(hurray_stream_encoder_destroy(&enc)); /* lets go of the buffers */

    HurrayStreamDecoder *dec = NULL;
    CHECK_OK(hurray_stream_decoder_new(NULL, &dec));
    HurrayItem *item = NULL;
    CHECK_OK(hurray_stream_decoder_next(dec, &item));
    CHECK(item == NULL); /* none yet: OK with NULL */
    uint64_t consumed = 0;
    CHECK_OK(hurray_stream_decoder_feed(dec, s.data, 5, &consumed));
    CHECK(consumed == 5);
    CHECK_OK(hurray_stream_decoder_next(dec, &item));
    CHECK(item == NULL);
    CHECK_OK(hurray_stream_decoder_feed(dec, s.data + 5, s.len - 5, &consumed));
    CHECK(consumed == s.len - 5);
    CHECK_OK(hurray_stream_decoder_next(dec, &item));
    CHECK(item != NULL);
    CHECK_OK(hurray_stream_decoder_finish(dec));
    /* After finish the decoder demands nothing and takes no bytes. */
    uint8_t *dst = NULL;
    uint64_t want = 1;
    CHECK_OK(hurray_stream_decoder_demand(dec, &dst, &want));
    CHECK(want == 0 && dst == NULL);
    CHECK_OK(hurray_stream_decoder_feed(dec, s.data, 3, &consumed));
    CHECK(consumed == 0);
    CHECK_OK(hurray_stream_decoder_destroy(&dec));

    /* The item outlives its decoder. */
    const HurrayTensor *got = NULL;
    CHECK_OK(hurray_item_tensor(item, &got));
    CHECK(tensors_equal(got, t));
    CHECK_OK(hurray_item_destroy(&item));
    CHECK_OK(hurray_tensor_destroy(&t));
    CHECK(released_count(&rel) == 1);
    bytes_free(&s);
}

/* A group composite (head + two float32 members) built from C. */
/* Feeds all of `s` into `dec` and takes the one tensor it holds. */
static HurrayTensor *decode_one(HurrayStreamDecoder *dec, const Bytes *s) {
    uint64_t consumed = 0;
    CHECK_OK(hurray_stream_decoder_feed(dec, s->data, s->len, &consumed));
    CHECK(consumed == s->len);
    HurrayTensor *t = NULL;
    CHECK_OK(hurray_stream_decoder_next_tensor(dec, &t));
    CHECK(t != NULL);
    return t;
}

static void test_buffer_pool(void) {
    Released rel;
    HurrayTensor *t = own_memory_tensor(100000, &rel, NULL); /* 400 kB */
    HurrayStreamEncoder *enc = NULL;
    CHECK_OK(hurray_stream_encoder_new(NULL, &enc));
    Bytes s = {0};
    encode_tensor(enc, t, &s);
    CHECK_OK(hurray_stream_encoder_destroy(&enc));

    int64_t live0 = hurray_debug_live_objects();
    HurrayBufferPool *pool = NULL;
    CHECK_OK(hurray_buffer_pool_new(64u << 20, &pool));
    HurrayStreamDecoder *dec = NULL;
    CHECK_OK(hurray_stream_decoder_new(NULL, &dec));
    CHECK_OK(hurray_stream_decoder_set_pool(dec, pool));

    HurrayTensor *a = decode_one(dec, &s);
    CHECK(tensors_equal(a, t));
    uint64_t size = 0;
    const uint8_t *first = tensor_bytes(a, 0, &size);
    CHECK(((uintptr_t)first) % 64 == 0);
    HurrayBufferPoolStats st;
    CHECK_OK(hurray_buffer_pool_stats(pool, &st));
    CHECK(st.allocated == 1 && st.reused == 0 && st.idle_buffers == 0);
    CHECK_OK(hurray_tensor_destroy(&a)); /* its allocation goes back to the pool */
    CHECK_OK(hurray_buffer_pool_stats(pool, &st));
    CHECK(st.idle_buffers == 1 && st.idle_bytes >= 400000);

    /* The next tensor is read into the same memory; the pool handle may go first. */
    CHECK_OK(hurray_buffer_pool_destroy(&pool));
    CHECK(pool == NULL);
    HurrayTensor *b = decode_one(dec, &s);
    CHECK(tensors_equal(b, t));
    CHECK(tensor_bytes(b, 0, &size) == first);
    CHECK_OK(hurray_stream_decoder_set_pool(dec, NULL)); /* back to fresh memory */
    HurrayTensor *c = decode_one(dec, &s);
    CHECK(tensors_equal(c, t));
    CHECK(tensor_bytes(c, 0, &size) != first);
    CHECK_OK(hurray_stream_decoder_destroy(&dec));
    CHECK_OK(hurray_tensor_destroy(&b));
    CHECK_OK(hurray_tensor_destroy(&c));
    CHECK(hurray_debug_live_objects() == live0);

    /* Misuse is an error, not a crash. */
    CHECK_ERR(HURRAY_ERR_NULL_POINTER, hurray_buffer_pool_new(0, NULL));
    CHECK_ERR(HURRAY_ERR_NULL_POINTER, hurray_buffer_pool_stats(NULL, &st));
    CHECK_ERR(HURRAY_ERR_NULL_POINTER, hurray_stream_decoder_set_pool(NULL, NULL));
    CHECK_OK(hurray_buffer_pool_new(0, &pool));
    CHECK_ERR(HURRAY_ERR_NULL_POINTER, hurray_buffer_pool_stats(pool, NULL));
    CHECK_OK(hurray_buffer_pool_clear(pool));
    /* A tensor handle is not a pool. */
    CHECK_ERR(HURRAY_ERR_INVALID_ARGUMENT,
              hurray_buffer_pool_stats((const HurrayBufferPool *)t, &st));
    CHECK_OK(hurray_buffer_pool_destroy(&pool));
    CHECK_OK(hurray_buffer_pool_destroy(&pool)); /* NULL: no-op */
    CHECK_OK(hurray_tensor_destroy(&t));
    CHECK(released_count(&rel) == 1);
    bytes_free(&s);
}

/* A caller allocator for test_allocator: up to 8 allocations, each 64-byte aligned
 * (or, with `skew`, deliberately not), counted, freed by count_release. */
typedef struct TestAlloc {
    int calls, refuse, skew;
    Released rel[8];
    uint8_t *data[8];
} TestAlloc;

static int32_t test_alloc(void *context, uint64_t len, uint64_t alignment, uint8_t **out_data,
                          HurrayReleaseFn *out_release, void **out_release_context) {
    TestAlloc *a = (TestAlloc *)context;
    if (a->refuse || a->calls == 8 || alignment != 64) return 1;
    int i = a->calls++;
    uint8_t *p = (uint8_t *)alloc64((size_t)len + 64);
    memset(p, 0xEE, (size_t)len + 64); /* stale bytes the decoder must overwrite */
    released_init(&a->rel[i], p);
    a->data[i] = p + a->skew;
    *out_data = p + a->skew;
    *out_release = count_release;
    *out_release_context = &a->rel[i];
    return 0;
}

static void test_allocator(void) {
    Released rel;
    HurrayTensor *t = own_memory_tensor(1000, &rel, NULL);
    HurrayStreamEncoder *enc = NULL;
    CHECK_OK(hurray_stream_encoder_new(NULL, &enc));
    Bytes s = {0};
    encode_tensor(enc, t, &s);
    encode_tensor(enc, t, &s);
    CHECK_OK(hurray_stream_encoder_destroy(&enc));

    /* Two tensors read into the caller's memory, released once each, when the
     * tensors go (the decoder is gone first). */
    TestAlloc a = {0};
    HurrayStreamDecoder *dec = NULL;
    CHECK_OK(hurray_stream_decoder_new(NULL, &dec));
    CHECK_OK(hurray_stream_decoder_set_allocator(dec, test_alloc, &a));
    uint64_t consumed = 0;
    CHECK_OK(hurray_stream_decoder_feed(dec, s.data, s.len, &consumed));
    CHECK(consumed == s.len);
    HurrayTensor *got[2] = {0};
    for (int i = 0; i < 2; i++) {
        CHECK_OK(hurray_stream_decoder_next_tensor(dec, &got[i]));
        CHECK(got[i] != NULL);
        CHECK(tensors_equal(got[i], t));
        uint64_t size = 0;
        CHECK(tensor_bytes(got[i], 0, &size) == a.data[i]); /* the caller's memory */
    }
    CHECK(a.calls == 2);
    CHECK_OK(hurray_stream_decoder_destroy(&dec));
    CHECK(released_count(&a.rel[0]) == 0 && released_count(&a.rel[1]) == 0);
    CHECK_OK(hurray_tensor_destroy(&got[0]));
    CHECK(released_count(&a.rel[0]) == 1 && released_count(&a.rel[1]) == 0);
    CHECK_OK(hurray_tensor_destroy(&got[1]));
    CHECK(released_count(&a.rel[1]) == 1);

    /* A refusal, and a misaligned allocation (released), fail the stream: LIMIT. */
    for (int k = 0; k < 2; k++) {
        TestAlloc b = {0};
        b.refuse = k == 0;
        b.skew = k == 1 ? 8 : 0;
        CHECK_OK(hurray_stream_decoder_new(NULL, &dec));
        CHECK_OK(hurray_stream_decoder_set_allocator(dec, test_alloc, &b));
        CHECK_OK(hurray_stream_decoder_feed(dec, s.data, s.len, &consumed));
        CHECK(consumed < s.len);
        HurrayTensor *none = NULL;
        CHECK_ERR(HURRAY_ERR_LIMIT, hurray_stream_decoder_next_tensor(dec, &none));
        CHECK(none == NULL);
        CHECK(strstr(hurray_last_error_message(), "allocate") != NULL ||
              strstr(hurray_last_error_message(), "allocator") != NULL);
        CHECK_OK(hurray_stream_decoder_destroy(&dec));
        CHECK(b.calls == (k == 0 ? 0 : 1));
        if (k == 1) CHECK(released_count(&b.rel[0]) == 1);
    }

    /* An allocator abandoned mid-buffer (input cut) is released too; NULL restores
     * the library's memory. */
    TestAlloc c = {0};
    CHECK_OK(hurray_stream_decoder_new(NULL, &dec));
    CHECK_OK(hurray_stream_decoder_set_allocator(dec, test_alloc, &c));
    CHECK_OK(hurray_stream_decoder_feed(dec, s.data, s.len / 2 - 100, &consumed));
    CHECK(c.calls == 1 && released_count(&c.rel[0]) == 0);
    CHECK_ERR(HURRAY_ERR_TRUNCATED, hurray_stream_decoder_finish(dec));
    CHECK_OK(hurray_stream_decoder_destroy(&dec));
    CHECK(released_count(&c.rel[0]) == 1);
    CHECK_OK(hurray_stream_decoder_new(NULL, &dec));
    CHECK_OK(hurray_stream_decoder_set_allocator(dec, test_alloc, &c));
    CHECK_OK(hurray_stream_decoder_set_allocator(dec, NULL, NULL));
    CHECK_OK(hurray_stream_decoder_feed(dec, s.data, s.len, &consumed));
    HurrayTensor *lib = NULL;
    CHECK_OK(hurray_stream_decoder_next_tensor(dec, &lib));
    CHECK(lib != NULL && c.calls == 1);
    CHECK_OK(hurray_tensor_destroy(&lib));
    CHECK_OK(hurray_stream_decoder_destroy(&dec));
    CHECK_ERR(HURRAY_ERR_NULL_POINTER, hurray_stream_decoder_set_allocator(NULL, NULL, NULL));

    CHECK_OK(hurray_tensor_destroy(&t));
    CHECK(released_count(&rel) == 1);
    bytes_free(&s);
}

static HurrayItem *make_composite(Released rel[2]) {
    HurrayDescriptor *d = composite_head_descriptor(2);
    uint8_t bytes[512];
    uint64_t len = 0;
    CHECK_OK(hurray_descriptor_encode(d, bytes, sizeof bytes, &len));
    CHECK_OK(hurray_descriptor_destroy(&d));
    HurrayTensor *h = NULL;
    CHECK_OK(hurray_tensor_new(HURRAY_C_ABI_VERSION, bytes, len, NULL, NULL, NULL, &h));
    HurrayItem *c = NULL;
    CHECK_OK(hurray_item_composite_new(&h, &c));
    for (int i = 0; i < 2; i++) {
        HurrayTensor *m = own_memory_tensor(2, &rel[i], NULL);
        HurrayItem *mi = NULL;
        CHECK_OK(hurray_item_from_tensor(&m, &mi));
        CHECK_OK(hurray_item_composite_push(c, &mi));
        CHECK(mi == NULL);
    }
    return c;
}

static void test_composite_roundtrip(void) {
    Released rel[2];
    HurrayItem *c = make_composite(rel);
    HurrayStreamEncoder *enc = NULL;
    CHECK_OK(hurray_stream_encoder_new(NULL, &enc));
    uint64_t chunks = 0, total = 0;
    CHECK_OK(hurray_stream_encoder_begin_item(enc, c, &chunks, &total));
    CHECK(chunks == 4); /* head + member 0 descriptors merged, buffer 0, descriptor 1, buffer 1 */
    Bytes s = {0};
    for (uint64_t i = 0; i < chunks; i++) {
        const uint8_t *p = NULL;
        uint64_t n = 0;
        CHECK_OK(hurray_stream_encoder_chunk(enc, i, &p, &n));
        bytes_append(&s, p, n);
    }
    CHECK(s.len == total);
    const uint8_t *p = NULL;
    uint64_t n = 0;
    CHECK_ERR(HURRAY_ERR_OUT_OF_RANGE, hurray_stream_encoder_chunk(enc, chunks, &p, &n));
    CHECK_OK(hurray_stream_encoder_destroy(&enc));

    HurrayStreamDecoder *dec = NULL;
    CHECK_OK(hurray_stream_decoder_new(NULL, &dec));
    uint64_t consumed = 0;
    CHECK_OK(hurray_stream_decoder_feed(dec, s.data, s.len, &consumed));
    CHECK(consumed == s.len);
    /* next_tensor leaves a composite in place. */
    HurrayTensor *t = NULL;
    CHECK_ERR(HURRAY_ERR_NOT_APPLICABLE, hurray_stream_decoder_next_tensor(dec, &t));
    CHECK(t == NULL);
    HurrayItem *got = NULL;
    CHECK_OK(hurray_stream_decoder_next(dec, &got));
    CHECK(got != NULL);
    CHECK_OK(hurray_stream_decoder_finish(dec));
    CHECK_OK(hurray_stream_decoder_destroy(&dec));
    uint8_t composite = 0;
    uint64_t members = 0;
    CHECK_OK(hurray_item_is_composite(got, &composite));
    CHECK_OK(hurray_item_member_count(got, &members));
    CHECK(composite == 1 && members == 2);
    for (uint64_t i = 0; i < 2; i++) {
        const HurrayItem *a = NULL, *b = NULL;
        const HurrayTensor *ta = NULL, *tb = NULL;
        CHECK_OK(hurray_item_member(got, i, &a));
        CHECK_OK(hurray_item_member(c, i, &b));
        CHECK_OK(hurray_item_tensor(a, &ta));
        CHECK_OK(hurray_item_tensor(b, &tb));
        CHECK(tensors_equal(ta, tb));
    }
    CHECK_OK(hurray_item_destroy(&got));
    CHECK_OK(hurray_item_destroy(&c));
    CHECK(released_count(&rel[0]) == 1 && released_count(&rel[1]) == 1);
    bytes_free(&s);
}

static void test_end_of_input(void) {
    Released rel;
    HurrayTensor *t = own_memory_tensor(8, &rel, NULL);
    HurrayStreamEncoder *enc = NULL;
    CHECK_OK(hurray_stream_encoder_new(NULL, &enc));
    Bytes s = {0};
    encode_tensor(enc, t, &s);
    CHECK_OK(hurray_stream_encoder_destroy(&enc));
    CHECK_OK(hurray_tensor_destroy(&t));

    /* Empty input is a clean end; a cut anywhere inside the tensor is truncation. */
    for (size_t cut = 0; cut < s.len; cut++) {
        Bytes part = {s.data, cut, cut};
        HurrayTensor *got[2] = {0};
        HurrayStatus fin = -999;
        size_t m = decode_all(&part, 3, got, 2, &fin);
        CHECK(m == 0);
        if (cut == 0) {
            CHECK(fin == HURRAY_OK);
        } else {
            CHECK(fin == HURRAY_ERR_TRUNCATED);
            hurray_test_check_message(__FILE__, __LINE__, "finish", HURRAY_ERR_TRUNCATED);
        }
    }
    /* Whole tensor, then a cut inside the second: one tensor, then truncation. */
    Bytes two = {0};
    bytes_append(&two, s.data, s.len);
    bytes_append(&two, s.data, s.len / 2);
    HurrayTensor *got[2] = {0};
    HurrayStatus fin = -999;
    CHECK(decode_all(&two, 5, got, 2, &fin) == 1);
    CHECK(fin == HURRAY_ERR_TRUNCATED);
    CHECK_OK(hurray_tensor_destroy(&got[0]));
    bytes_free(&two);
    bytes_free(&s);
    CHECK(released_count(&rel) == 1);
}

/* Must-show 1 in one piece: one tensor over the caller's malloc'd memory goes to a
 * stream and to a file, both are read back and compared, and the release runs exactly
 * once, after the last destroy. */
static void test_same_tensor_to_stream_and_file(void) {
    Released rel;
    HurrayTensor *t = own_memory_tensor(333, &rel, NULL);
    HurrayStreamEncoder *enc = NULL;
    CHECK_OK(hurray_stream_encoder_new(NULL, &enc));
    Bytes s = {0};
    encode_tensor(enc, t, &s);
    char path[4096];
    join_path(path, sizeof path, tmp_dir(), "stream_and_file.hrry");
    HurrayFileWriter *w = NULL;
    CHECK_OK(hurray_file_writer_create(path, NULL, &w));
    CHECK_OK(hurray_file_writer_write_tensor(w, "t", t));
    CHECK_OK(hurray_file_writer_finish(w));
    CHECK_OK(hurray_file_writer_destroy(&w));

    HurrayTensor *from_stream[1] = {0};
    HurrayStatus fin = -999;
    CHECK(decode_all(&s, 100, from_stream, 1, &fin) == 1 && fin == HURRAY_OK);
    HurrayFileReader *r = NULL;
    HurrayTensor *from_file = NULL;
    CHECK_OK(hurray_file_reader_open(path, &r));
    CHECK_OK(hurray_file_reader_tensor(r, "t", &from_file));
    CHECK_OK(hurray_file_reader_destroy(&r));
    CHECK(tensors_equal(from_stream[0], t));
    CHECK(tensors_equal(from_file, t));
    uint64_t n1 = 0, n2 = 0;
    const uint8_t *a = tensor_bytes(from_stream[0], 0, &n1);
    const uint8_t *b = tensor_bytes(from_file, 0, &n2);
    CHECK(n1 == 333 * 4 && n2 == n1 && memcmp(a, b, n1) == 0 && memcmp(a, rel.memory, n1) == 0);
    CHECK(a != rel.memory && b != rel.memory); /* read back into library memory */
    CHECK_OK(hurray_tensor_destroy(&from_stream[0]));
    CHECK_OK(hurray_tensor_destroy(&from_file));

    CHECK_OK(hurray_tensor_destroy(&t));
    CHECK(released_count(&rel) == 0); /* the encoder still holds the buffer */
    CHECK_OK(hurray_stream_encoder_destroy(&enc)); /* the last holder */
    CHECK(released_count(&rel) == 1);
    CHECK(unlink(path) == 0);
    bytes_free(&s);
}

int main(void) {
    RUN(test_roundtrip_own_memory);
    RUN(test_feed_and_items);
    RUN(test_buffer_pool);
    RUN(test_allocator);
    RUN(test_composite_roundtrip);
    RUN(test_end_of_input);
    RUN(test_same_tensor_to_stream_and_file);
    END_TESTS();
}
