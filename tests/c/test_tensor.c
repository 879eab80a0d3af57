/*
 * test_tensor.c - the one handle from C: a tensor over the caller's own memory, its
 * descriptor and buffers, release exactly once (also from a second thread), items,
 * and the panic boundary.
 */
#include "hurray_test.h"

#include <pthread.h>

static void test_abi_version(void) {
    CHECK(hurray_c_abi_version() == HURRAY_C_ABI_VERSION);
    CHECK(HURRAY_C_ABI_VERSION == 10);
}

static void test_own_memory_tensor_fields(void) {
    Released rel, owner;
    HurrayTensor *t = own_memory_tensor(6, &rel, &owner);
    uint32_t v = 0;
    CHECK_OK(hurray_tensor_abi_version(t, &v));
    CHECK(v == HURRAY_C_ABI_VERSION);
    CHECK_OK(hurray_handle_abi_version(t, &v));
    CHECK(v == HURRAY_C_ABI_VERSION);

    const HurrayDescriptor *d = NULL;
    CHECK_OK(hurray_tensor_descriptor(t, &d));
    const HurrayDescriptorView *view = NULL;
    CHECK_OK(hurray_descriptor_view(d, &view));
    const HurrayDescriptorHeader h = view->header;
    CHECK(h.version_major == 1);
    CHECK(h.type_tag == HURRAY_TYPE_FLOAT32);
    CHECK(h.layout_tag == HURRAY_LAYOUT_ROW_MAJOR);
    CHECK(h.rank == 1);
    CHECK(h.buffer_count == 1);
    CHECK(h.byte_offset == 0);
    CHECK(view->shape[0] == 6);
    const HurrayBufferEntry e = view->buffers[0];
    CHECK(e.byte_size == 24 && e.alignment == 64 && e.device_tag == HURRAY_DEVICE_CPU);
    CHECK(view->strides == NULL && view->quantization == NULL && view->statistics == NULL);

    const HurrayBufferList *l = NULL;
    uint64_t n = 0;
    CHECK_OK(hurray_tensor_buffers(t, &l));
    CHECK_OK(hurray_buffer_list_len(l, &n));
    CHECK(n == 1);
    const HurrayBuffer *b = NULL;
    CHECK_OK(hurray_buffer_list_get(l, 0, &b));
    const void *data = NULL;
    uint64_t size = 0;
    CHECK_OK(hurray_buffer_data(b, &data, &size));
    CHECK(data == rel.memory); /* zero-copy: the caller's own memory */
    CHECK(size == 24);
    uint32_t align = 0;
    uint8_t dev = 9, sync = 9, cls = 9;
    CHECK_OK(hurray_buffer_placement(b, &align, &dev, &sync, &cls));
    CHECK(align == 64 && dev == HURRAY_DEVICE_CPU && sync == 0 && cls == 0);
    const float *f = (const float *)data;
    for (int i = 0; i < 6; i++) CHECK(f[i] == (float)i);

    CHECK(released_count(&rel) == 0 && released_count(&owner) == 0);
    CHECK_OK(hurray_tensor_destroy(&t));
    CHECK(t == NULL);
    CHECK(released_count(&rel) == 1);
    CHECK(released_count(&owner) == 1);
    /* Destroying NULL, and a NULL slot, are no-ops. */
    CHECK_OK(hurray_tensor_destroy(&t));
    CHECK_OK(hurray_tensor_destroy(NULL));
    CHECK(released_count(&rel) == 1);
}

typedef struct ThreadArg {
    HurrayTensor *tensor;
    HurrayStatus status;
    pthread_t released_on;
    Released *rel;
} ThreadArg;

static ThreadArg *thread_arg_for_release;

static void release_recording_thread(void *context) {
    thread_arg_for_release->released_on = pthread_self();
    count_release(context);
}

static void *destroy_on_thread(void *p) {
    ThreadArg *a = (ThreadArg *)p;
    a->status = hurray_tensor_destroy(&a->tensor);
    return NULL;
}

