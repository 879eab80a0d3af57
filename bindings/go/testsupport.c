//go:build hurray_testsupport

// Test support of the Go binding, built only with the hurray_testsupport tag and
// declared in testsupport.go; not part of the Hurray C ABI.
#include <pthread.h>
#include "hurray.h"

struct destroy_job {
    HurrayTensor *tensor;
    HurrayItem *item;
    HurrayStatus status;
};

static void *destroy_on_thread(void *arg) {
    struct destroy_job *job = arg;
    if (job->tensor != NULL) {
        job->status = hurray_tensor_destroy(&job->tensor);
    } else {
        job->status = hurray_item_destroy(&job->item);
    }
    return NULL;
}

static HurrayStatus run_destroy_job(struct destroy_job *job) {
    pthread_t thread;
    if (pthread_create(&thread, NULL, destroy_on_thread, job) != 0) {
        return HURRAY_ERR_IO;
    }
    pthread_join(thread, NULL);
    return job->status;
}

HurrayStatus hurray_go_destroy_tensor_on_c_thread(HurrayTensor *tensor) {
    struct destroy_job job = {tensor, NULL, HURRAY_OK};
    return run_destroy_job(&job);
}

HurrayStatus hurray_go_destroy_item_on_c_thread(HurrayItem *item) {
    struct destroy_job job = {NULL, item, HURRAY_OK};
    return run_destroy_job(&job);
}

void hurray_go_noop(void) {}
