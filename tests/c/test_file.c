/*
 * test_file.c - HRRYFILE through the C ABI: the golden basic.hrry checked field by
 * field and byte by byte, a writer/reader round trip of a tensor over the caller's
 * memory, composites, KV of every type, tensors that outlive their reader, and an
 * abandoned writer that leaves no file.
 */
#include "hurray_test.h"

#include <sys/stat.h>
#include <unistd.h>

/* ---- basic.hrry: the values of ../shared/conformance/manifest.json --------------- */

typedef struct GoldenTensor {
    const char *name;
    const char *element_type;
    uint8_t type_tag;
    uint32_t rank;
    uint64_t shape[2];
    uint64_t data_bytes;
    /* From the file's index (not in the manifest): where its bytes lie. */
    uint64_t descriptor_offset, descriptor_length, data_offset;
} GoldenTensor;

static const GoldenTensor GOLDEN[2] = {
    {"weights", "float32", 3, 2, {2, 2}, 16, 0x40, 0x3d, 0x1000},
    {"bias", "int8", 16, 1, {3, 0}, 3, 0x1010, 0x35, 0x2000},
};
static const char *GOLDEN_PRODUCER = "hurray-conformance";
static const int64_t GOLDEN_TENSOR_COUNT = 2;

/* The manifest states these values: each hard-coded fact must appear in it, so the
 * constants above cannot silently drift from the golden vectors' description. */
static void check_manifest_mentions(const char *manifest) {
    char want[256];
    CHECK(strstr(manifest, "\"file\": \"files/basic.hrry\"") != NULL);
    for (int i = 0; i < 2; i++) {
        const GoldenTensor *g = &GOLDEN[i];
        snprintf(want, sizeof want, "\"name\": \"%s\"", g->name);
        CHECK(strstr(manifest, want) != NULL);
        snprintf(want, sizeof want, "\"element_type\": \"%s\"", g->element_type);
        CHECK(strstr(manifest, want) != NULL);
        snprintf(want, sizeof want, "\"element_type_tag\": %u", g->type_tag);
        CHECK(strstr(manifest, want) != NULL);
        snprintf(want, sizeof want, "\"data_bytes\": %llu", (unsigned long long)g->data_bytes);
        CHECK(strstr(manifest, want) != NULL);
    }
    snprintf(want, sizeof want, "\"value_string\": \"%s\"", GOLDEN_PRODUCER);
    CHECK(strstr(manifest, want) != NULL);
    snprintf(want, sizeof want, "\"value_int\": %lld", (long long)GOLDEN_TENSOR_COUNT);
    CHECK(strstr(manifest, want) != NULL);
    CHECK(strstr(manifest, "\"key\": \"producer\"") != NULL);
    CHECK(strstr(manifest, "\"key\": \"tensor_count\"") != NULL);
}

static void check_golden_tensor(const HurrayTensor *t, const GoldenTensor *g, const char *file,
                                size_t file_len) {
    const HurrayDescriptor *d = NULL;
    CHECK_OK(hurray_tensor_descriptor(t, &d));
    const HurrayDescriptorView *v = NULL;
    CHECK_OK(hurray_descriptor_view(d, &v));
    const HurrayDescriptorHeader h = v->header;
    CHECK(h.version_major == 1 && h.version_minor == 0);
    CHECK(h.type_tag == g->type_tag);
    CHECK(h.layout_tag == HURRAY_LAYOUT_ROW_MAJOR);
    CHECK(h.flags == 0);
    CHECK(h.rank == g->rank);
    CHECK(h.buffer_count == 1);
    CHECK(h.byte_offset == 0);
    CHECK(h.descriptor_length == g->descriptor_length);
    for (uint32_t k = 0; k < g->rank; k++) CHECK(v->shape[k] == g->shape[k]);
    const HurrayBufferEntry e = v->buffers[0];
    CHECK(e.byte_size == g->data_bytes);
    CHECK(e.device_tag == HURRAY_DEVICE_CPU && e.sync_mode == 0 && e.memory_class == 0);

    /* Byte by byte: the descriptor's encoding is the file's descriptor bytes. */
    uint8_t enc[256];
    uint64_t enc_len = 0;
    CHECK_OK(hurray_descriptor_encode(d, enc, sizeof enc, &enc_len));
    CHECK(enc_len == g->descriptor_length);
    CHECK(g->descriptor_offset + enc_len <= file_len);
    CHECK(memcmp(enc, file + g->descriptor_offset, enc_len) == 0);

    /* ... and the buffer is the file's data bytes (all zero in this vector). */
    uint64_t size = 0;
    const uint8_t *data = tensor_bytes(t, 0, &size);
    CHECK(size == g->data_bytes);
    CHECK(((uintptr_t)data) % 64 == 0);
    CHECK(g->data_offset + size <= file_len);
    for (uint64_t i = 0; i < size; i++) {
        CHECK(data[i] == (uint8_t)file[g->data_offset + i]);
        CHECK(data[i] == 0);
    }
}