static void test_destroy_on_second_thread(void) {
    uint64_t count = 16;
    float *data = (float *)alloc64(count * 4);
    memset(data, 0, count * 4);
    Released rel;
    released_init(&rel, data);
    ThreadArg arg;
    memset(&arg, 0, sizeof arg);
    arg.rel = &rel;
    thread_arg_for_release = &arg;
    uint64_t len = 0;
    uint8_t *desc = dense_descriptor_bytes(HURRAY_TYPE_FLOAT32, 1, &count, &len);
    HurrayBuffer *b = NULL;
    CHECK_OK(hurray_buffer_new(data, count * 4, 64, HURRAY_DEVICE_CPU, 0, 0, NULL,
                               release_recording_thread, &rel, &b));
    HurrayBufferList *l = NULL;
    CHECK_OK(hurray_buffer_list_new(&l));
    CHECK_OK(hurray_buffer_list_push(l, &b));
    CHECK_OK(hurray_tensor_new(HURRAY_C_ABI_VERSION, desc, len, l, NULL, NULL, &arg.tensor));
    free(desc);

    pthread_t th;
    CHECK(pthread_create(&th, NULL, destroy_on_thread, &arg) == 0);
    CHECK(pthread_join(th, NULL) == 0);
    CHECK(arg.status == HURRAY_OK);
    CHECK(arg.tensor == NULL);
    CHECK(released_count(&rel) == 1);
    CHECK(pthread_equal(arg.released_on, th));
    CHECK(!pthread_equal(arg.released_on, pthread_self()));
}

static void test_items(void) {
    Released rel;
    HurrayTensor *t = own_memory_tensor(4, &rel, NULL);
    HurrayItem *item = NULL;
    CHECK_OK(hurray_item_from_tensor(&t, &item));
    CHECK(t == NULL); /* moved in */
    uint8_t composite = 9;
    CHECK_OK(hurray_item_is_composite(item, &composite));
    CHECK(composite == 0);
    const HurrayTensor *borrowed = NULL;
    CHECK_OK(hurray_item_tensor(item, &borrowed));
    uint64_t size = 0;
    const uint8_t *p = tensor_bytes(borrowed, 0, &size);
    CHECK(size == 16 && p == rel.memory);
    /* A tensor borrowed from an item cannot be destroyed on its own. */
    HurrayTensor *alias = (HurrayTensor *)borrowed;
    CHECK_ERR(HURRAY_ERR_INVALID_ARGUMENT, hurray_tensor_destroy(&alias));
    CHECK(alias == borrowed);
    CHECK(released_count(&rel) == 0);
    CHECK_OK(hurray_item_destroy(&item));
    CHECK(item == NULL);
    CHECK(released_count(&rel) == 1);
}

static void test_panic_boundary(void) {
#ifdef HURRAY_TEST_HOOKS
    CHECK_ERR(HURRAY_ERR_INTERNAL_PANIC, hurray_debug_panic());
    CHECK(strstr(hurray_last_error_message(), "panicked") != NULL);
    /* The process continues and the library still works. */
    CHECK_ERR(HURRAY_ERR_INTERNAL_PANIC, hurray_debug_panic());
    Released rel;
    HurrayTensor *t = own_memory_tensor(2, &rel, NULL);
    CHECK_OK(hurray_tensor_destroy(&t));
    CHECK(released_count(&rel) == 1);
#else
    SKIP("built without HURRAY_TEST_HOOKS");
#endif
}

static void test_many_tensors_live_count(void) {
    int64_t before = hurray_debug_live_objects();
    Released rel[8];
    HurrayTensor *t[8];
    for (int i = 0; i < 8; i++) t[i] = own_memory_tensor((uint64_t)i + 1, &rel[i], NULL);
    CHECK(hurray_debug_live_objects() > before);
    for (int i = 7; i >= 0; i--) CHECK_OK(hurray_tensor_destroy(&t[i]));
    for (int i = 0; i < 8; i++) CHECK(released_count(&rel[i]) == 1);
    CHECK(hurray_debug_live_objects() == before);
}

int main(void) {
    RUN(test_abi_version);
    RUN(test_own_memory_tensor_fields);
    RUN(test_destroy_on_second_thread);
    RUN(test_items);
    RUN(test_panic_boundary);
    RUN(test_many_tensors_live_count);
    END_TESTS();
}
