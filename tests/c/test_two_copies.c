/*
 * test_two_copies.c - two separately built copies of hurray-ffi in one process (the
 * Python extension's copy and a C extension's copy): a handle made by one is fully
 * usable by the other, through the frozen prefix alone.
 *
 * Usage: test_two_copies <copy A .so> <copy B .so>
 * `cargo xtask test` passes the debug and the release build of the cdylib, each copied
 * to its own file name, so the two differ in code, statics and debug checks. Both are
 * loaded RTLD_LOCAL: every function is looked up in one copy explicitly.
 *
 * This program does not link hurray-ffi; it uses the header only for types and, via
 * __typeof__, for the exact signature of every function it looks up.
 */
#include "hurray_test.h"

#include <dlfcn.h>

typedef struct Copy {
    const char *name;
    void *lib;
    __typeof__(&hurray_c_abi_version) c_abi_version;
    __typeof__(&hurray_debug_live_objects) live;
    __typeof__(&hurray_last_error_message) last_error;
    __typeof__(&hurray_descriptor_dense) descriptor_dense;
    __typeof__(&hurray_descriptor_encode) descriptor_encode;
    __typeof__(&hurray_descriptor_destroy) descriptor_destroy;
    __typeof__(&hurray_descriptor_header) descriptor_header;
    __typeof__(&hurray_descriptor_shape) descriptor_shape;
    __typeof__(&hurray_buffer_new) buffer_new;
    __typeof__(&hurray_buffer_data) buffer_data;
    __typeof__(&hurray_buffer_placement) buffer_placement;
    __typeof__(&hurray_buffer_list_new) list_new;
    __typeof__(&hurray_buffer_list_push) list_push;
    __typeof__(&hurray_buffer_list_len) list_len;
    __typeof__(&hurray_buffer_list_get) list_get;
    __typeof__(&hurray_tensor_new) tensor_new;
    __typeof__(&hurray_tensor_abi_version) tensor_abi_version;
    __typeof__(&hurray_tensor_descriptor) tensor_descriptor;
    __typeof__(&hurray_tensor_buffers) tensor_buffers;
    __typeof__(&hurray_tensor_buffer_data) tensor_buffer_data;
    __typeof__(&hurray_tensor_destroy) tensor_destroy;
    __typeof__(&hurray_item_from_tensor) item_from_tensor;
    __typeof__(&hurray_item_tensor) item_tensor;
    __typeof__(&hurray_item_destroy) item_destroy;
    __typeof__(&hurray_file_writer_create) writer_create;
    __typeof__(&hurray_file_writer_write_tensor) writer_write_tensor;
    __typeof__(&hurray_file_writer_finish) writer_finish;
    __typeof__(&hurray_file_writer_destroy) writer_destroy;
    __typeof__(&hurray_stream_encoder_new) encoder_new;
    __typeof__(&hurray_stream_encoder_begin_tensor) encoder_begin_tensor;
    __typeof__(&hurray_stream_encoder_chunk) encoder_chunk;
    __typeof__(&hurray_stream_encoder_end) encoder_end;
    __typeof__(&hurray_stream_encoder_destroy) encoder_destroy;
    __typeof__(&hurray_file_reader_open) reader_open;
    __typeof__(&hurray_file_reader_tensor) reader_tensor;
    __typeof__(&hurray_file_reader_destroy) reader_destroy;
} Copy;

static void *sym(Copy *c, const char *name) {
    void *p = dlsym(c->lib, name);
    if (!p) {
        fprintf(stderr, "%s: missing symbol %s: %s\n", c->name, name, dlerror());
        exit(1);
    }
    return p;
}

#define LOAD(c, field, fn) ((c)->field = (__typeof__((c)->field))sym((c), #fn))

