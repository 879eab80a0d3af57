/*
 * test_descriptor.c - a descriptor as data: read in one call (hurray_descriptor_view)
 * and built in one call from the same struct (hurray_descriptor_from_view). Every
 * conformance vector round-trips view -> from_view -> encode byte for byte; views
 * filled in by hand build what they say.
 */
#include "hurray_test.h"

#include <dirent.h>

/* decode -> view -> from_view -> encode gives the same bytes; so does the view with
 * its output-only header fields zeroed. Returns 1 when the round trip held. */
static int round_trips(const uint8_t *bytes, uint64_t len) {
    HurrayDescriptor *d = NULL, *again = NULL;
    CHECK_OK(hurray_descriptor_decode(bytes, len, &d));
    const HurrayDescriptorView *v = NULL;
    CHECK_OK(hurray_descriptor_view(d, &v));
    CHECK(v->header.descriptor_length == len);
    int same = 1;
    for (int zeroed = 0; zeroed < 2; zeroed++) {
        HurrayDescriptorView w = *v;
        if (zeroed) {
            w.header.flags = 0;             /* derived from the sections */
            w.header.descriptor_length = 0; /* ignored */
        }
        CHECK_OK(hurray_descriptor_from_view(&w, &again));
        uint8_t out[4096];
        uint64_t out_len = 0;
        CHECK_OK(hurray_descriptor_encode(again, out, sizeof out, &out_len));
        same = same && out_len == len && memcmp(out, bytes, (size_t)len) == 0;
        CHECK_OK(hurray_descriptor_destroy(&again));
    }
    CHECK_OK(hurray_descriptor_destroy(&d));
    return same;
}

static void test_conformance_vectors_round_trip(void) {
    const char *dir = env_or_null("HURRAY_CONFORMANCE_DIR");
    if (!dir) SKIP("HURRAY_CONFORMANCE_DIR not set");
    char path[4096];
    join_path(path, sizeof path, dir, "descriptors");
    DIR *dd = opendir(path);
    if (!dd) SKIP("conformance descriptors not found");
    int n = 0;
    for (struct dirent *e; (e = readdir(dd)) != NULL;) {
        size_t l = strlen(e->d_name);
        if (l < 5 || strcmp(e->d_name + l - 4, ".bin") != 0) continue;
        char file[4096];
        join_path(file, sizeof file, path, e->d_name);
        size_t len = 0;
        char *bytes = read_whole(file, &len);
        CHECK(bytes != NULL);
        if (!round_trips((const uint8_t *)bytes, len)) {
            fprintf(stderr, "%s: view -> from_view -> encode differs\n", e->d_name);
            CHECK(0);
        }
        free(bytes);
        n++;
    }
    closedir(dd);
    printf("     %d conformance descriptors round-tripped\n", n);
    CHECK(n >= 9);
}

static void test_build_by_hand(void) {
    /* A CSR matrix [3, 4] with 5 stored elements: values (5 x f32), col_indices
     * (5 x u64), row_ptr (4 x u64), layouts.md §2.7; the struct zeroed, then only
     * CSR's fields set. */
    uint64_t shape[2] = {3, 4};
    HurrayBufferEntry buffers[3];
    memset(buffers, 0, sizeof buffers);
    const uint64_t sizes[3] = {20, 40, 32};
    for (int i = 0; i < 3; i++) {
        buffers[i].byte_size = sizes[i];
        buffers[i].alignment = 64;
    }
    HurrayStatistics stats;
    memset(&stats, 0, sizeof stats);
    stats.computed_mask = HURRAY_STAT_NNZ_VALID;
    stats.nnz = 5;
    HurrayDescriptorView v;
    memset(&v, 0, sizeof v);
    v.header.type_tag = HURRAY_TYPE_FLOAT32;
    v.header.layout_tag = HURRAY_LAYOUT_CSR;
    v.header.rank = 2;
    v.header.buffer_count = 3;
    v.shape = shape;
    v.buffers = buffers;
    v.nnz = 5;
    v.statistics = &stats;
    HurrayDescriptor *d = NULL;
    CHECK_OK(hurray_descriptor_from_view(&v, &d));
    const HurrayDescriptorView *r = NULL;
    CHECK_OK(hurray_descriptor_view(d, &r));
    CHECK(r->header.layout_tag == HURRAY_LAYOUT_CSR && r->nnz == 5);
    CHECK(r->header.flags == HURRAY_FLAG_HAS_STATISTICS);
    CHECK(r->header.buffer_count == 3 && r->buffers[2].byte_size == 32);
    CHECK(r->statistics != NULL && r->statistics->nnz == 5);
    CHECK(r->shape != shape); /* the library keeps its own copy */
    CHECK_OK(hurray_descriptor_destroy(&d));

    /* nnz larger than the values buffer holds: the spec rule is named. */
    v.nnz = 6;
    CHECK_ERR(HURRAY_ERR_DESCRIPTOR, hurray_descriptor_from_view(&v, &d));
    CHECK(d == NULL);
    /* A section flag without its section. */
    v.nnz = 5;
    v.header.flags = HURRAY_FLAG_HAS_SHARD;
    CHECK_ERR(HURRAY_ERR_INVALID_ARGUMENT, hurray_descriptor_from_view(&v, &d));
    CHECK(strstr(hurray_last_error_message(), "header.flags") != NULL);

    /* The composite head the file and stream tests use. */
    d = composite_head_descriptor(3);
    CHECK_OK(hurray_descriptor_view(d, &r));
    CHECK(r->composite_head != NULL && r->composite_head->member_count == 3);
    CHECK(r->composite_head->composition_rule == HURRAY_COMPOSITION_GROUP);
    CHECK(r->header.buffer_count == 0 && r->buffers == NULL);
    CHECK_OK(hurray_descriptor_destroy(&d));
}

int main(void) {
    RUN(test_conformance_vectors_round_trip);
    RUN(test_build_by_hand);
    END_TESTS();
}
