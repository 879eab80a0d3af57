/* The C consumer of the hostile corpus (tests/matrix/rust/src/hostile.rs), over
 * include/hurray.h only.
 *
 *   matrix hostile DIR
 *
 * For every line `CASE RULE LAYOUT` of DIR/manifest.tsv it opens DIR/CASE.hrry with
 * the file reader, takes every item by name (hurray_file_reader_item) and views
 * every buffer of it and its members (hurray_tensor_buffer_data, every byte read),
 * then reads DIR/CASE.hrrys to its end with the decoder's demand/advance, viewing
 * every item the same way. Each container passes when a call failed with
 * HURRAY_ERR_FORMAT and a last-error message naming RULE:
 *
 *   result  hostile  file|stream  CASE  pass|fail  DETAIL
 *
 * DETAIL is the status name and the message (or what happened instead).
 */
#define _POSIX_C_SOURCE 200809L
#include "hostile.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hurray.h"

/* How one read ended: the first failed call, its status and last-error message. */
typedef struct {
    HurrayStatus status;
    const char *call;
    char message[8192];
} Outcome;

static int failed(Outcome *o, const char *call, HurrayStatus s) {
    o->status = s;
    o->call = call;
    snprintf(o->message, sizeof o->message, "%s", hurray_last_error_message());
    return -1;
}