static void test_basic_hrry(void) {
    const char *dir = env_or_null("HURRAY_CONFORMANCE_DIR");
    if (!dir) SKIP("HURRAY_CONFORMANCE_DIR not set");
    char path[4096], manifest_path[4096];
    join_path(path, sizeof path, dir, "files/basic.hrry");
    join_path(manifest_path, sizeof manifest_path, dir, "manifest.json");
    size_t manifest_len = 0, file_len = 0;
    char *manifest = read_whole(manifest_path, &manifest_len);
    char *file = read_whole(path, &file_len);
    if (!manifest || !file) SKIP("conformance files not found");
    check_manifest_mentions(manifest);

    HurrayFileReader *r = NULL;
    CHECK_OK(hurray_file_reader_open(path, &r));
    HurrayFileInfo info;
    CHECK_OK(hurray_file_reader_info(r, &info));
    CHECK(info.version_major == 1 && info.version_minor == 0);
    CHECK(info.flags == HURRAY_FILE_FLAG_HAS_INDEX_CRC32C);
    CHECK(info.data_buffer_alignment == 4096);
    CHECK(info.crc_status == HURRAY_CRC_VERIFIED);
    CHECK(info.index_crc32c == 0x51349F72u);
    CHECK(info.tensor_count_hint == HURRAY_COUNT_UNKNOWN);
    CHECK(info.file_len == 8391 && info.file_len == file_len);
    CHECK(info.first_descriptor_offset == 64);
    CHECK(info.kv_offset == 0x2008 && info.kv_length == 60);
    CHECK(info.tensor_count == 2 && info.kv_count == 2);
    CHECK(info.index_offset + info.index_length + 40 == info.file_len);

    uint64_t n = 0;
    CHECK_OK(hurray_file_reader_tensor_count(r, &n));
    CHECK(n == 2);
    for (uint64_t i = 0; i < n; i++) {
        const char *name = NULL;
        uint64_t len = 0;
        CHECK_OK(hurray_file_reader_tensor_name(r, i, &name, &len));
        CHECK(strcmp(name, GOLDEN[i].name) == 0 && len == strlen(GOLDEN[i].name));

        HurrayTensor *t = NULL;
        CHECK_OK(hurray_file_reader_tensor(r, name, &t));
        check_golden_tensor(t, &GOLDEN[i], file, file_len);
        HurrayDescriptor *d = NULL;
        CHECK_OK(hurray_file_reader_descriptor(r, name, &d));
        const HurrayDescriptorView *v = NULL;
        CHECK_OK(hurray_descriptor_view(d, &v));
        CHECK(v->header.type_tag == GOLDEN[i].type_tag);
        CHECK_OK(hurray_descriptor_destroy(&d));
        HurrayItem *item = NULL;
        CHECK_OK(hurray_file_reader_item(r, name, &item));
        uint8_t composite = 9;
        CHECK_OK(hurray_item_is_composite(item, &composite));
        CHECK(composite == 0);
        const HurrayTensor *it = NULL;
        CHECK_OK(hurray_item_tensor(item, &it));
        CHECK(tensors_equal(it, t));
        CHECK_OK(hurray_item_destroy(&item));
        CHECK_OK(hurray_tensor_destroy(&t));
    }

    /* KV: producer (string), tensor_count (int64), in file order. */
    uint64_t kv = 0;
    CHECK_OK(hurray_file_reader_kv_count(r, &kv));
    CHECK(kv == 2);
    const char *key = NULL;
    uint64_t len = 0;
    HurrayKvValue v;
    CHECK_OK(hurray_file_reader_kv_key(r, 0, &key, &len));
    CHECK(strcmp(key, "producer") == 0 && len == 8);
    CHECK_OK(hurray_file_reader_kv_value(r, 0, &v));
    CHECK(v.type_tag == HURRAY_KV_TYPE_STRING && v.element_type == 0);
    CHECK(v.len == strlen(GOLDEN_PRODUCER) && strcmp((const char *)v.data, GOLDEN_PRODUCER) == 0);
    CHECK_OK(hurray_file_reader_kv_key(r, 1, &key, &len));
    CHECK(strcmp(key, "tensor_count") == 0);
    CHECK_OK(hurray_file_reader_kv_value(r, 1, &v));
    CHECK(v.type_tag == HURRAY_KV_TYPE_INT64 && v.int64_value == GOLDEN_TENSOR_COUNT);
    CHECK(v.data == NULL && v.len == 0);
    uint64_t idx = 9;
    CHECK_OK(hurray_file_reader_kv_find(r, "tensor_count", &idx));
    CHECK(idx == 1);
    CHECK_ERR(HURRAY_ERR_NOT_FOUND, hurray_file_reader_kv_find(r, "nope", &idx));
    CHECK_ERR(HURRAY_ERR_NOT_APPLICABLE, hurray_file_reader_kv_array_element(r, 0, 0, &v));
    CHECK_ERR(HURRAY_ERR_OUT_OF_RANGE, hurray_file_reader_kv_value(r, 2, &v));
    CHECK_ERR(HURRAY_ERR_OUT_OF_RANGE, hurray_file_reader_kv_key(r, 2, &key, &len));

    /* The reference-compatible writer reproduces the file byte for byte. */
    HurrayWriteOptions opt;
    CHECK_OK(hurray_write_options_default(&opt));
    opt.reference_compat = 1;
    opt.durable = 0;
    char out[4096];
    join_path(out, sizeof out, tmp_dir(), "basic_copy.hrry");
    HurrayFileWriter *w = NULL;
    CHECK_OK(hurray_file_writer_create(out, &opt, &w));
    for (int i = 0; i < 2; i++) {
        HurrayTensor *t = NULL;
        CHECK_OK(hurray_file_reader_tensor(r, GOLDEN[i].name, &t));
        CHECK_OK(hurray_file_writer_write_tensor(w, GOLDEN[i].name, t));
        CHECK_OK(hurray_tensor_destroy(&t));
    }
    CHECK_OK(add_kv(w, "producer", kv_string(GOLDEN_PRODUCER)));
    CHECK_OK(add_kv(w, "tensor_count", kv_int64(GOLDEN_TENSOR_COUNT)));
    CHECK_OK(hurray_file_writer_finish(w));
    CHECK_OK(hurray_file_writer_destroy(&w));
    size_t copy_len = 0;
    char *copy = read_whole(out, &copy_len);
    CHECK(copy != NULL);
    CHECK(copy_len == file_len && memcmp(copy, file, file_len) == 0);
    free(copy);
    unlink(out);

    CHECK_OK(hurray_file_reader_destroy(&r));
    CHECK(r == NULL);
    free(manifest);
    free(file);
}

