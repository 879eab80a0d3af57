/*
 * test_errors.c - every error path a C caller can reach returns its documented status
 * and leaves a message "<STATUS_NAME>: <detail>"; nothing leaks on the way.
 */
#include "hurray_test.h"

static uint8_t *f32_descriptor(uint64_t count, uint64_t *len) {
    return dense_descriptor_bytes(HURRAY_TYPE_FLOAT32, 1, &count, len);
}

static HurrayBufferList *list_of(size_t nbuf, uint64_t size, Released *rel) {
    HurrayBufferList *l = NULL;
    CHECK_OK(hurray_buffer_list_new(&l));
    for (size_t i = 0; i < nbuf; i++) {
        void *mem = alloc64(size);
        released_init(&rel[i], mem);
        HurrayBuffer *b = NULL;
        CHECK_OK(hurray_buffer_new(mem, size, 64, 0, 0, 0, NULL, count_release, &rel[i], &b));
        CHECK_OK(hurray_buffer_list_push(l, &b));
    }
    return l;
}

static void test_status_names(void) {
    CHECK(strcmp(hurray_status_name(HURRAY_OK), "HURRAY_OK") == 0);
    CHECK(strcmp(hurray_status_name(HURRAY_ERR_NULL_POINTER), "HURRAY_ERR_NULL_POINTER") == 0);
    CHECK(strcmp(hurray_status_name(HURRAY_ERR_TRUNCATED), "HURRAY_ERR_TRUNCATED") == 0);
    CHECK(strcmp(hurray_status_name(HURRAY_ERR_INTERNAL_PANIC), "HURRAY_ERR_INTERNAL_PANIC") == 0);
    CHECK(strcmp(hurray_status_name(12345), "HURRAY_UNKNOWN_STATUS") == 0);
}

static void test_tensor_new_errors(void) {
    Released rel[2];
    uint64_t len = 0;
    uint8_t *desc = f32_descriptor(4, &len);
    HurrayBufferList *l = list_of(1, 16, rel);
    HurrayTensor *t = NULL;

    /* NULL and zero-length descriptor bytes. */
    CHECK_ERR(HURRAY_ERR_NULL_POINTER,
              hurray_tensor_new(HURRAY_C_ABI_VERSION, NULL, len, l, NULL, NULL, &t));
    CHECK_ERR(HURRAY_ERR_NULL_POINTER,
              hurray_tensor_new(HURRAY_C_ABI_VERSION, desc, 0, l, NULL, NULL, &t));
    /* NULL out pointer. */
    CHECK_ERR(HURRAY_ERR_NULL_POINTER,
              hurray_tensor_new(HURRAY_C_ABI_VERSION, desc, len, l, NULL, NULL, NULL));
    /* The caller speaks another ABI version. */
    CHECK_ERR(HURRAY_ERR_ABI_VERSION,
              hurray_tensor_new(HURRAY_C_ABI_VERSION - 1, desc, len, l, NULL, NULL, &t));
    CHECK(strstr(hurray_last_error_message(), "9") != NULL);
    /* Bad bytes: garbage, a flipped magic, a cut descriptor, trailing bytes. */
    uint8_t junk[64];
    memset(junk, 0xAB, sizeof junk);
    CHECK_ERR(HURRAY_ERR_DESCRIPTOR,
              hurray_tensor_new(HURRAY_C_ABI_VERSION, junk, sizeof junk, l, NULL, NULL, &t));
    uint8_t bad[256];
    memcpy(bad, desc, len);
    bad[0] ^= 0xFF;
    CHECK_ERR(HURRAY_ERR_DESCRIPTOR,
              hurray_tensor_new(HURRAY_C_ABI_VERSION, bad, len, l, NULL, NULL, &t));
    CHECK_ERR(HURRAY_ERR_DESCRIPTOR,
              hurray_tensor_new(HURRAY_C_ABI_VERSION, desc, len - 1, l, NULL, NULL, &t));
    memcpy(bad, desc, len);
    bad[len] = 0;
    CHECK_ERR(HURRAY_ERR_DESCRIPTOR,
              hurray_tensor_new(HURRAY_C_ABI_VERSION, bad, len + 1, l, NULL, NULL, &t));
    /* The message names the rule and the byte offset. */
    CHECK(strstr(hurray_last_error_message(), "TrailingInput at byte") != NULL);
    CHECK(t == NULL);
    /* On every error the list stayed the caller's: it still holds its buffer. */
    uint64_t n = 0;
    CHECK_OK(hurray_buffer_list_len(l, &n));
    CHECK(n == 1);
    CHECK(released_count(&rel[0]) == 0);

    CHECK_OK(hurray_buffer_list_destroy(&l));
    CHECK(released_count(&rel[0]) == 1);
    free(desc);
}

