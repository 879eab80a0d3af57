/* C helpers of the Go binding (not part of the Hurray C ABI). */
#ifndef HURRAY_GO_H
#define HURRAY_GO_H

#include <stdint.h>
#include "hurray.h"

/* The HurrayReleaseFn handed to the library for memory the Go side owns: forwards
 * the context (a runtime/cgo.Handle value) to the exported Go function
 * hurrayGoRelease. Runs on whatever thread the library releases from. */
void hurray_go_release(void *context);

/* hurray_tensor_new with hurray_go_release as the owner callback and a cgo.Handle
 * value as its context. */
HurrayStatus hurray_go_tensor_new(const uint8_t *descriptor_bytes, uint64_t descriptor_len,
                                  HurrayBufferList *buffers, uintptr_t owner,
                                  HurrayTensor **out_tensor);

/* The HurrayAllocFn of Go stream readers: asks the exported Go function
 * hurrayGoAlloc for `len` bytes of `alignment`-aligned, pinned Go memory and hands it to
 * the decoder with hurray_go_release (and the owner's cgo.Handle) as its release. */
int32_t hurray_go_alloc(void *context, uint64_t len, uint64_t alignment, uint8_t **out_data,
                        HurrayReleaseFn *out_release, void **out_release_context);

/* Makes `decoder` read every buffer into Go memory (hurray_go_alloc). */
HurrayStatus hurray_go_decoder_use_go_memory(HurrayStreamDecoder *decoder);

#endif