static void test_reader_destroyed_before_tensors(void) {
    const char *dir = env_or_null("HURRAY_CONFORMANCE_DIR");
    if (!dir) SKIP("HURRAY_CONFORMANCE_DIR not set");
    char path[4096];
    join_path(path, sizeof path, dir, "files/basic.hrry");
    HurrayFileReader *r = NULL;
    CHECK_OK(hurray_file_reader_open(path, &r));
    HurrayTensor *w = NULL, *b = NULL;
    HurrayItem *item = NULL;
    CHECK_OK(hurray_file_reader_tensor(r, "weights", &w));
    CHECK_OK(hurray_file_reader_tensor(r, "bias", &b));
    CHECK_OK(hurray_file_reader_item(r, "bias", &item));
    CHECK_OK(hurray_file_reader_destroy(&r));
    CHECK(r == NULL);
    /* The mapping lives on in the tensors. */
    uint64_t size = 0;
    const uint8_t *p = tensor_bytes(w, 0, &size);
    CHECK(size == 16);
    for (int i = 0; i < 16; i++) CHECK(p[i] == 0);
    p = tensor_bytes(b, 0, &size);
    CHECK(size == 3 && p[0] == 0 && p[2] == 0);
    const HurrayDescriptor *d = NULL;
    CHECK_OK(hurray_tensor_descriptor(w, &d));
    const HurrayDescriptorView *v = NULL;
    CHECK_OK(hurray_descriptor_view(d, &v));
    CHECK(v->header.rank == 2 && v->shape[1] == 2);
    CHECK_OK(hurray_tensor_destroy(&w));
    p = tensor_bytes(b, 0, &size); /* still valid after its sibling went */
    CHECK(size == 3);
    CHECK_OK(hurray_tensor_destroy(&b));
    const HurrayTensor *it = NULL;
    CHECK_OK(hurray_item_tensor(item, &it));
    p = tensor_bytes(it, 0, &size);
    CHECK(size == 3 && p[1] == 0);
    CHECK_OK(hurray_item_destroy(&item));
}

/* A group composite over the caller's memory (two float32 [2] members). */
static HurrayItem *make_group(Released rel[2]);

