/* A C consumer of the `__hurray__` native capsule protocol, written only against
 * include/hurray.h and Python's capsule API. It links its own copy of hurray-ffi
 * (the static library), so the handles it receives come from another copy. */
#include <Python.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include "hurray.h"

/* Summary of a consumed tensor, filled for the Python test to check. */
typedef struct {
    uint32_t abi_version;
    uint8_t type_tag;
    uint8_t layout_tag;
    uint32_t rank;
    uint64_t shape[8];
    uint64_t buffer_count;
    uint64_t byte_size0;
    double sum_f32; /* sum of buffer 0 read as float32 */
} Summary;

/* The steps of the protocol, in order: name, pointer, ABI version, rename. Returns
 * the handle (owned by the caller from now on) or NULL with a Python error set. */
static HurrayTensor *take(PyObject *capsule) {
    if (!PyCapsule_IsValid(capsule, "hurray_tensor_handle")) {
        PyErr_SetString(PyExc_ValueError, "not an unconsumed hurray_tensor_handle capsule");
        return NULL;
    }
    HurrayTensor *t = (HurrayTensor *)PyCapsule_GetPointer(capsule, "hurray_tensor_handle");
    if (t == NULL) return NULL;
    uint32_t abi = 0;
    if (hurray_tensor_abi_version(t, &abi) != HURRAY_OK || abi != HURRAY_C_ABI_VERSION) {
        PyErr_Format(PyExc_RuntimeError, "ABI %u, expected %u", abi, HURRAY_C_ABI_VERSION);
        return NULL;
    }
    if (PyCapsule_SetName(capsule, "used_hurray_tensor_handle") != 0) return NULL;
    return t;
}

/* Consumes the capsule, fills *out, and keeps the handle in *keep (destroy it with
 * release()). Returns 0 on success, -1 with a Python error set. */
int consume(PyObject *capsule, Summary *out, HurrayTensor **keep) {
    HurrayTensor *t = take(capsule);
    if (t == NULL) return -1;
    memset(out, 0, sizeof *out);
    hurray_tensor_abi_version(t, &out->abi_version);
    const HurrayDescriptor *d = NULL;
    HurrayDescriptorHeader h;
    if (hurray_tensor_descriptor(t, &d) != HURRAY_OK || hurray_descriptor_header(d, &h) != HURRAY_OK) {
        PyErr_SetString(PyExc_RuntimeError, hurray_last_error_message());
        hurray_tensor_destroy(&t);
        return -1;
    }
    out->type_tag = h.type_tag;
    out->layout_tag = h.layout_tag;
    uint64_t rank = 0;
    if (hurray_descriptor_shape(d, out->shape, 8, &rank) != HURRAY_OK) {
        PyErr_SetString(PyExc_RuntimeError, hurray_last_error_message());
        hurray_tensor_destroy(&t);
        return -1;
    }
    out->rank = (uint32_t)rank;
    const HurrayBufferList *list = NULL;
    hurray_tensor_buffers(t, &list);
    hurray_buffer_list_len(list, &out->buffer_count);
    const void *data = NULL;
    if (hurray_tensor_buffer_data(t, 0, &data, &out->byte_size0) != HURRAY_OK) {
        PyErr_SetString(PyExc_RuntimeError, hurray_last_error_message());
        hurray_tensor_destroy(&t);
        return -1;
    }
    if (h.type_tag == HURRAY_TYPE_FLOAT32) {
        const float *f = (const float *)data;
        for (uint64_t i = 0; i < out->byte_size0 / 4; i++) out->sum_f32 += f[i];
    }
    *keep = t;
    return 0;
}

/* Destroys a handle obtained from consume(): runs the producer's release. */
int release(HurrayTensor *t) { return hurray_tensor_destroy(&t); }

static void *destroy_on_thread(void *p) {
    HurrayTensor *t = (HurrayTensor *)p;
    hurray_tensor_destroy(&t);
    return NULL;
}

/* Destroys a handle on a new native thread (one Python never saw) and waits for it.
 * Call it without holding the GIL: the producer's release callback must take it. */
int release_on_native_thread(HurrayTensor *t) {
    pthread_t th;
    if (pthread_create(&th, NULL, destroy_on_thread, t) != 0) return -1;
    return pthread_join(th, NULL);
}

/* Live handles of this copy of the library (the Python extension has its own). */
int64_t live_objects(void) { return hurray_debug_live_objects(); }