static void test_count_and_size_mismatch(void) {
    Released rel[2], rel2[2];
    uint64_t len = 0;
    uint8_t *desc = f32_descriptor(4, &len);
    HurrayTensor *t = NULL;

    HurrayBufferList *two = list_of(2, 16, rel);
    CHECK_ERR(HURRAY_ERR_BUFFER_MISMATCH,
              hurray_tensor_new(HURRAY_C_ABI_VERSION, desc, len, two, NULL, NULL, &t));
    CHECK(strstr(hurray_last_error_message(), "2 buffers") != NULL);
    HurrayBufferList *empty = NULL;
    CHECK_OK(hurray_buffer_list_new(&empty));
    CHECK_ERR(HURRAY_ERR_BUFFER_MISMATCH,
              hurray_tensor_new(HURRAY_C_ABI_VERSION, desc, len, empty, NULL, NULL, &t));
    CHECK_ERR(HURRAY_ERR_NULL_POINTER,
              hurray_tensor_new(HURRAY_C_ABI_VERSION, desc, len, NULL, NULL, NULL, &t));
    HurrayBufferList *small = list_of(1, 8, rel2);
    CHECK_ERR(HURRAY_ERR_BUFFER_MISMATCH,
              hurray_tensor_new(HURRAY_C_ABI_VERSION, desc, len, small, NULL, NULL, &t));
    CHECK(t == NULL);
    CHECK_OK(hurray_buffer_list_destroy(&two));
    CHECK_OK(hurray_buffer_list_destroy(&empty));
    CHECK_OK(hurray_buffer_list_destroy(&small));
    CHECK(released_count(&rel[0]) == 1 && released_count(&rel[1]) == 1);
    CHECK(released_count(&rel2[0]) == 1);
    free(desc);
}

static void test_buffer_errors(void) {
    uint8_t *mem = (uint8_t *)alloc64(256);
    HurrayBuffer *b = NULL;
    CHECK_ERR(HURRAY_ERR_NULL_POINTER,
              hurray_buffer_new(mem, 64, 64, 0, 0, 0, NULL, NULL, NULL, NULL));
    CHECK_ERR(HURRAY_ERR_NULL_POINTER,
              hurray_buffer_new(NULL, 64, 64, 0, 0, 0, NULL, NULL, NULL, &b));
    CHECK_ERR(HURRAY_ERR_INVALID_ARGUMENT,
              hurray_buffer_new(mem, 64, 3, 0, 0, 0, NULL, NULL, NULL, &b));
    CHECK_ERR(HURRAY_ERR_INVALID_ARGUMENT,
              hurray_buffer_new(mem + 1, 64, 64, 0, 0, 0, NULL, NULL, NULL, &b));
    CHECK_ERR(HURRAY_ERR_INVALID_ARGUMENT,
              hurray_buffer_new(mem, 64, 64, 0x7F, 0, 0, NULL, NULL, NULL, &b));
    CHECK_ERR(HURRAY_ERR_INVALID_SYNC_MODE,
              hurray_buffer_new(mem, 64, 64, HURRAY_DEVICE_CUDA, 7, 0, NULL, NULL, NULL, &b));
    CHECK_ERR(HURRAY_ERR_SYNC_MODE_MISMATCH,
              hurray_buffer_new(mem, 64, 64, HURRAY_DEVICE_CPU, HURRAY_SYNC_EVENT, 0, NULL, NULL,
                                NULL, &b));
    CHECK_ERR(HURRAY_ERR_SYNC_MODE_MISMATCH,
              hurray_buffer_new(mem, 64, 64, HURRAY_DEVICE_CUDA, HURRAY_SYNC_EVENT, 0, NULL, NULL,
                                NULL, &b));
    CHECK(b == NULL);

    HurrayBufferList *l = NULL;
    CHECK_OK(hurray_buffer_list_new(&l));
    const HurrayBuffer *got = NULL;
    CHECK_ERR(HURRAY_ERR_OUT_OF_RANGE, hurray_buffer_list_get(l, 0, &got));
    CHECK_ERR(HURRAY_ERR_NULL_POINTER, hurray_buffer_list_push(l, NULL));
    CHECK_ERR(HURRAY_ERR_NULL_POINTER, hurray_buffer_list_len(NULL, NULL));
    CHECK_OK(hurray_buffer_list_destroy(&l));
    free(mem);
}

