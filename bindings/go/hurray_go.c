// C helpers of the Go binding; see hurray_go.h.
#include "hurray_go.h"
#include "_cgo_export.h"

void hurray_go_release(void *context) {
    hurrayGoRelease((uintptr_t)context);
}

HurrayStatus hurray_go_tensor_new(const uint8_t *descriptor_bytes, uint64_t descriptor_len,
                                  HurrayBufferList *buffers, uintptr_t owner,
                                  HurrayTensor **out_tensor) {
    return hurray_tensor_new(HURRAY_C_ABI_VERSION, descriptor_bytes, descriptor_len, buffers,
                             (void *)owner, hurray_go_release, out_tensor);
}