static void load(Copy *c, const char *name, const char *path) {
    c->name = name;
    c->lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!c->lib) {
        fprintf(stderr, "dlopen %s: %s\n", path, dlerror());
        exit(1);
    }
    LOAD(c, c_abi_version, hurray_c_abi_version);
    LOAD(c, live, hurray_debug_live_objects);
    LOAD(c, last_error, hurray_last_error_message);
    LOAD(c, descriptor_dense, hurray_descriptor_dense);
    LOAD(c, descriptor_encode, hurray_descriptor_encode);
    LOAD(c, descriptor_destroy, hurray_descriptor_destroy);
    LOAD(c, descriptor_header, hurray_descriptor_header);
    LOAD(c, descriptor_shape, hurray_descriptor_shape);
    LOAD(c, buffer_new, hurray_buffer_new);
    LOAD(c, buffer_data, hurray_buffer_data);
    LOAD(c, buffer_placement, hurray_buffer_placement);
    LOAD(c, list_new, hurray_buffer_list_new);
    LOAD(c, list_push, hurray_buffer_list_push);
    LOAD(c, list_len, hurray_buffer_list_len);
    LOAD(c, list_get, hurray_buffer_list_get);
    LOAD(c, tensor_new, hurray_tensor_new);
    LOAD(c, tensor_abi_version, hurray_tensor_abi_version);
    LOAD(c, tensor_descriptor, hurray_tensor_descriptor);
    LOAD(c, tensor_buffers, hurray_tensor_buffers);
    LOAD(c, tensor_buffer_data, hurray_tensor_buffer_data);
    LOAD(c, tensor_destroy, hurray_tensor_destroy);
    LOAD(c, item_from_tensor, hurray_item_from_tensor);
    LOAD(c, item_tensor, hurray_item_tensor);
    LOAD(c, item_destroy, hurray_item_destroy);
    LOAD(c, writer_create, hurray_file_writer_create);
    LOAD(c, writer_write_tensor, hurray_file_writer_write_tensor);
    LOAD(c, writer_finish, hurray_file_writer_finish);
    LOAD(c, writer_destroy, hurray_file_writer_destroy);
    LOAD(c, encoder_new, hurray_stream_encoder_new);
    LOAD(c, encoder_begin_tensor, hurray_stream_encoder_begin_tensor);
    LOAD(c, encoder_chunk, hurray_stream_encoder_chunk);
    LOAD(c, encoder_end, hurray_stream_encoder_end);
    LOAD(c, encoder_destroy, hurray_stream_encoder_destroy);
    LOAD(c, reader_open, hurray_file_reader_open);
    LOAD(c, reader_tensor, hurray_file_reader_tensor);
    LOAD(c, reader_destroy, hurray_file_reader_destroy);
}

