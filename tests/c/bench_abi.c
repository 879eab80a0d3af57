/*
 * bench_abi.c - what the C ABI costs, measured from C against the release staticlib
 * (`cargo xtask bench-c`, compiled -O2):
 *
 *   1. ns per hurray_tensor_abi_version call (the first call on any received tensor);
 *   2. ns per hurray_tensor_buffer_data call (a tensor's first buffer pointer);
 *   3. ms per decode of one 64 MiB float32 tensor from an in-memory stream through the
 *      sans-io ABI: demand, memcpy up to 1 MiB into the demanded slice (the "read"),
 *      advance, until the tensor comes out of hurray_stream_decoder_next_tensor.
 *
 * The Rust side of (3), the same loop over hurray-io's StreamDecoder directly, is
 * `cargo bench -p hurray-ffi --bench abi` (group stream_decode_64MiB).
 */
#include "hurray_test.h"

#include <time.h>

static double now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

enum { ROUNDS = 7 };

static volatile uint64_t sink;

static void bench_abi_version(const HurrayTensor *t) {
    const long n = 20 * 1000 * 1000;
    double best = 1e30, runs[ROUNDS];
    for (int r = 0; r < ROUNDS; r++) {
        uint64_t acc = 0;
        double t0 = now_ns();
        for (long i = 0; i < n; i++) {
            uint32_t v = 0;
            hurray_tensor_abi_version(t, &v);
            acc += v;
        }
        double dt = (now_ns() - t0) / (double)n;
        sink += acc;
        runs[r] = dt;
        if (dt < best) best = dt;
    }
    qsort(runs, ROUNDS, sizeof *runs, cmp_double);
    printf("hurray_tensor_abi_version:  %6.2f ns/call (median of %d x %ld calls; best %.2f)\n",
           runs[ROUNDS / 2], ROUNDS, n, best);
}

static void bench_first_buffer(const HurrayTensor *t) {
    const long n = 20 * 1000 * 1000;
    double best = 1e30, runs[ROUNDS];
    for (int r = 0; r < ROUNDS; r++) {
        uint64_t acc = 0;
        double t0 = now_ns();
        for (long i = 0; i < n; i++) {
            const void *p = NULL;
            uint64_t size = 0;
            hurray_tensor_buffer_data(t, 0, &p, &size);
            acc += (uintptr_t)p + size;
        }
        double dt = (now_ns() - t0) / (double)n;
        sink += acc;
        runs[r] = dt;
        if (dt < best) best = dt;
    }
    qsort(runs, ROUNDS, sizeof *runs, cmp_double);
    printf("hurray_tensor_buffer_data:  %6.2f ns/call (median of %d x %ld calls; best %.2f)\n",
           runs[ROUNDS / 2], ROUNDS, n, best);
}

/* One decode of `s` through the ABI, reading at most `step` bytes per "read". */
static HurrayTensor *decode_once(const Bytes *s, size_t step) {
    HurrayStreamDecoder *dec = NULL;
    CHECK_OK(hurray_stream_decoder_new(NULL, &dec));
    size_t pos = 0;
    HurrayTensor *t = NULL;
    while (t == NULL) {
        uint8_t *dst = NULL;
        uint64_t want = 0;
        CHECK_OK(hurray_stream_decoder_demand(dec, &dst, &want));
        CHECK(want > 0 && pos < s->len);
        size_t n = s->len - pos;
        if (n > step) n = step;
        if (n > want) n = (size_t)want;
        memcpy(dst, s->data + pos, n);
        pos += n;
        CHECK_OK(hurray_stream_decoder_advance(dec, n));
        CHECK_OK(hurray_stream_decoder_next_tensor(dec, &t));
    }
    CHECK(pos == s->len);
    CHECK_OK(hurray_stream_decoder_finish(dec));
    CHECK_OK(hurray_stream_decoder_destroy(&dec));
    return t;
}

static void bench_stream_decode(void) {
    const uint64_t count = 16u * 1024 * 1024; /* float32: 64 MiB */
    Released rel;
    HurrayTensor *src = own_memory_tensor(count, &rel, NULL);
    HurrayStreamEncoder *enc = NULL;
    CHECK_OK(hurray_stream_encoder_new(NULL, &enc));
    Bytes s = {0};
    encode_tensor(enc, src, &s);
    CHECK_OK(hurray_stream_encoder_destroy(&enc));

    const size_t step = 1 << 20;
    /* Check once that it decodes to the same bytes. */
    HurrayTensor *t = decode_once(&s, step);
    CHECK(tensors_equal(t, src));
    CHECK_OK(hurray_tensor_destroy(&t));
    CHECK_OK(hurray_tensor_destroy(&src));

    enum { R = 15 };
    double ms[R];
    for (int r = 0; r < R; r++) {
        double t0 = now_ns();
        t = decode_once(&s, step);
        ms[r] = (now_ns() - t0) / 1e6;
        CHECK_OK(hurray_tensor_destroy(&t)); /* outside the timed region: as in Rust */
    }
    qsort(ms, R, sizeof *ms, cmp_double);
    double mib = (double)s.len / (1024.0 * 1024.0);
    printf("stream decode 64 MiB (C ABI, 1 MiB reads): median %.2f ms (%.2f GiB/s), best %.2f ms, "
           "%d runs\n",
           ms[R / 2], mib / 1024.0 / (ms[R / 2] / 1e3), ms[0], R);
    bytes_free(&s);
    CHECK(released_count(&rel) == 1);
}

int main(void) {
    Released rel;
    HurrayTensor *t = own_memory_tensor(1024, &rel, NULL);
    bench_abi_version(t);
    bench_first_buffer(t);
    CHECK_OK(hurray_tensor_destroy(&t));
    bench_stream_decode();
    CHECK(hurray_debug_live_objects() == 0);
    return 0;
}