static void test_write_read_own_memory(void) {
    char path[4096];
    join_path(path, sizeof path, tmp_dir(), "own_memory.hrry");
    unlink(path);
    Released rel, owner;
    HurrayTensor *t = own_memory_tensor(3000, &rel, &owner);
    Released crel[2];
    HurrayWriteOptions opt;
    CHECK_OK(hurray_write_options_default(&opt));
    CHECK(opt.data_buffer_alignment == 4096 && opt.index_crc == 1 && opt.durable == 1);
    CHECK(opt.tensor_count_hint == HURRAY_COUNT_UNKNOWN);
    opt.sorted_index = 1;
    opt.tensor_count_hint = 4; /* t, the composite head and its two members */
    HurrayFileWriter *w = NULL;
    CHECK_OK(hurray_file_writer_create(path, &opt, &w));
    CHECK_OK(hurray_file_writer_write_tensor(w, "values", t));
    HurrayItem *group = make_group(crel);
    CHECK_OK(hurray_file_writer_write_item(w, "group", group));
    /* KV of every type, arrays included. */
    const uint8_t blob[3] = {1, 2, 255};
    const int64_t ints[3] = {-1, 0, INT64_MAX};
    const uint64_t uints[2] = {0, UINT64_MAX};
    const double floats[2] = {0.5, -2.25};
    const uint8_t bools[3] = {1, 0, 1};
    const uint8_t b0[2] = {9, 8};
    /* String and byte-sequence arrays: one tagged value per element. */
    const HurrayKvValue strs[2] = {kv_string("alpha"), kv_string("βeta")};
    const HurrayKvValue blobs[3] = {kv_data(HURRAY_KV_TYPE_BYTES, 0, b0, 2),
                                    kv_data(HURRAY_KV_TYPE_BYTES, 0, NULL, 0),
                                    kv_data(HURRAY_KV_TYPE_BYTES, 0, blob, 3)};
    const uint8_t A = HURRAY_KV_TYPE_ARRAY;
    CHECK_OK(add_kv(w, "s", kv_string("hello")));
    CHECK_OK(add_kv(w, "i", kv_int64(-42)));
    CHECK_OK(add_kv(w, "u", kv_uint64(UINT64_MAX)));
    CHECK_OK(add_kv(w, "f", kv_float64(3.5)));
    CHECK_OK(add_kv(w, "b", kv_bool(1)));
    CHECK_OK(add_kv(w, "y", kv_data(HURRAY_KV_TYPE_BYTES, 0, blob, 3)));
    CHECK_OK(add_kv(w, "ai", kv_data(A, HURRAY_KV_TYPE_INT64, ints, 3)));
    CHECK_OK(add_kv(w, "au", kv_data(A, HURRAY_KV_TYPE_UINT64, uints, 2)));
    CHECK_OK(add_kv(w, "af", kv_data(A, HURRAY_KV_TYPE_FLOAT64, floats, 2)));
    CHECK_OK(add_kv(w, "ab", kv_data(A, HURRAY_KV_TYPE_BOOL, bools, 3)));
    CHECK_OK(add_kv(w, "as", kv_data(A, HURRAY_KV_TYPE_STRING, strs, 2)));
    CHECK_OK(add_kv(w, "ay", kv_data(A, HURRAY_KV_TYPE_BYTES, blobs, 3)));
    CHECK_OK(add_kv(w, "empty", kv_data(A, HURRAY_KV_TYPE_INT64, NULL, 0)));
    CHECK_ERR(HURRAY_ERR_FORMAT, add_kv(w, "i", kv_int64(1))); /* duplicate */
    CHECK_ERR(HURRAY_ERR_INVALID_ARGUMENT, add_kv(w, "b2", kv_bool(2)));
    CHECK_ERR(HURRAY_ERR_INVALID_ARGUMENT, add_kv(w, "as2", kv_data(A, HURRAY_KV_TYPE_STRING, blobs, 3)));
    struct stat st;
    CHECK(stat(path, &st) != 0); /* nothing at the destination before finish */
    CHECK_OK(hurray_file_writer_finish(w));
    CHECK(stat(path, &st) == 0);
    CHECK_ERR(HURRAY_ERR_STATE, hurray_file_writer_finish(w));
    CHECK_ERR(HURRAY_ERR_STATE, hurray_file_writer_write_tensor(w, "late", t));
    CHECK_OK(hurray_file_writer_destroy(&w));
    CHECK(w == NULL);
    /* The writer read the caller's memory during the calls and kept nothing. */
    CHECK(released_count(&rel) == 0);

    HurrayFileReader *r = NULL;
    CHECK_OK(hurray_file_reader_open(path, &r));
    HurrayFileInfo info;
    CHECK_OK(hurray_file_reader_info(r, &info));
    CHECK(info.flags & HURRAY_FILE_FLAG_SORTED_INDEX);
    CHECK(info.tensor_count == 4 && info.tensor_count_hint == 4);
    const char *name = NULL;
    uint64_t len = 0;
    CHECK_OK(hurray_file_reader_tensor_name(r, 0, &name, &len));
    CHECK(strcmp(name, "group") == 0); /* sorted: group, group/0, group/1, values */
    CHECK_OK(hurray_file_reader_tensor_name(r, 3, &name, &len));
    CHECK(strcmp(name, "values") == 0);
    HurrayTensor *back = NULL;
    CHECK_OK(hurray_file_reader_tensor(r, "values", &back));
    CHECK(tensors_equal(back, t));
    uint64_t size = 0;
    const uint8_t *data = tensor_bytes(back, 0, &size);
    CHECK(((uintptr_t)data) % 4096 == 0); /* data_buffer_alignment in the mapping */
    HurrayItem *gback = NULL;
    CHECK_OK(hurray_file_reader_item(r, "group", &gback));
    uint64_t members = 0;
    CHECK_OK(hurray_item_member_count(gback, &members));
    CHECK(members == 2);
    for (uint64_t i = 0; i < 2; i++) {
        const HurrayItem *a = NULL, *b = NULL;
        const HurrayTensor *ta = NULL, *tb = NULL;
        CHECK_OK(hurray_item_member(gback, i, &a));
        CHECK_OK(hurray_item_member(group, i, &b));
        CHECK_OK(hurray_item_tensor(a, &ta));
        CHECK_OK(hurray_item_tensor(b, &tb));
        CHECK(tensors_equal(ta, tb));
    }
    HurrayTensor *member = NULL;
    CHECK_OK(hurray_file_reader_tensor(r, "group/1", &member));
    CHECK_OK(hurray_tensor_destroy(&member));

    /* KV back, every type: one tagged value per entry. */
    HurrayKvValue v = kv_get(r, "s");
    CHECK(v.type_tag == HURRAY_KV_TYPE_STRING && v.len == 5 && strcmp((const char *)v.data, "hello") == 0);
    v = kv_get(r, "i");
    CHECK(v.type_tag == HURRAY_KV_TYPE_INT64 && v.int64_value == -42);
    v = kv_get(r, "u");
    CHECK(v.type_tag == HURRAY_KV_TYPE_UINT64 && v.uint64_value == UINT64_MAX);
    v = kv_get(r, "f");
    CHECK(v.type_tag == HURRAY_KV_TYPE_FLOAT64 && v.float64_value == 3.5);
    v = kv_get(r, "b");
    CHECK(v.type_tag == HURRAY_KV_TYPE_BOOL && v.bool_value == 1);
    v = kv_get(r, "y");
    CHECK(v.type_tag == HURRAY_KV_TYPE_BYTES && v.len == 3 && memcmp(v.data, blob, 3) == 0);

    /* Numeric arrays: little-endian elements borrowed from the mapping, maybe
     * unaligned (memcpy them), or an aligned copy of any window. */
    int64_t ai[3];
    v = kv_get(r, "ai");
    CHECK(v.type_tag == HURRAY_KV_TYPE_ARRAY && v.element_type == HURRAY_KV_TYPE_INT64 && v.len == 3);
    memcpy(ai, v.data, sizeof ai);
    CHECK(memcmp(ai, ints, sizeof ints) == 0);
    uint64_t i = 0;
    CHECK_OK(hurray_file_reader_kv_find(r, "ai", &i));
    memset(ai, 0, sizeof ai);
    CHECK_OK(hurray_file_reader_kv_array_window(r, i, 1, 2, ai, sizeof ai));
    CHECK(ai[0] == 0 && ai[1] == INT64_MAX);
    HurrayKvValue e;
    CHECK_OK(hurray_file_reader_kv_array_element(r, i, 2, &e));
    CHECK(e.type_tag == HURRAY_KV_TYPE_INT64 && e.int64_value == INT64_MAX);
    CHECK_ERR(HURRAY_ERR_OUT_OF_RANGE, hurray_file_reader_kv_array_element(r, i, 3, &e));
    uint64_t au[2];
    v = kv_get(r, "au");
    CHECK(v.element_type == HURRAY_KV_TYPE_UINT64 && v.len == 2);
    memcpy(au, v.data, sizeof au);
    CHECK(au[1] == UINT64_MAX);
    double af[2];
    v = kv_get(r, "af");
    CHECK(v.element_type == HURRAY_KV_TYPE_FLOAT64 && v.len == 2);
    memcpy(af, v.data, sizeof af);
    CHECK(af[0] == 0.5 && af[1] == -2.25);
    v = kv_get(r, "ab");
    CHECK(v.element_type == HURRAY_KV_TYPE_BOOL && v.len == 3 && memcmp(v.data, bools, 3) == 0);

    /* String and byte-sequence arrays: element by element. */
    v = kv_get(r, "as");
    CHECK(v.element_type == HURRAY_KV_TYPE_STRING && v.len == 2 && v.data == NULL);
    CHECK_OK(hurray_file_reader_kv_find(r, "as", &i));
    CHECK_OK(hurray_file_reader_kv_array_element(r, i, 1, &e));
    CHECK(e.type_tag == HURRAY_KV_TYPE_STRING && e.len == strlen("βeta"));
    CHECK(strcmp((const char *)e.data, "βeta") == 0);
    CHECK_ERR(HURRAY_ERR_OUT_OF_RANGE, hurray_file_reader_kv_array_element(r, i, 2, &e));
    CHECK_OK(hurray_file_reader_kv_find(r, "ay", &i));
    CHECK_OK(hurray_file_reader_kv_array_element(r, i, 0, &e));
    const uint8_t *yv = (const uint8_t *)e.data;
    CHECK(e.type_tag == HURRAY_KV_TYPE_BYTES && e.len == 2 && yv[0] == 9 && yv[1] == 8);
    CHECK_OK(hurray_file_reader_kv_array_element(r, i, 1, &e));
    CHECK(e.len == 0 && e.data == NULL);
    CHECK_OK(hurray_file_reader_kv_array_element(r, i, 2, &e));
    CHECK(e.len == 3 && ((const uint8_t *)e.data)[2] == 255);
    v = kv_get(r, "empty");
    CHECK(v.type_tag == HURRAY_KV_TYPE_ARRAY && v.element_type == HURRAY_KV_TYPE_INT64 && v.len == 0);

    CHECK_OK(hurray_file_reader_destroy(&r));
    CHECK_OK(hurray_item_destroy(&gback));
    CHECK_OK(hurray_tensor_destroy(&back));
    CHECK_OK(hurray_item_destroy(&group));
    CHECK(released_count(&crel[0]) == 1 && released_count(&crel[1]) == 1);
    CHECK(released_count(&rel) == 0);
    CHECK_OK(hurray_tensor_destroy(&t));
    CHECK(released_count(&rel) == 1);
    CHECK(released_count(&owner) == 1);
    unlink(path);
}