static void test_handle_checks(void) {
    Released rel;
    HurrayTensor *t = own_memory_tensor(4, &rel, NULL);
    const HurrayDescriptor *d = NULL;
    const HurrayBufferList *l = NULL;
    CHECK_ERR(HURRAY_ERR_NULL_POINTER, hurray_tensor_descriptor(NULL, &d));
    CHECK_ERR(HURRAY_ERR_NULL_POINTER, hurray_tensor_descriptor(t, NULL));
    CHECK_ERR(HURRAY_ERR_NULL_POINTER, hurray_tensor_buffers(t, NULL));
    uint32_t v = 0;
    CHECK_ERR(HURRAY_ERR_NULL_POINTER, hurray_tensor_abi_version(NULL, &v));
    CHECK_ERR(HURRAY_ERR_NULL_POINTER, hurray_tensor_abi_version(t, NULL));
    const void *data = NULL;
    uint64_t size = 0;
    CHECK_ERR(HURRAY_ERR_OUT_OF_RANGE, hurray_tensor_buffer_data(t, 1, &data, &size));

    /* A handle of the wrong kind: a descriptor where a tensor is expected. */
    CHECK_OK(hurray_tensor_descriptor(t, &d));
    CHECK_ERR(HURRAY_ERR_INVALID_ARGUMENT, hurray_tensor_buffers((const HurrayTensor *)d, &l));
    /* A descriptor borrowed from its tensor cannot be destroyed on its own. */
    HurrayDescriptor *alias = (HurrayDescriptor *)d;
    CHECK_ERR(HURRAY_ERR_INVALID_ARGUMENT, hurray_descriptor_destroy(&alias));
    CHECK(alias == d);

    /* A handle from a build with another ABI version (its frozen prefix says 9). */
    struct {
        uint32_t abi_version;
        uint16_t kind, flags;
        const void *impl_id;
        void (*destroy)(void *);
        const void *pad[4];
    } foreign = {9, 1, 0, NULL, NULL, {NULL, NULL, NULL, NULL}};
    CHECK_ERR(HURRAY_ERR_ABI_VERSION, hurray_tensor_descriptor((const HurrayTensor *)&foreign, &d));
    HurrayTensor *fp = (HurrayTensor *)&foreign;
    CHECK_ERR(HURRAY_ERR_ABI_VERSION, hurray_tensor_destroy(&fp));
    CHECK(fp == (HurrayTensor *)&foreign); /* not nulled on error */
    CHECK_OK(hurray_handle_abi_version(&foreign, &v));
    CHECK(v == 9); /* the version is still readable by any build */

    /* Debug builds detect a second destroy through a stale copy. */
    HurrayTensor *stale = t;
    CHECK_OK(hurray_tensor_destroy(&t));
    CHECK(released_count(&rel) == 1);
    if (debug_build()) {
        CHECK_ERR(HURRAY_ERR_DOUBLE_DESTROY, hurray_tensor_destroy(&stale));
        CHECK(released_count(&rel) == 1);
    }
}

