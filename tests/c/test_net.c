/*
 * test_net.c - the blocking network client (hurray_net_client_*) against the
 * in-process test server (hurray_debug_net_server_start) on 127.0.0.1: put then get
 * round trip, an unknown key as HURRAY_ERR_NOT_FOUND with its B.16 code, what the
 * server negotiated, a connect timeout, and a cancel from another thread that
 * releases a blocked call. Nothing leaks.
 */
#include "hurray_test.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static uint16_t server_port;

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* A listener on 127.0.0.1 that accepts into its backlog and never answers. */
static int silent_listener(uint16_t *port) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    CHECK(fd >= 0);
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = 0;
    CHECK(bind(fd, (struct sockaddr *)&a, sizeof a) == 0);
    CHECK(listen(fd, 8) == 0);
    socklen_t len = sizeof a;
    CHECK(getsockname(fd, (struct sockaddr *)&a, &len) == 0);
    *port = ntohs(a.sin_port);
    return fd;
}

static HurrayNetClient *connected_client(void) {
    HurrayNetClient *c = NULL;
    CHECK_OK(hurray_net_client_new(NULL, &c));
    CHECK(c != NULL);
    CHECK_OK(hurray_net_client_connect(c, "127.0.0.1", server_port));
    return c;
}

static void test_put_then_get(void) {
    HurrayNetClient *c = connected_client();
    HurrayNetServerInfo info;
    CHECK_OK(hurray_net_client_server_info(c, &info));
    CHECK(info.protocol_version == 1);
    CHECK(info.max_message_size >= 4096);

    Released rel;
    HurrayTensor *t = own_memory_tensor(100000, &rel, NULL);
    CHECK_OK(hurray_net_client_put(c, "layer0/weight", t));

    HurrayItem *item = NULL;
    CHECK_OK(hurray_net_client_get(c, "layer0/weight", NULL, &item));
    const HurrayTensor *got = NULL;
    CHECK_OK(hurray_item_tensor(item, &got));
    CHECK(tensors_equal(t, got));
    uint64_t size = 0;
    const float *f = (const float *)tensor_bytes(got, 0, &size);
    CHECK(size == 400000 && f[99999] == 99999.0f);

    /* With options: row-major first, parallel shards allowed. */
    HurrayNetGetOptions go;
    CHECK_OK(hurray_net_get_options_default(&go));
    CHECK(go.min_alignment == 64 && go.parallel == 0 && go.preferred_layout_count == 0);
    uint8_t layouts[1] = {HURRAY_LAYOUT_ROW_MAJOR};
    go.preferred_layouts = layouts;
    go.preferred_layout_count = 1;
    go.parallel = 1;
    HurrayItem *item2 = NULL;
    CHECK_OK(hurray_net_client_get(c, "layer0/weight", &go, &item2));
    CHECK_OK(hurray_item_tensor(item2, &got));
    CHECK(tensors_equal(t, got));
    go.min_alignment = 48;
    CHECK_ERR(HURRAY_ERR_INVALID_ARGUMENT, hurray_net_client_get(c, "layer0/weight", &go, &item2));

    CHECK_OK(hurray_item_destroy(&item));
    CHECK_OK(hurray_item_destroy(&item2));
    /* The put kept nothing: the tensor's memory is released once, when it goes. */
    CHECK_OK(hurray_tensor_destroy(&t));
    CHECK(released_count(&rel) == 1);
    CHECK_OK(hurray_net_client_destroy(&c));
    CHECK(c == NULL);
    CHECK_OK(hurray_net_client_destroy(&c)); /* NULL: no-op */
}

static void test_unknown_key(void) {
    HurrayNetClient *c = connected_client();
    HurrayItem *item = NULL;
    CHECK_ERR(HURRAY_ERR_NOT_FOUND, hurray_net_client_get(c, "no/such/tensor", NULL, &item));
    CHECK(item == NULL);
    CHECK(hurray_last_error_net_code() == 0x02);
    CHECK(strstr(hurray_last_error_message(), "UNKNOWN_TENSOR") != NULL);
    int32_t cat = 0;
    CHECK_OK(hurray_status_category(HURRAY_ERR_NOT_FOUND, &cat));
    CHECK(cat == HURRAY_CATEGORY_NOT_FOUND);
    /* The connection stays usable after a stream-level ERROR. */
    HurrayNetServerInfo info;
    CHECK_OK(hurray_net_client_server_info(c, &info));
    CHECK_ERR(HURRAY_ERR_NULL_POINTER, hurray_net_client_get(c, NULL, NULL, &item));
    CHECK(hurray_last_error_net_code() == 0);
    CHECK_OK(hurray_net_client_destroy(&c));
}

static void test_connect_timeout(void) {
    uint16_t port = 0;
    int fd = silent_listener(&port);
    HurrayNetClientOptions o;
    CHECK_OK(hurray_net_client_options_default(&o));
    CHECK(o.connect_timeout_ms == 10000 && o.call_timeout_ms == 0);
    o.connect_timeout_ms = 200;
    HurrayNetClient *c = NULL;
    CHECK_OK(hurray_net_client_new(&o, &c));
    double t0 = now_s();
    CHECK_ERR(HURRAY_ERR_TIMEOUT, hurray_net_client_connect(c, "127.0.0.1", port));
    double took = now_s() - t0;
    CHECK(took >= 0.15 && took < 5.0);
    HurrayItem *item = NULL;
    CHECK_ERR(HURRAY_ERR_STATE, hurray_net_client_get(c, "k", NULL, &item));
    CHECK_OK(hurray_net_client_destroy(&c));
    close(fd);
}

typedef struct {
    HurrayNetClient *client;
    uint16_t port;
    HurrayStatus status;
} ConnectJob;

static void *blocked_connect(void *arg) {
    ConnectJob *j = (ConnectJob *)arg;
    j->status = hurray_net_client_connect(j->client, "127.0.0.1", j->port);
    return NULL;
}

static void test_cancel_from_another_thread(void) {
    uint16_t port = 0;
    int fd = silent_listener(&port);
    ConnectJob job = {NULL, port, HURRAY_OK};
    CHECK_OK(hurray_net_client_new(NULL, &job.client)); /* 10 s connect timeout */
    double t0 = now_s();
    pthread_t th;
    CHECK(pthread_create(&th, NULL, blocked_connect, &job) == 0);
    struct timespec pause = {0, 200 * 1000 * 1000};
    nanosleep(&pause, NULL);
    CHECK_OK(hurray_net_client_cancel(job.client));
    CHECK(pthread_join(th, NULL) == 0);
    CHECK(job.status == HURRAY_ERR_CANCELLED);
    CHECK(now_s() - t0 < 5.0);
    /* Every later call is cancelled at once. */
    CHECK_ERR(HURRAY_ERR_CANCELLED, hurray_net_client_connect(job.client, "127.0.0.1", port));
    CHECK_OK(hurray_net_client_destroy(&job.client));
    close(fd);
}

int main(void) {
    CHECK_OK(hurray_debug_net_server_start(&server_port));
    CHECK(server_port != 0);
    RUN(test_put_then_get);
    RUN(test_unknown_key);
    RUN(test_connect_timeout);
    RUN(test_cancel_from_another_thread);
    CHECK_OK(hurray_debug_net_server_stop());
    END_TESTS();
}