static HurrayItem *make_group(Released rel[2]) {
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
    }
    return c;
}

static void test_abandoned_writer_leaves_no_file(void) {
    char path[4096];
    join_path(path, sizeof path, tmp_dir(), "abandoned.hrry");
    unlink(path);
    Released rel;
    HurrayTensor *t = own_memory_tensor(64, &rel, NULL);
    HurrayFileWriter *w = NULL;
    CHECK_OK(hurray_file_writer_create(path, NULL, &w));
    CHECK_OK(hurray_file_writer_write_tensor(w, "t", t));
    CHECK_OK(hurray_file_writer_destroy(&w));
    struct stat st;
    CHECK(stat(path, &st) != 0);
    /* No temporary file left beside it either. */
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "ls -a '%s' | grep -q abandoned", tmp_dir());
    CHECK(system(cmd) != 0);
    CHECK_OK(hurray_tensor_destroy(&t));
    CHECK(released_count(&rel) == 1);
}

/* Writes `values` (float32 0, 1, 2, ... 255) at `path`, with or without data CRCs. */
static void write_values(const char *path, uint8_t data_crc32c) {
    Released rel;
    HurrayTensor *t = own_memory_tensor(256, &rel, NULL);
    HurrayWriteOptions opt;
    CHECK_OK(hurray_write_options_default(&opt));
    CHECK(opt.data_crc32c == 0); /* off by default */
    opt.durable = 0;
    opt.data_crc32c = data_crc32c;
    HurrayFileWriter *w = NULL;
    CHECK_OK(hurray_file_writer_create(path, &opt, &w));
    CHECK_OK(hurray_file_writer_write_tensor(w, "values", t));
    CHECK_OK(hurray_file_writer_finish(w));
    CHECK_OK(hurray_file_writer_destroy(&w));
    CHECK_OK(hurray_tensor_destroy(&t));
    CHECK(released_count(&rel) == 1);
}