static void test_descriptor_errors(void) {
    HurrayDescriptor *d = NULL;
    CHECK_ERR(HURRAY_ERR_NULL_POINTER, hurray_descriptor_decode(NULL, 10, &d));
    uint8_t zero[1] = {0};
    CHECK_ERR(HURRAY_ERR_NULL_POINTER, hurray_descriptor_decode(zero, 0, &d));
    CHECK_ERR(HURRAY_ERR_DESCRIPTOR, hurray_descriptor_decode(zero, 1, &d));
    uint64_t shape[2] = {2, 3};
    CHECK_ERR(HURRAY_ERR_INVALID_ARGUMENT, hurray_descriptor_dense(0x7E, 2, shape, &d));
    CHECK_ERR(HURRAY_ERR_INVALID_ARGUMENT, hurray_descriptor_dense(HURRAY_TYPE_INT8, 65, shape, &d));
    CHECK_ERR(HURRAY_ERR_NULL_POINTER, hurray_descriptor_dense(HURRAY_TYPE_INT8, 2, NULL, &d));
    CHECK(d == NULL);
    CHECK_OK(hurray_descriptor_dense(HURRAY_TYPE_INT8, 2, shape, &d));
    uint8_t small[4];
    uint64_t len = 0;
    CHECK_ERR(HURRAY_ERR_BUFFER_TOO_SMALL, hurray_descriptor_encode(d, small, sizeof small, &len));
    CHECK(len > sizeof small); /* the needed size was reported */
    /* Building from a view: a bad field is refused and named; nothing is made. */
    const HurrayDescriptorView *v = NULL;
    CHECK_OK(hurray_descriptor_view(d, &v));
    HurrayDescriptorView bad = *v;
    int64_t strides[2] = {3, 1};
    bad.strides = strides; /* a row-major layout has no strides */
    HurrayDescriptor *out = NULL;
    CHECK_ERR(HURRAY_ERR_INVALID_ARGUMENT, hurray_descriptor_from_view(&bad, &out));
    CHECK(strstr(hurray_last_error_message(), "view->strides") != NULL);
    bad = *v;
    bad.header.layout_tag = HURRAY_LAYOUT_STRIDED; /* ... and a strided one needs them */
    CHECK_ERR(HURRAY_ERR_NULL_POINTER, hurray_descriptor_from_view(&bad, &out));
    bad.strides = strides;
    CHECK_OK(hurray_descriptor_from_view(&bad, &out));
    CHECK_OK(hurray_descriptor_destroy(&out));
    HurrayBufferEntry small_buffer = v->buffers[0];
    small_buffer.byte_size = 5; /* 2 x 3 int8 needs 6 bytes */
    bad = *v;
    bad.buffers = &small_buffer;
    CHECK_ERR(HURRAY_ERR_DESCRIPTOR, hurray_descriptor_from_view(&bad, &out));
    CHECK(strstr(hurray_last_error_message(), "at byte") != NULL);
    CHECK_ERR(HURRAY_ERR_NULL_POINTER, hurray_descriptor_from_view(NULL, &out));
    CHECK_ERR(HURRAY_ERR_NULL_POINTER, hurray_descriptor_from_view(v, NULL));
    CHECK(out == NULL);
    CHECK_OK(hurray_descriptor_destroy(&d));
}