#define OK(c, call)                                                                      \
    do {                                                                                 \
        HurrayStatus s_ = (call);                                                        \
        hurray_test_checks++;                                                            \
        if (s_ != HURRAY_OK) {                                                           \
            const char *m_ = (c)->last_error();                                          \
            fprintf(stderr, "%s:%d: [%s] %s returned %d: %s\n", __FILE__, __LINE__,       \
                    (c)->name, #call, s_, m_ ? m_ : "");                                 \
            exit(1);                                                                     \
        }                                                                                \
    } while (0)

/* The frozen prefix (ABI 10): u32 abi_version, u16 kind, u16 flags, impl_id, destroy. */
typedef struct Prefix {
    uint32_t abi_version;
    uint16_t kind, flags;
    const void *impl_id;
    void (*destroy)(void *);
} Prefix;

static const Prefix *prefix(const void *handle) { return (const Prefix *)handle; }

static Copy A, B;

/* A float32 [3, 5] tensor made by `maker` over the caller's own memory. */
static HurrayTensor *make(Copy *maker, Released *rel) {
    enum { N = 15 };
    float *mem = (float *)alloc64(N * sizeof(float));
    for (int i = 0; i < N; i++) mem[i] = (float)i * 0.5f;
    released_init(rel, mem);
    uint64_t shape[2] = {3, 5};
    HurrayDescriptor *d = NULL;
    OK(maker, maker->descriptor_dense(HURRAY_TYPE_FLOAT32, 2, shape, &d));
    uint8_t bytes[256];
    uint64_t len = 0;
    OK(maker, maker->descriptor_encode(d, bytes, sizeof bytes, &len));
    OK(maker, maker->descriptor_destroy(&d));
    HurrayBuffer *b = NULL;
    OK(maker, maker->buffer_new(mem, N * sizeof(float), 64, HURRAY_DEVICE_CPU, 0, 0, NULL,
                                count_release, rel, &b));
    HurrayBufferList *l = NULL;
    OK(maker, maker->list_new(&l));
    OK(maker, maker->list_push(l, &b));
    HurrayTensor *t = NULL;
    OK(maker, maker->tensor_new(HURRAY_C_ABI_VERSION, bytes, len, l, NULL, NULL, &t));
    return t;
}

/* Everything a consumer does with a tensor, through `user`'s functions. */
static void use_everything(Copy *user, const HurrayTensor *t, const float *expect) {
    uint32_t v = 0;
    OK(user, user->tensor_abi_version(t, &v));
    CHECK(v == HURRAY_C_ABI_VERSION);
    const HurrayDescriptor *d = NULL;
    OK(user, user->tensor_descriptor(t, &d));
    HurrayDescriptorHeader h;
    OK(user, user->descriptor_header(d, &h));
    CHECK(h.type_tag == HURRAY_TYPE_FLOAT32 && h.rank == 2 && h.buffer_count == 1);
    CHECK(h.layout_tag == HURRAY_LAYOUT_ROW_MAJOR);
    uint64_t shape[4], rank = 0;
    OK(user, user->descriptor_shape(d, shape, 4, &rank));
    CHECK(rank == 2 && shape[0] == 3 && shape[1] == 5);
    const HurrayBufferList *l = NULL;
    uint64_t n = 0;
    OK(user, user->tensor_buffers(t, &l));
    OK(user, user->list_len(l, &n));
    CHECK(n == 1);
    const HurrayBuffer *b = NULL;
    OK(user, user->list_get(l, 0, &b));
    const void *data = NULL;
    uint64_t size = 0;
    OK(user, user->buffer_data(b, &data, &size));
    CHECK(size == 60 && data == expect);
    uint32_t align = 0;
    uint8_t dev = 9, sync = 9, cls = 9;
    OK(user, user->buffer_placement(b, &align, &dev, &sync, &cls));
    CHECK(align == 64 && dev == 0 && sync == 0 && cls == 0);
    const void *first = NULL;
    OK(user, user->tensor_buffer_data(t, 0, &first, &size));
    CHECK(first == data);
    const float *f = (const float *)first;
    for (int i = 0; i < 15; i++) CHECK(f[i] == (float)i * 0.5f);
}

static void test_copies_are_distinct(void) {
    CHECK(A.c_abi_version() == HURRAY_C_ABI_VERSION && B.c_abi_version() == HURRAY_C_ABI_VERSION);
    CHECK(A.tensor_new != B.tensor_new); /* two copies of the code */
    Released ra, rb;
    HurrayTensor *ta = make(&A, &ra);
    HurrayTensor *tb = make(&B, &rb);
    CHECK(A.live() > 0 && B.live() > 0);
    CHECK(prefix(ta)->abi_version == 10 && prefix(tb)->abi_version == 10);
    CHECK(prefix(ta)->kind == prefix(tb)->kind);
    CHECK(prefix(ta)->impl_id != prefix(tb)->impl_id); /* distinct statics */
    CHECK(prefix(ta)->destroy != prefix(tb)->destroy);
    printf("     copy A impl_id %p, copy B impl_id %p\n", prefix(ta)->impl_id, prefix(tb)->impl_id);
    OK(&A, A.tensor_destroy(&ta));
    OK(&B, B.tensor_destroy(&tb));
    CHECK(released_count(&ra) == 1 && released_count(&rb) == 1);
    CHECK(A.live() == 0 && B.live() == 0);
}

/* `user` writes `maker`'s tensor to a file and reads it back (its own reader). */
static void write_file_across(Copy *maker, Copy *user, const HurrayTensor *t, const uint8_t *expect) {
    char path[4096];
    snprintf(path, sizeof path, "%s/hurray_two_copies_%s.hrry", tmp_dir(), maker == &A ? "a" : "b");
    HurrayFileWriter *w = NULL;
    OK(user, user->writer_create(path, NULL, &w));
    OK(user, user->writer_write_tensor(w, "t", t));
    OK(user, user->writer_finish(w));
    OK(user, user->writer_destroy(&w));
    HurrayFileReader *r = NULL;
    HurrayTensor *back = NULL;
    OK(user, user->reader_open(path, &r));
    OK(user, user->reader_tensor(r, "t", &back));
    OK(user, user->reader_destroy(&r));
    const void *data = NULL;
    uint64_t size = 0;
    OK(user, user->tensor_buffer_data(back, 0, &data, &size));
    CHECK(size == 15 * sizeof(float) && memcmp(data, expect, size) == 0);
    OK(user, user->tensor_destroy(&back));
    remove(path);
}

/* `user`'s stream encoder points its last chunk at `maker`'s buffer (no copy). */
static void encode_across(Copy *user, const HurrayTensor *t, const uint8_t *expect) {
    HurrayStreamEncoder *e = NULL;
    uint64_t chunks = 0, total = 0;
    OK(user, user->encoder_new(NULL, &e));
    OK(user, user->encoder_begin_tensor(e, t, &chunks, &total));
    CHECK(chunks == 2);
    const uint8_t *p = NULL;
    uint64_t n = 0;
    OK(user, user->encoder_chunk(e, chunks - 1, &p, &n));
    CHECK(p == expect && n == 15 * sizeof(float));
    OK(user, user->encoder_end(e));
    OK(user, user->encoder_destroy(&e));
}

static void cross(Copy *maker, Copy *user) {
    Released rel;
    HurrayTensor *t = make(maker, &rel);
    int64_t maker_live = maker->live(), user_live = user->live();
    CHECK(maker_live > 0);
    CHECK(user_live == 0); /* the user's copy made nothing */
    use_everything(user, t, (const float *)rel.memory);
    /* The other copy writes it: to a file, and to a stream without copying. */
    write_file_across(maker, user, t, (const uint8_t *)rel.memory);
    encode_across(user, t, (const uint8_t *)rel.memory);
    CHECK(released_count(&rel) == 0);
    CHECK(user->live() == 0);
    /* The other copy adopts it into an item: same memory, released once when the
       item goes, through the maker's destructor. */
    HurrayItem *item = NULL;
    HurrayTensor *keep = t;
    OK(user, user->item_from_tensor(&keep, &item));
    CHECK(keep == NULL && item != NULL);
    const HurrayTensor *inner = NULL;
    const void *data = NULL;
    uint64_t size = 0;
    OK(user, user->item_tensor(item, &inner));
    OK(user, user->tensor_buffer_data(inner, 0, &data, &size));
    CHECK(data == rel.memory && size == 15 * sizeof(float));
    CHECK(released_count(&rel) == 0);
    OK(user, user->item_destroy(&item));
    CHECK(item == NULL);
    CHECK(released_count(&rel) == 1);
    CHECK(maker->live() == 0);
    CHECK(user->live() == 0);
}

/* Destroyed through the other copy: the maker's destructor runs, once. */
static void destroy_across(Copy *maker, Copy *user) {
    Released rel;
    HurrayTensor *t = make(maker, &rel);
    OK(user, user->tensor_destroy(&t));
    CHECK(t == NULL);
    CHECK(released_count(&rel) == 1);
    CHECK(maker->live() == 0 && user->live() == 0);
}

static void test_a_makes_b_destroys(void) { destroy_across(&A, &B); }

static void test_b_makes_a_destroys(void) { destroy_across(&B, &A); }

static void test_a_makes_b_writes_and_adopts(void) { cross(&A, &B); }

static void test_b_makes_a_writes_and_adopts(void) { cross(&B, &A); }

static void test_file_tensor_across_copies(void) {
    const char *dir = env_or_null("HURRAY_CONFORMANCE_DIR");
    if (!dir) SKIP("HURRAY_CONFORMANCE_DIR not set");
    char path[4096];
    join_path(path, sizeof path, dir, "files/basic.hrry");
    HurrayFileReader *r = NULL;
    OK(&A, A.reader_open(path, &r));
    HurrayTensor *t = NULL;
    OK(&A, A.reader_tensor(r, "weights", &t));
    OK(&A, A.reader_destroy(&r));
    /* Copy B reads a mapped-file tensor of copy A and frees it (and the mapping). */
    const HurrayDescriptor *d = NULL;
    HurrayDescriptorHeader h;
    OK(&B, B.tensor_descriptor(t, &d));
    OK(&B, B.descriptor_header(d, &h));
    CHECK(h.type_tag == HURRAY_TYPE_FLOAT32 && h.rank == 2);
    const void *data = NULL;
    uint64_t size = 0;
    OK(&B, B.tensor_buffer_data(t, 0, &data, &size));
    CHECK(size == 16 && ((const uint8_t *)data)[15] == 0);
    OK(&B, B.tensor_destroy(&t));
    CHECK(A.live() == 0 && B.live() == 0);
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: %s <copy A .so> <copy B .so>\n", argv[0]);
        return 2;
    }
    load(&A, "copy A", argv[1]);
    load(&B, "copy B", argv[2]);
    RUN(test_copies_are_distinct);
    RUN(test_a_makes_b_destroys);
    RUN(test_b_makes_a_destroys);
    RUN(test_a_makes_b_writes_and_adopts);
    RUN(test_b_makes_a_writes_and_adopts);
    RUN(test_file_tensor_across_copies);
    CHECK(A.live() == 0 && B.live() == 0);
    printf("all passed (%d checks, 0 live objects in either copy)\n", hurray_test_checks);
    /* No dlclose: each copy's statics (debug builds keep recently destroyed handles
       there to detect a stale second destroy) stay reachable until exit. */
    return 0;
}