/* Opens `path` and runs the data check; *status is 0xEE unless written. */
static HurrayStatus verify_data(const char *path, uint8_t *status) {
    HurrayFileReader *r = NULL;
    CHECK_OK(hurray_file_reader_open(path, &r));
    *status = 0xEE;
    HurrayStatus s = hurray_file_reader_verify_data_crc32c(r, status);
    CHECK_OK(hurray_file_reader_destroy(&r));
    return s;
}

/* Flips one bit of the element 1.0f of `values` in the file at `path`. */
static void flip_data_byte(const char *path) {
    size_t len = 0;
    char *bytes = read_whole(path, &len);
    CHECK(bytes != NULL);
    const float want[4] = {0.0f, 1.0f, 2.0f, 3.0f};
    long at = -1;
    for (size_t i = 0; i + sizeof want <= len && at < 0; i++)
        if (memcmp(bytes + i, want, sizeof want) == 0) at = (long)i;
    CHECK(at >= 4096); /* the data, past the header and descriptor */
    FILE *f = fopen(path, "r+b");
    CHECK(f != NULL);
    CHECK(fseek(f, at + 5, SEEK_SET) == 0);
    CHECK(fputc(bytes[at + 5] ^ 0x01, f) != EOF);
    CHECK(fclose(f) == 0);
    free(bytes);
}

/* The optional data CRC-32C: recorded on request, verified on request, a flipped
 * data byte named by tensor, and a distinct answer for a file without it. */
static void test_data_crc32c(void) {
    char path[4096];
    join_path(path, sizeof path, tmp_dir(), "data_crc.hrry");
    write_values(path, 1);
    uint8_t status = 0;
    CHECK_OK(verify_data(path, &status));
    CHECK(status == HURRAY_CRC_VERIFIED);
    flip_data_byte(path);
    CHECK_ERR(HURRAY_ERR_FORMAT, verify_data(path, &status));
    CHECK(status == 0xEE);
    const char *m = hurray_last_error_message();
    CHECK(strstr(m, "DataCrcMismatch") != NULL && strstr(m, "tensor \"values\"") != NULL);

    write_values(path, 0);
    CHECK_OK(verify_data(path, &status));
    CHECK(status == HURRAY_CRC_ABSENT);
    flip_data_byte(path); /* unchecked data: the answer stays "absent", not "verified" */
    CHECK_OK(verify_data(path, &status));
    CHECK(status == HURRAY_CRC_ABSENT);

    HurrayWriteOptions opt;
    CHECK_OK(hurray_write_options_default(&opt));
    opt.data_crc32c = 2;
    HurrayFileWriter *w = NULL;
    CHECK_ERR(HURRAY_ERR_INVALID_ARGUMENT, hurray_file_writer_create(path, &opt, &w));
    CHECK(w == NULL);
    unlink(path);
}