#define TRY(o, call)                                                \
    do {                                                            \
        HurrayStatus s_ = (call);                                   \
        if (s_ != HURRAY_OK) return failed((o), #call, s_);         \
    } while (0)

/* Folded over every viewed byte, so a view of memory the library does not own is
 * read (and memcheck sees it). */
static volatile uint8_t sink;

/* Views every buffer of the item's tensor and of its members, reading each byte. */
static int view_item(const HurrayItem *it, Outcome *o) {
    const HurrayTensor *t = NULL;
    const HurrayDescriptor *d = NULL;
    HurrayDescriptorHeader h;
    uint64_t members = 0;
    TRY(o, hurray_item_tensor(it, &t));
    TRY(o, hurray_tensor_descriptor(t, &d));
    TRY(o, hurray_descriptor_header(d, &h));
    for (uint32_t b = 0; b < h.buffer_count; b++) {
        const void *data = NULL;
        uint64_t size = 0;
        TRY(o, hurray_tensor_buffer_data(t, b, &data, &size));
        uint8_t x = 0;
        for (uint64_t k = 0; k < size; k++) x ^= ((const uint8_t *)data)[k];
        sink ^= x;
    }
    uint8_t composite = 0;
    TRY(o, hurray_item_is_composite(it, &composite));
    if (!composite) return 0;
    TRY(o, hurray_item_member_count(it, &members));
    for (uint64_t m = 0; m < members; m++) {
        const HurrayItem *sub = NULL;
        TRY(o, hurray_item_member(it, m, &sub));
        if (view_item(sub, o)) return -1;
    }
    return 0;
}

/* Opens the file and views every item in it. */
static int read_file(const char *path, Outcome *o) {
    HurrayFileReader *r = NULL;
    uint64_t count = 0;
    int rc = -1;
    TRY(o, hurray_file_reader_open(path, &r));
    HurrayStatus s = hurray_file_reader_tensor_count(r, &count);
    if (s != HURRAY_OK) {
        failed(o, "hurray_file_reader_tensor_count", s);
        goto done;
    }
    for (uint64_t i = 0; i < count; i++) {
        const char *name = NULL;
        uint64_t len = 0;
        HurrayItem *it = NULL;
        if ((s = hurray_file_reader_tensor_name(r, i, &name, &len)) != HURRAY_OK) {
            failed(o, "hurray_file_reader_tensor_name", s);
            goto done;
        }
        if ((s = hurray_file_reader_item(r, name, &it)) != HURRAY_OK) {
            failed(o, "hurray_file_reader_item", s);
            goto done;
        }
        int bad = view_item(it, o);
        hurray_item_destroy(&it);
        if (bad) goto done;
    }
    rc = 0;
done:
    hurray_file_reader_destroy(&r);
    return rc;
}

/* Reads the stream to its end with demand/advance, viewing every item. */
static int read_stream(const char *path, Outcome *o) {
    FILE *f = fopen(path, "rb");
    HurrayStreamDecoder *dec = NULL;
    HurrayStatus s;
    int rc = -1;
    if (!f) {
        o->call = "fopen";
        snprintf(o->message, sizeof o->message, "%s: %s", path, strerror(errno));
        return -1;
    }
    if ((s = hurray_stream_decoder_new(NULL, &dec)) != HURRAY_OK) {
        failed(o, "hurray_stream_decoder_new", s);
        goto done;
    }
    for (;;) {
        for (;;) {
            HurrayItem *it = NULL;
            if ((s = hurray_stream_decoder_next(dec, &it)) != HURRAY_OK) {
                failed(o, "hurray_stream_decoder_next", s);
                goto done;
            }
            if (!it) break;
            int bad = view_item(it, o);
            hurray_item_destroy(&it);
            if (bad) goto done;
        }
        uint8_t *dst = NULL;
        uint64_t want = 0;
        if ((s = hurray_stream_decoder_demand(dec, &dst, &want)) != HURRAY_OK) {
            failed(o, "hurray_stream_decoder_demand", s);
            goto done;
        }
        if (want == 0) break; /* finished, or failed: `next` above reported it */
        size_t got = fread(dst, 1, (size_t)want, f);
        if (got == 0) {
            if ((s = hurray_stream_decoder_finish(dec)) != HURRAY_OK) {
                failed(o, "hurray_stream_decoder_finish", s);
                goto done;
            }
            continue; /* take what completed before the end */
        }
        if ((s = hurray_stream_decoder_advance(dec, got)) != HURRAY_OK) {
            failed(o, "hurray_stream_decoder_advance", s);
            goto done;
        }
    }
    rc = 0;
done:
    hurray_stream_decoder_destroy(&dec);
    fclose(f);
    return rc;
}

static void print_result(const char *container, const char *name, const char *rule, int bad, Outcome *o) {
    for (char *p = o->message; *p; p++)
        if (*p == '\t' || *p == '\n' || *p == '\r') *p = ' ';
    printf("result\thostile\t%s\t%s\t", container, name);
    if (!bad)
        printf("fail\tread without error; expected %s\n", rule);
    else if (o->status == HURRAY_ERR_FORMAT && strstr(o->message, rule))
        printf("pass\t%s: %s\n", o->call, o->message);
    else
        printf("fail\texpected HURRAY_ERR_FORMAT naming %s; %s returned %s: %s\n", rule,
               o->call ? o->call : "?", hurray_status_name(o->status), o->message);
}

int hostile(const char *dir) {
    char path[4200];
    snprintf(path, sizeof path, "%s/manifest.tsv", dir);
    FILE *m = fopen(path, "r");
    if (!m) {
        fprintf(stderr, "c matrix: %s: %s\n", path, strerror(errno));
        return 1;
    }
    char line[1024];
    while (fgets(line, sizeof line, m)) {
        line[strcspn(line, "\r\n")] = 0;
        char *name = line, *tab = strchr(line, '\t');
        if (!*name || !tab) continue;
        *tab = 0;
        char *rule = tab + 1;
        rule[strcspn(rule, "\t")] = 0;
        for (int k = 0; k < 2; k++) {
            Outcome o = {HURRAY_OK, NULL, ""};
            snprintf(path, sizeof path, "%s/%s.%s", dir, name, k ? "hrrys" : "hrry");
            int bad = k ? read_stream(path, &o) : read_file(path, &o);
            print_result(k ? "stream" : "file", name, rule, bad, &o);
        }
        fflush(stdout);
    }
    fclose(m);
    if (hurray_debug_live_objects() != 0) {
        fprintf(stderr, "c matrix: %" PRId64 " live library objects after the hostile reads\n",
                (int64_t)hurray_debug_live_objects());
        return 1;
    }
    return 0;
}