static void test_stream_errors(void) {
    HurrayStreamDecoder *dec = NULL;
    CHECK_ERR(HURRAY_ERR_NULL_POINTER, hurray_stream_decoder_new(NULL, NULL));
    HurrayStreamLimits lim;
    CHECK_OK(hurray_stream_limits_default(&lim));
    CHECK(lim.max_descriptor_bytes == 16u << 20 && lim.max_composite_depth == 8);
    lim.cross_machine = 2;
    CHECK_ERR(HURRAY_ERR_INVALID_ARGUMENT, hurray_stream_decoder_new(&lim, &dec));
    CHECK_OK(hurray_stream_decoder_new(NULL, &dec));
    uint8_t *dst = NULL;
    uint64_t want = 0;
    CHECK_OK(hurray_stream_decoder_demand(dec, &dst, &want));
    CHECK(want > 0);
    /* More than demanded is refused, and nothing is recorded. */
    CHECK_ERR(HURRAY_ERR_INVALID_ARGUMENT, hurray_stream_decoder_advance(dec, want + 1));
    CHECK_ERR(HURRAY_ERR_INVALID_ARGUMENT, hurray_stream_decoder_advance(dec, UINT64_MAX));
    uint64_t pos = 1;
    CHECK_OK(hurray_stream_decoder_position(dec, &pos));
    CHECK(pos == 0);
    CHECK_ERR(HURRAY_ERR_NULL_POINTER, hurray_stream_decoder_demand(dec, NULL, &want));
    uint64_t consumed = 0;
    CHECK_ERR(HURRAY_ERR_NULL_POINTER, hurray_stream_decoder_feed(dec, NULL, 4, &consumed));

    /* Garbage: the decoder fails; next reports the error once, then nothing. */
    uint8_t junk[32];
    memset(junk, 0x5A, sizeof junk);
    CHECK_OK(hurray_stream_decoder_feed(dec, junk, sizeof junk, &consumed));
    CHECK(consumed < sizeof junk);
    HurrayItem *item = NULL;
    CHECK_ERR(HURRAY_ERR_DESCRIPTOR, hurray_stream_decoder_next(dec, &item));
    CHECK(item == NULL);
    CHECK_OK(hurray_stream_decoder_next(dec, &item));
    CHECK(item == NULL);
    CHECK_OK(hurray_stream_decoder_demand(dec, &dst, &want));
    CHECK(want == 0);
    CHECK_ERR(HURRAY_ERR_DESCRIPTOR, hurray_stream_decoder_finish(dec));
    CHECK_OK(hurray_stream_decoder_destroy(&dec));

    /* A descriptor claiming more than the limit. */
    CHECK_OK(hurray_stream_limits_default(&lim));
    lim.max_buffer_bytes = 8;
    CHECK_OK(hurray_stream_decoder_new(&lim, &dec));
    uint64_t len = 0;
    uint8_t *desc = f32_descriptor(4, &len);
    CHECK_OK(hurray_stream_decoder_feed(dec, desc, len, &consumed));
    CHECK_ERR(HURRAY_ERR_LIMIT, hurray_stream_decoder_next(dec, &item));
    CHECK_OK(hurray_stream_decoder_destroy(&dec));
    free(desc);

    /* Encoder: no current item, a NULL tensor, a bad option. */
    HurrayStreamEncoder *enc = NULL;
    lim.cross_machine = 3;
    CHECK_ERR(HURRAY_ERR_INVALID_ARGUMENT, hurray_stream_encoder_new(&lim, &enc));
    CHECK_OK(hurray_stream_encoder_new(NULL, &enc));
    const uint8_t *p = NULL;
    uint64_t n = 0;
    CHECK_ERR(HURRAY_ERR_STATE, hurray_stream_encoder_chunk(enc, 0, &p, &n));
    uint64_t chunks = 0, total = 0;
    CHECK_ERR(HURRAY_ERR_NULL_POINTER, hurray_stream_encoder_begin_tensor(enc, NULL, &chunks, &total));
    /* A decoder passed where an encoder is expected: wrong handle kind. */
    CHECK_OK(hurray_stream_decoder_new(NULL, &dec));
    CHECK_ERR(HURRAY_ERR_INVALID_ARGUMENT,
              hurray_stream_encoder_chunk((const HurrayStreamEncoder *)dec, 0, &p, &n));
    CHECK_OK(hurray_stream_decoder_destroy(&dec));
    CHECK_OK(hurray_stream_encoder_destroy(&enc));
}

static void test_panic(void) {
#ifdef HURRAY_TEST_HOOKS
    CHECK_ERR(HURRAY_ERR_INTERNAL_PANIC, hurray_debug_panic());
    CHECK(strstr(hurray_last_error_message(), "hurray_debug_panic was called") != NULL);
#else
    SKIP("built without HURRAY_TEST_HOOKS");
#endif
}

static void test_destroy_null_is_noop(void) {
    CHECK_OK(hurray_tensor_destroy(NULL));
    CHECK_OK(hurray_descriptor_destroy(NULL));
    CHECK_OK(hurray_buffer_destroy(NULL));
    CHECK_OK(hurray_buffer_list_destroy(NULL));
    CHECK_OK(hurray_item_destroy(NULL));
    CHECK_OK(hurray_stream_decoder_destroy(NULL));
    CHECK_OK(hurray_stream_encoder_destroy(NULL));
    CHECK_OK(hurray_file_reader_destroy(NULL));
    CHECK_OK(hurray_file_writer_destroy(NULL));
    HurrayFileReader *r = NULL;
    CHECK_OK(hurray_file_reader_destroy(&r));
}

int main(void) {
    RUN(test_status_names);
    RUN(test_tensor_new_errors);
    RUN(test_count_and_size_mismatch);
    RUN(test_buffer_errors);
    RUN(test_handle_checks);
    RUN(test_descriptor_errors);
    RUN(test_stream_errors);
    RUN(test_panic);
    RUN(test_destroy_null_is_noop);
    END_TESTS();
}