static void test_file_errors(void) {
    char path[4096];
    HurrayFileReader *r = NULL;
    join_path(path, sizeof path, tmp_dir(), "does-not-exist.hrry");
    CHECK_ERR(HURRAY_ERR_FILE_NOT_FOUND, hurray_file_reader_open(path, &r));
    CHECK(r == NULL);
    CHECK_ERR(HURRAY_ERR_NULL_POINTER, hurray_file_reader_open(NULL, &r));
    CHECK_ERR(HURRAY_ERR_INVALID_ARGUMENT, hurray_file_reader_open("", &r));

    /* Not a Hurray file, and a file cut short. */
    join_path(path, sizeof path, tmp_dir(), "garbage.hrry");
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL);
    for (int i = 0; i < 200; i++) fputc('x', f);
    fclose(f);
    CHECK_ERR(HURRAY_ERR_FORMAT, hurray_file_reader_open(path, &r));
    f = fopen(path, "wb");
    fputs("HRRYFILE", f);
    fclose(f);
    CHECK_ERR(HURRAY_ERR_TRUNCATED, hurray_file_reader_open(path, &r));
    unlink(path);

    const char *dir = env_or_null("HURRAY_CONFORMANCE_DIR");
    if (dir) {
        join_path(path, sizeof path, dir, "files/basic.hrry");
        CHECK_OK(hurray_file_reader_open(path, &r));
        HurrayTensor *t = NULL;
        CHECK_ERR(HURRAY_ERR_NOT_FOUND, hurray_file_reader_tensor(r, "nope", &t));
        CHECK_ERR(HURRAY_ERR_NULL_POINTER, hurray_file_reader_tensor(r, NULL, &t));
        CHECK_ERR(HURRAY_ERR_NULL_POINTER, hurray_file_reader_tensor(r, "bias", NULL));
        CHECK_ERR(HURRAY_ERR_OUT_OF_RANGE, hurray_file_reader_tensor_name(r, 2, NULL, NULL));
        const char *name = NULL;
        uint64_t len = 0;
        CHECK_ERR(HURRAY_ERR_NULL_POINTER, hurray_file_reader_tensor_name(r, 0, &name, NULL));
        CHECK_ERR(HURRAY_ERR_INVALID_ARGUMENT, hurray_file_reader_tensor(r, "\xff", &t));
        CHECK(t == NULL && name == NULL && len == 0);
        CHECK_OK(hurray_file_reader_destroy(&r));
    }
    HurrayFileInfo info;
    CHECK_ERR(HURRAY_ERR_NULL_POINTER, hurray_file_reader_info(NULL, &info));

    /* Writers: a missing directory, a bad option, a duplicate name, an illegal alignment. */
    HurrayFileWriter *w = NULL;
    join_path(path, sizeof path, tmp_dir(), "no-such-dir/x.hrry");
    CHECK_ERR(HURRAY_ERR_FILE_NOT_FOUND, hurray_file_writer_create(path, NULL, &w));
    join_path(path, sizeof path, tmp_dir(), "bad.hrry");
    HurrayWriteOptions opt;
    CHECK_OK(hurray_write_options_default(&opt));
    opt.sorted_index = 2;
    CHECK_ERR(HURRAY_ERR_INVALID_ARGUMENT, hurray_file_writer_create(path, &opt, &w));
    CHECK_OK(hurray_write_options_default(&opt));
    opt.data_buffer_alignment = 1000;
    CHECK_ERR(HURRAY_ERR_FORMAT, hurray_file_writer_create(path, &opt, &w));
    CHECK(w == NULL);
    CHECK_OK(hurray_file_writer_create(path, NULL, &w));
    Released rel;
    HurrayTensor *t = own_memory_tensor(4, &rel, NULL);
    CHECK_OK(hurray_file_writer_write_tensor(w, "t", t));
    CHECK_ERR(HURRAY_ERR_FORMAT, hurray_file_writer_write_tensor(w, "t", t));
    CHECK_ERR(HURRAY_ERR_FORMAT, hurray_file_writer_write_tensor(w, "", t));
    CHECK_ERR(HURRAY_ERR_NULL_POINTER, hurray_file_writer_write_tensor(w, "u", NULL));
    CHECK_ERR(HURRAY_ERR_NULL_POINTER, hurray_file_writer_add_kv(w, "k", 1, NULL));
    CHECK_ERR(HURRAY_ERR_NULL_POINTER, add_kv(w, "k", kv_data(HURRAY_KV_TYPE_BYTES, 0, NULL, 3)));
    CHECK_OK(hurray_file_writer_destroy(&w));
    struct stat st;
    CHECK(stat(path, &st) != 0);
    CHECK_OK(hurray_tensor_destroy(&t));
    CHECK(released_count(&rel) == 1);
}

/* hurray_file_reader_open_with: limits below the file refuse it (naming the limit),
 * defaults and NULL open it, flags other than 0/1 are invalid arguments. */
static void test_open_with_options(void) {
    char path[4096];
    join_path(path, sizeof path, tmp_dir(), "options.hrry");
    HurrayFileWriter *w = NULL;
    CHECK_OK(hurray_file_writer_create(path, NULL, &w));
    Released rel;
    HurrayTensor *t = own_memory_tensor(16, &rel, NULL);
    CHECK_OK(hurray_file_writer_write_tensor(w, "a", t));
    CHECK_OK(hurray_file_writer_write_tensor(w, "b", t));
    CHECK_OK(hurray_file_writer_write_tensor(w, "c", t));
    CHECK_OK(add_kv(w, "k1", kv_string("v")));
    CHECK_OK(add_kv(w, "k2", kv_string("v")));
    CHECK_OK(hurray_file_writer_finish(w));
    CHECK_OK(hurray_file_writer_destroy(&w));

    HurrayFileReadOptions opt;
    CHECK_OK(hurray_file_read_options_default(&opt));
    CHECK(opt.max_tensors == (1u << 24) && opt.max_kv_entries == (1u << 20));
    CHECK(opt.permissive == 0 && opt.accept_private == 0 && opt.max_tiling_depth == 8);
    HurrayFileReader *r = NULL;
    CHECK_OK(hurray_file_reader_open_with(path, &opt, &r));
    HurrayFileInfo info;
    CHECK_OK(hurray_file_reader_info(r, &info));
    CHECK(info.tensor_count == 3 && info.kv_count == 2);
    CHECK_OK(hurray_file_reader_destroy(&r));
    CHECK_OK(hurray_file_reader_open_with(path, NULL, &r));
    CHECK_OK(hurray_file_reader_destroy(&r));

    opt.max_tensors = 2;
    CHECK_ERR(HURRAY_ERR_LIMIT, hurray_file_reader_open_with(path, &opt, &r));
    CHECK(r == NULL);
    CHECK(strstr(hurray_last_error_message(), "options.hrry") != NULL);
    CHECK_OK(hurray_file_read_options_default(&opt));
    opt.max_kv_entries = 1;
    CHECK_ERR(HURRAY_ERR_LIMIT, hurray_file_reader_open_with(path, &opt, &r));
    CHECK_OK(hurray_file_read_options_default(&opt));
    opt.permissive = 1; /* a valid file opens the same in permissive mode */
    CHECK_OK(hurray_file_reader_open_with(path, &opt, &r));
    CHECK_OK(hurray_file_reader_destroy(&r));
    opt.permissive = 2;
    CHECK_ERR(HURRAY_ERR_INVALID_ARGUMENT, hurray_file_reader_open_with(path, &opt, &r));
    CHECK_OK(hurray_file_read_options_default(&opt));
    opt.accept_private = 7;
    CHECK_ERR(HURRAY_ERR_INVALID_ARGUMENT, hurray_file_reader_open_with(path, &opt, &r));
    CHECK_ERR(HURRAY_ERR_NULL_POINTER, hurray_file_reader_open_with(NULL, NULL, &r));
    CHECK_ERR(HURRAY_ERR_NULL_POINTER, hurray_file_reader_open_with(path, NULL, NULL));
    CHECK_ERR(HURRAY_ERR_NULL_POINTER, hurray_file_read_options_default(NULL));
    CHECK(r == NULL);
    unlink(path);
    CHECK_OK(hurray_tensor_destroy(&t));
    CHECK(released_count(&rel) == 1);
}

