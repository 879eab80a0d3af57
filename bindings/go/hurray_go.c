// C helpers of the Go binding; see hurray_go.h.
#include "hurray_go.h"
#include "_cgo_export.h"

void hurray_go_release(void *context) {
    hurrayGoRelease((uintptr_t)context);
}

int32_t hurray_go_alloc(void *context, uint64_t len, uint64_t alignment, uint8_t **out_data,
                        HurrayReleaseFn *out_release, void **out_release_context) {
    (void)context;
    uintptr_t owner = 0;
    if (hurrayGoAlloc(len, alignment, out_data, &owner) != 0) return 1;
    *out_release = hurray_go_release;
    *out_release_context = (void *)owner;
    return 0;
}

HurrayStatus hurray_go_decoder_use_go_memory(HurrayStreamDecoder *decoder) {
    return hurray_stream_decoder_set_allocator(decoder, hurray_go_alloc, NULL);
}

HurrayStatus hurray_go_tensor_new(const uint8_t *descriptor_bytes, uint64_t descriptor_len,
                                  HurrayBufferList *buffers, uintptr_t owner,
                                  HurrayTensor **out_tensor) {
    return hurray_tensor_new(HURRAY_C_ABI_VERSION, descriptor_bytes, descriptor_len, buffers,
                             (void *)owner, hurray_go_release, out_tensor);
}