/* Opens `path`, expects `status`, `category`, `os_error` and a message naming the path
 * and containing `needle`. */
static void check_open_fails(const char *path, HurrayStatus status, int32_t category,
                             int32_t os_error, const char *needle) {
    HurrayFileReader *r = NULL;
    CHECK_ERR(status, hurray_file_reader_open(path, &r));
    CHECK(r == NULL);
    const char *m = hurray_last_error_message();
    if (!strstr(m, path) || !strstr(m, needle)) {
        fprintf(stderr, "message %s lacks %s or %s\n", m, path, needle);
    }
    CHECK(strstr(m, path) != NULL);
    CHECK(strstr(m, needle) != NULL);
    CHECK(hurray_last_error_os_error() == os_error);
    int32_t c = 0;
    CHECK_OK(hurray_status_category(status, &c));
    CHECK(c == category);
}

/* The five bad inputs every binding is tested with: missing path, directory, empty
 * file, truncated file, random bytes. */
static void test_five_bad_inputs(void) {
    char path[4096];
    join_path(path, sizeof path, tmp_dir(), "five-missing.hrry");
    unlink(path);
    check_open_fails(path, HURRAY_ERR_FILE_NOT_FOUND, HURRAY_CATEGORY_NOT_FOUND, 2,
                     "No such file");
    check_open_fails(tmp_dir(), HURRAY_ERR_IO, HURRAY_CATEGORY_IO, 21, "Is a directory");

    join_path(path, sizeof path, tmp_dir(), "five-empty.hrry");
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL);
    fclose(f);
    check_open_fails(path, HURRAY_ERR_TRUNCATED, HURRAY_CATEGORY_TRUNCATED, 0,
                     "Truncated at byte 0");
    unlink(path);

    join_path(path, sizeof path, tmp_dir(), "five-random.hrry");
    f = fopen(path, "wb");
    CHECK(f != NULL);
    uint32_t x = 12345;
    for (int i = 0; i < 4096; i++) {
        x = x * 1103515245u + 12345u;
        fputc((int)(x >> 24), f);
    }
    fclose(f);
    check_open_fails(path, HURRAY_ERR_FORMAT, HURRAY_CATEGORY_FORMAT, 0, "Magic at byte 0");
    unlink(path);

    const char *dir = env_or_null("HURRAY_CONFORMANCE_DIR");
    if (dir) {
        char src[4096];
        join_path(src, sizeof src, dir, "files/basic.hrry");
        size_t len = 0;
        char *bytes = read_whole(src, &len);
        CHECK(bytes != NULL && len > 200);
        join_path(path, sizeof path, tmp_dir(), "five-truncated.hrry");
        f = fopen(path, "wb");
        CHECK(f != NULL);
        CHECK(fwrite(bytes, 1, len - 61, f) == len - 61);
        fclose(f);
        char needle[64];
        snprintf(needle, sizeof needle, "Truncated at byte %zu", len - 61);
        check_open_fails(path, HURRAY_ERR_TRUNCATED, HURRAY_CATEGORY_TRUNCATED, 0, needle);
        unlink(path);
        free(bytes);
    }

    /* Category lookups. */
    int32_t c = -1;
    CHECK_ERR(HURRAY_ERR_INVALID_ARGUMENT, hurray_status_category(HURRAY_OK, &c));
    CHECK_ERR(HURRAY_ERR_NULL_POINTER, hurray_status_category(HURRAY_ERR_IO, NULL));
    CHECK_OK(hurray_status_category(-12345, &c));
    CHECK(c == HURRAY_CATEGORY_INTERNAL);
    CHECK(strcmp(hurray_error_category_name(HURRAY_CATEGORY_NOT_FOUND), "not_found") == 0);
    CHECK(strcmp(hurray_error_category_name(HURRAY_CATEGORY_INVALID_ARGUMENT),
                 "invalid_argument") == 0);
    CHECK(strcmp(hurray_error_category_name(0), "unknown") == 0);
}

int main(void) {
    RUN(test_basic_hrry);
    RUN(test_open_with_options);
    RUN(test_reader_destroyed_before_tensors);
    RUN(test_write_read_own_memory);
    RUN(test_abandoned_writer_leaves_no_file);
    RUN(test_data_crc32c);
    RUN(test_file_errors);
    RUN(test_five_bad_inputs);
    END_TESTS();
}
