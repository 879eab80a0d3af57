/* The C producer and consumer of the cross-language matrix, over include/hurray.h.
 *
 *   matrix produce CASES OUT_DIR    write CASE.hrry / CASE.hrrys for every case
 *   matrix consume CASES DIR...     check every producer directory (result lines)
 *   matrix views FILE               the demo: open, view and checksum every tensor
 *   matrix hostile DIR              every hostile file and stream must be refused (hostile.c)
 *   matrix metadata FILE            open, read every KV value and name (amplification)
 *   matrix net-get ADDR CASES OUT   GET every case's items ("CASE:NAME") into OUT/CASE.hrry
 *   matrix net-put ADDR CASES DIR   PUT every top-level item of DIR/CASE.hrry as "CASE:NAME"
 *   matrix net-views ADDR FILE      the demo's network step: GET every tensor, CRC table
 *   matrix net-bench ADDR KEY [N]   best of N GETs (3): `net_get c BYTES SECONDS` (cargo xtask bench)
 *
 * The producer builds every descriptor with the descriptor builder, wraps its own
 * aligned memory in buffers (hurray_buffer_new, released by free), writes files with
 * the file writer and streams with the stream encoder's chunks. The consumer reads
 * files with the file reader (items by name, KV by type) and streams with the
 * decoder's demand/advance (bytes read straight into the final buffers), and checks
 * every field through the accessors. Case syntax: tests/cases/README.md. Plain C11.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "hostile.h"
#include "hurray.h"

#define MAXR 16     /* ranks in the cases are small */
#define MAXTILES 8
#define MAXB 16     /* buffers per tensor */

/* ------------------------------------------------------------ case model */

typedef struct {
    uint64_t size;
    uint32_t align;
    uint8_t memory;
    uint8_t *bytes;
} Buf;

typedef struct {
    uint64_t shape[MAXR];
    uint8_t outer, inner; /* HURRAY_TILE_ORDER_* */
    int64_t ostr[MAXR], istr[MAXR];
} Tile;

typedef struct Item Item;
struct Item {
    int composite;
    char name[512];
    uint8_t dtype;
    uint32_t rank;
    uint64_t shape[MAXR];
    uint8_t layout;
    int64_t strides[MAXR];
    uint32_t morton[MAXR], mode[MAXR];
    uint32_t h_order, h_rank;
    uint64_t nnz;
    uint8_t coo_sorted;
    HurrayBlockPaged bp;
    Tile tiles[MAXTILES];
    uint32_t ntiles;
    uint64_t offset;
    Buf bufs[MAXB];
    uint32_t nbufs;
    int has_quant;
    HurrayQuantization q;
    int has_shard;
    uint64_t parent[MAXR], soff[MAXR];
    int has_stats;
    HurrayStatistics st;
    int role; /* -1: none */
    HurrayCompositeHead head;
    Item **members;
    uint32_t nmembers;
};

/* A KV value: `tag` is the value type (1..6), arrays have `array` set. */
typedef struct {
    char key[256];
    uint8_t tag;
    int array;
    uint64_t n;
    int64_t *i;
    uint64_t *u;
    double *f;
    uint8_t *b;     /* bools */
    uint8_t **s;    /* strings and blobs */
    uint64_t *slen;
} Kv;

typedef struct {
    char name[128];
    Item **items;
    uint32_t nitems;
    Kv *kv;
    uint32_t nkv;
} Case;

static void die(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "c matrix: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    exit(2);
}

static void *xcalloc(size_t n, size_t size) {
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p) die("out of memory");
    return p;
}

static const struct {
    const char *name;
    uint8_t tag;
} DTYPES[] = {
    {"float16", HURRAY_TYPE_FLOAT16}, {"bfloat16", HURRAY_TYPE_BFLOAT16},
    {"float32", HURRAY_TYPE_FLOAT32}, {"float64", HURRAY_TYPE_FLOAT64},
    {"int8", HURRAY_TYPE_INT8}, {"uint8", HURRAY_TYPE_UINT8},
    {"int16", HURRAY_TYPE_INT16}, {"uint16", HURRAY_TYPE_UINT16},
    {"int32", HURRAY_TYPE_INT32}, {"uint32", HURRAY_TYPE_UINT32},
    {"int64", HURRAY_TYPE_INT64}, {"uint64", HURRAY_TYPE_UINT64},
    {"bool", HURRAY_TYPE_BOOL}, {"float8_e4m3", HURRAY_TYPE_FLOAT8_E4M3},
    {"float8_e5m2", HURRAY_TYPE_FLOAT8_E5M2}, {"float8_e8m0", HURRAY_TYPE_FLOAT8_E8M0},
    {"float4_e2m1", HURRAY_TYPE_FLOAT4_E2M1}, {"float6_e2m3", HURRAY_TYPE_FLOAT6_E2M3},
    {"float6_e3m2", HURRAY_TYPE_FLOAT6_E3M2}, {"float128", HURRAY_TYPE_FLOAT128},
    {"int4", HURRAY_TYPE_INT4}, {"uint4", HURRAY_TYPE_UINT4},
    {"int2", HURRAY_TYPE_INT2}, {"uint2", HURRAY_TYPE_UINT2},
    {"complex64", HURRAY_TYPE_COMPLEX64}, {"complex128", HURRAY_TYPE_COMPLEX128},
};

static uint8_t dtype_tag(const char *name, int line) {
    for (size_t i = 0; i < sizeof DTYPES / sizeof DTYPES[0]; i++)
        if (strcmp(DTYPES[i].name, name) == 0) return DTYPES[i].tag;
    die("line %d: unknown dtype %s", line, name);
    return 0;
}

/* SplitMix64 bytes (tests/cases/README.md). */
static void splitmix_bytes(uint64_t seed, uint8_t *out, uint64_t n) {
    uint64_t s = seed;
    for (uint64_t i = 0; i < n; i += 8) {
        s += 0x9E3779B97F4A7C15ull;
        uint64_t z = s;
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        z ^= z >> 31;
        for (uint64_t k = 0; k < 8 && i + k < n; k++) out[i + k] = (uint8_t)(z >> (8 * k));
    }
}

static int hexval(int c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* %XX escapes; "~" is empty. Returns a malloc'd, NUL-terminated copy. */
static uint8_t *unescape(const char *tok, uint64_t *len) {
    size_t n = strlen(tok);
    uint8_t *out = xcalloc(n + 1, 1);
    uint64_t k = 0;
    if (strcmp(tok, "~") != 0) {
        for (size_t i = 0; i < n; i++) {
            if (tok[i] == '%' && i + 2 < n + 1 && hexval(tok[i + 1]) >= 0 && hexval(tok[i + 2]) >= 0) {
                out[k++] = (uint8_t)(hexval(tok[i + 1]) * 16 + hexval(tok[i + 2]));
                i += 2;
            } else {
                out[k++] = (uint8_t)tok[i];
            }
        }
    }
    out[k] = 0;
    *len = k;
    return out;
}

static uint8_t *hexbytes(const char *tok, uint64_t *len) {
    size_t n = strcmp(tok, "~") == 0 ? 0 : strlen(tok);
    uint8_t *out = xcalloc(n / 2 + 1, 1);
    for (size_t i = 0; i + 1 < n; i += 2) out[i / 2] = (uint8_t)(hexval(tok[i]) * 16 + hexval(tok[i + 1]));
    *len = n / 2;
    return out;
}

static double parse_f64(const char *tok) {
    if (strncmp(tok, "bits:", 5) == 0) {
        uint64_t bits = strtoull(tok + 5, NULL, 16);
        double d;
        memcpy(&d, &bits, 8);
        return d;
    }
    return strtod(tok, NULL);
}

/* Comma lists. */
static uint32_t list_u64(const char *s, uint64_t *out) {
    uint32_t n = 0;
    const char *p = s;
    while (*p && n < MAXR) {
        out[n++] = strtoull(p, (char **)&p, 10);
        if (*p == ',') p++;
    }
    return n;
}
static uint32_t list_i64(const char *s, int64_t *out) {
    uint32_t n = 0;
    const char *p = s;
    while (*p && n < MAXR) {
        out[n++] = strtoll(p, (char **)&p, 10);
        if (*p == ',') p++;
    }
    return n;
}
static uint32_t list_u32(const char *s, uint32_t *out) {
    uint64_t v[MAXR];
    uint32_t n = list_u64(s, v);
    for (uint32_t i = 0; i < n; i++) out[i] = (uint32_t)v[i];
    return n;
}

static uint8_t tile_order(const char *s, int64_t *strides) {
    if (strcmp(s, "row_major") == 0) return HURRAY_TILE_ORDER_ROW_MAJOR;
    if (strcmp(s, "col_major") == 0) return HURRAY_TILE_ORDER_COLUMN_MAJOR;
    if (strcmp(s, "tiled") == 0) return HURRAY_TILE_ORDER_TILED;
    if (strncmp(s, "strided:", 8) == 0) {
        list_i64(s + 8, strides);
        return HURRAY_TILE_ORDER_STRIDED;
    }
    die("bad tile order %s", s);
    return 0;
}

static void fill(Buf *b, char **t, int nt, int line) {
    uint64_t n = b->size, k = 0;
    b->bytes = xcalloc(n + 16, 1);
    if (nt < 1) die("line %d: missing fill", line);
    const char *kind = t[0];
    if (strcmp(kind, "zero") == 0) {
        k = n;
    } else if (strcmp(kind, "rand") == 0) {
        splitmix_bytes(strtoull(t[1], NULL, 10), b->bytes, n);
        if (nt > 2) {
            uint64_t bits = strtoull(t[2] + 5, NULL, 10);
            for (uint64_t i = 0; i < n * 8; i++)
                if (i >= bits) b->bytes[i / 8] &= (uint8_t) ~(1u << (i % 8));
        }
        k = n;
    } else if (strcmp(kind, "randrange") == 0) {
        unsigned lo = (unsigned)atoi(t[2]), hi = (unsigned)atoi(t[3]);
        splitmix_bytes(strtoull(t[1], NULL, 10), b->bytes, n);
        for (uint64_t i = 0; i < n; i++) b->bytes[i] = (uint8_t)(lo + b->bytes[i] % (hi - lo + 1));
        k = n;
    } else if (strcmp(kind, "hex") == 0) {
        for (int j = 1; j < nt; j++)
            for (const char *p = t[j]; p[0] && p[1]; p += 2)
                if (k < n + 16) b->bytes[k++] = (uint8_t)(hexval(p[0]) * 16 + hexval(p[1]));
    } else {
        for (int j = 1; j < nt; j++) {
            uint8_t tmp[8];
            size_t w;
            if (strcmp(kind, "u8") == 0 || strcmp(kind, "i8") == 0) {
                tmp[0] = (uint8_t)strtoll(t[j], NULL, 10);
                w = 1;
            } else if (strcmp(kind, "u16") == 0 || strcmp(kind, "i16") == 0) {
                uint16_t v = (uint16_t)strtoll(t[j], NULL, 10);
                memcpy(tmp, &v, 2);
                w = 2;
            } else if (strcmp(kind, "u32") == 0 || strcmp(kind, "i32") == 0) {
                uint32_t v = (uint32_t)strtoll(t[j], NULL, 10);
                memcpy(tmp, &v, 4);
                w = 4;
            } else if (strcmp(kind, "u64") == 0) {
                uint64_t v = strtoull(t[j], NULL, 10);
                memcpy(tmp, &v, 8);
                w = 8;
            } else if (strcmp(kind, "i64") == 0) {
                int64_t v = strtoll(t[j], NULL, 10);
                memcpy(tmp, &v, 8);
                w = 8;
            } else if (strcmp(kind, "f32") == 0) {
                float v = strtof(t[j], NULL);
                memcpy(tmp, &v, 4);
                w = 4;
            } else if (strcmp(kind, "f64") == 0) {
                double v = parse_f64(t[j]);
                memcpy(tmp, &v, 8);
                w = 8;
            } else {
                die("line %d: unknown fill %s", line, kind);
                return;
            }
            if (k + w > n) die("line %d: fill longer than the buffer", line);
            memcpy(b->bytes + k, tmp, w);
            k += w;
        }
    }
    if (k != n) die("line %d: fill gives %" PRIu64 " bytes, the buffer has %" PRIu64, line, k, n);
}

static void stats(HurrayStatistics *s, char **t, int nt) {
    memset(s, 0, sizeof *s);
    for (int j = 0; j < nt; j++) {
        char *eq = strchr(t[j], '=');
        if (!eq) die("bad stat %s", t[j]);
        *eq = 0;
        const char *k = t[j], *v = eq + 1;
        if (!strcmp(k, "nnz")) { s->nnz = strtoull(v, NULL, 10); s->computed_mask |= HURRAY_STAT_NNZ_VALID; }
        else if (!strcmp(k, "sparsity")) { s->sparsity_ratio = parse_f64(v); s->computed_mask |= HURRAY_STAT_SPARSITY_VALID; }
        else if (!strcmp(k, "min")) { s->value_min = parse_f64(v); s->computed_mask |= HURRAY_STAT_VALUE_RANGE_VALID; }
        else if (!strcmp(k, "max")) s->value_max = parse_f64(v);
        else if (!strcmp(k, "absmax")) s->value_abs_max = parse_f64(v);
        else if (!strcmp(k, "mean")) { s->value_mean = parse_f64(v); s->computed_mask |= HURRAY_STAT_VALUE_STATS_VALID; }
        else if (!strcmp(k, "stddev")) s->value_stddev = parse_f64(v);
        else if (!strcmp(k, "nm")) {
            s->nm_n = (uint8_t)atoi(v);
            s->nm_m = (uint8_t)atoi(strchr(v, ':') + 1);
            s->computed_mask |= HURRAY_STAT_NM_SPARSITY_VALID;
        } else if (!strcmp(k, "nan")) { s->has_nan = (uint8_t)atoi(v); s->computed_mask |= HURRAY_STAT_NAN_INF_VALID; }
        else if (!strcmp(k, "inf")) s->has_inf = (uint8_t)atoi(v);
        else die("unknown stat %s", k);
    }
}

static void kv_parse(Kv *kv, char **t, int nt) {
    static const char *names[] = {"", "string", "int64", "uint64", "float64", "bool", "bytes"};
    const char *ty = t[0];
    kv->array = strncmp(ty, "array:", 6) == 0;
    if (kv->array) ty += 6;
    for (uint8_t i = 1; i <= 6; i++)
        if (!strcmp(ty, names[i])) kv->tag = i;
    if (!kv->tag) die("unknown kv type %s", t[0]);
    uint64_t n = (uint64_t)(nt - 1);
    kv->n = n;
    kv->i = xcalloc(n, 8);
    kv->u = xcalloc(n, 8);
    kv->f = xcalloc(n, 8);
    kv->b = xcalloc(n, 1);
    kv->s = xcalloc(n, sizeof(uint8_t *));
    kv->slen = xcalloc(n, 8);
    for (uint64_t j = 0; j < n; j++) {
        const char *v = t[j + 1];
        switch (kv->tag) {
        case HURRAY_KV_TYPE_STRING: kv->s[j] = unescape(v, &kv->slen[j]); break;
        case HURRAY_KV_TYPE_INT64: kv->i[j] = strtoll(v, NULL, 10); break;
        case HURRAY_KV_TYPE_UINT64: kv->u[j] = strtoull(v, NULL, 10); break;
        case HURRAY_KV_TYPE_FLOAT64: kv->f[j] = parse_f64(v); break;
        case HURRAY_KV_TYPE_BOOL: kv->b[j] = strcmp(v, "true") == 0; break;
        default: kv->s[j] = hexbytes(v, &kv->slen[j]); break;
        }
    }
}

static Case *parse(const char *path, uint32_t *ncases) {
    FILE *f = fopen(path, "rb");
    if (!f) die("%s: %s", path, strerror(errno));
    Case *cases = NULL;
    uint32_t nc = 0;
    Item *cur = NULL;
    Item *stack[16];
    uint32_t left[16];
    int depth = 0;
    char line[8192];
    int lineno = 0;
    while (fgets(line, sizeof line, f)) {
        lineno++;
        char *t[512];
        int nt = 0;
        for (char *p = strtok(line, " \t\r\n"); p && nt < 512; p = strtok(NULL, " \t\r\n")) t[nt++] = p;
        if (nt == 0 || t[0][0] == '#') continue;
        const char *d = t[0];
        if (!strcmp(d, "case")) {
            cases = realloc(cases, sizeof(Case) * (nc + 1));
            if (!cases) die("out of memory");
            memset(&cases[nc], 0, sizeof(Case));
            snprintf(cases[nc].name, sizeof cases[nc].name, "%s", t[1]);
            nc++;
            cur = NULL;
            depth = 0;
            continue;
        }
        if (nc == 0) die("line %d: %s before the first case", lineno, d);
        Case *c = &cases[nc - 1];
        if (!strcmp(d, "note")) continue;
        if (!strcmp(d, "kv")) {
            c->kv = realloc(c->kv, sizeof(Kv) * (c->nkv + 1));
            if (!c->kv) die("out of memory");
            Kv *kv = &c->kv[c->nkv++];
            memset(kv, 0, sizeof *kv);
            uint64_t klen;
            uint8_t *key = unescape(t[1], &klen);
            snprintf(kv->key, sizeof kv->key, "%s", (char *)key);
            free(key);
            kv_parse(kv, t + 2, nt - 2);
            continue;
        }
        if (!strcmp(d, "tensor") || !strcmp(d, "composite")) {
            Item *it = xcalloc(1, sizeof(Item));
            uint64_t nlen;
            uint8_t *name = unescape(t[1], &nlen);
            snprintf(it->name, sizeof it->name, "%s", (char *)name);
            free(name);
            it->dtype = dtype_tag(t[2], lineno);
            it->rank = strcmp(t[3], "scalar") ? list_u64(t[3], it->shape) : 0;
            it->role = -1;
            if (!strcmp(d, "tensor")) {
                const char *l = t[4];
                if (!strcmp(l, "row_major")) it->layout = HURRAY_LAYOUT_ROW_MAJOR;
                else if (!strcmp(l, "col_major")) it->layout = HURRAY_LAYOUT_COLUMN_MAJOR;
                else if (!strcmp(l, "strided")) { it->layout = HURRAY_LAYOUT_STRIDED; list_i64(t[5], it->strides); }
                else if (!strcmp(l, "tiled")) it->layout = HURRAY_LAYOUT_TILED;
                else if (!strcmp(l, "morton")) { it->layout = HURRAY_LAYOUT_MORTON; list_u32(t[5], it->morton); }
                else if (!strcmp(l, "hilbert")) {
                    it->layout = HURRAY_LAYOUT_HILBERT;
                    it->h_order = (uint32_t)atoi(t[5]);
                    it->h_rank = (uint32_t)atoi(t[6]);
                } else if (!strcmp(l, "coo")) {
                    it->layout = HURRAY_LAYOUT_COO;
                    it->nnz = strtoull(t[5], NULL, 10);
                    it->coo_sorted = strcmp(t[6], "sorted") == 0;
                } else if (!strcmp(l, "csr")) { it->layout = HURRAY_LAYOUT_CSR; it->nnz = strtoull(t[5], NULL, 10); }
                else if (!strcmp(l, "csc")) { it->layout = HURRAY_LAYOUT_CSC; it->nnz = strtoull(t[5], NULL, 10); }
                else if (!strcmp(l, "csf")) {
                    it->layout = HURRAY_LAYOUT_CSF;
                    it->nnz = strtoull(t[5], NULL, 10);
                    list_u32(t[6], it->mode);
                } else if (!strcmp(l, "block_paged")) {
                    it->layout = HURRAY_LAYOUT_BLOCK_PAGED;
                    it->bp.page_size = (uint32_t)atoi(t[5]);
                    it->bp.num_pages = strtoull(t[6], NULL, 10);
                    it->bp.num_seqs = (uint32_t)atoi(t[7]);
                    it->bp.kv_role = !strcmp(t[8], "key") ? HURRAY_KV_ROLE_KEY
                                     : !strcmp(t[8], "value") ? HURRAY_KV_ROLE_VALUE
                                                              : HURRAY_KV_ROLE_FUSED;
                    it->bp.layer_index = !strcmp(t[9], "none") ? HURRAY_LAYER_INDEX_NONE : (uint32_t)atoi(t[9]);
                    it->bp.block_table_index_type = !strcmp(t[10], "u64") ? HURRAY_INDEX_TYPE_U64 : HURRAY_INDEX_TYPE_U32;
                } else die("line %d: unknown layout %s", lineno, l);
            } else {
                it->composite = 1;
                it->layout = HURRAY_LAYOUT_COMPOSITE_HEAD;
                it->head.composition_rule = !strcmp(t[4], "partition") ? HURRAY_COMPOSITION_PARTITION
                                            : !strcmp(t[4], "overlay") ? HURRAY_COMPOSITION_OVERLAY
                                                                       : HURRAY_COMPOSITION_GROUP;
                it->head.combine_op = !strcmp(t[5], "none") ? HURRAY_COMBINE_NONE
                                      : !strcmp(t[5], "replace") ? HURRAY_COMBINE_REPLACE
                                                                 : HURRAY_COMBINE_ADD;
                it->head.member_count = (uint32_t)atoi(t[6]);
                it->members = xcalloc(it->head.member_count, sizeof(Item *));
            }
            if (depth > 0) {
                Item *parent = stack[depth - 1];
                parent->members[parent->nmembers++] = it;
                left[depth - 1]--;
            } else {
                c->items = realloc(c->items, sizeof(Item *) * (c->nitems + 1));
                if (!c->items) die("out of memory");
                c->items[c->nitems++] = it;
            }
            while (depth > 0 && left[depth - 1] == 0) depth--;
            if (it->composite && it->head.member_count > 0) {
                stack[depth] = it;
                left[depth] = it->head.member_count;
                depth++;
            }
            cur = it;
            continue;
        }
        if (!cur) die("line %d: %s outside a tensor", lineno, d);
        if (!strcmp(d, "tile")) {
            Tile *tl = &cur->tiles[cur->ntiles++];
            list_u64(t[1], tl->shape);
            tl->outer = tile_order(t[2], tl->ostr);
            tl->inner = tile_order(t[3], tl->istr);
        } else if (!strcmp(d, "offset")) {
            cur->offset = strtoull(t[1], NULL, 10);
        } else if (!strcmp(d, "buffer")) {
            Buf *b = &cur->bufs[cur->nbufs++];
            b->size = strtoull(t[1], NULL, 10);
            b->align = b->size ? 64 : 1;
            int k = 2;
            for (; k < nt; k++) {
                if (!strncmp(t[k], "align=", 6)) b->align = (uint32_t)atoi(t[k] + 6);
                else if (!strncmp(t[k], "memory=", 7)) {
                    const char *m = t[k] + 7;
                    b->memory = !strcmp(m, "host_pinned") ? HURRAY_MEMORY_HOST_PINNED
                                : !strcmp(m, "unified") ? HURRAY_MEMORY_UNIFIED
                                                        : HURRAY_MEMORY_STANDARD;
                } else break;
            }
            fill(b, t + k, nt - k, lineno);
        } else if (!strcmp(d, "quant")) {
            HurrayQuantization *q = &cur->q;
            memset(q, 0, sizeof *q);
            cur->has_quant = 1;
            q->scheme_version = 1;
            q->scale_buffer_index = HURRAY_NO_BUFFER;
            q->zero_point_buffer_index = HURRAY_NO_BUFFER;
            const char *s = t[1];
#define U(i) ((uint32_t)strtoul(t[i], NULL, 10))
#define ZP(i) (!strcmp(t[i], "none") ? HURRAY_NO_BUFFER : U(i))
            if (!strcmp(s, "per_tensor")) {
                q->scheme_tag = HURRAY_SCHEME_PER_TENSOR_AFFINE;
                q->scale = strtof(t[2], NULL);
                q->zero_point = (int32_t)atoi(t[3]);
            } else if (!strcmp(s, "per_channel")) {
                q->scheme_tag = HURRAY_SCHEME_PER_CHANNEL_AFFINE;
                q->axis = U(2);
                q->scale_buffer_index = U(3);
                q->zero_point_buffer_index = ZP(4);
                q->scale_type_tag = HURRAY_SCALE_TYPE_F32;
            } else if (!strcmp(s, "per_block")) {
                q->scheme_tag = HURRAY_SCHEME_PER_BLOCK_AFFINE;
                q->axis = U(2);
                q->block_size = U(3);
                q->scale_buffer_index = U(4);
                q->zero_point_buffer_index = ZP(5);
                q->scale_type_tag = !strcmp(t[6], "f16") ? HURRAY_SCALE_TYPE_F16
                                    : !strcmp(t[6], "bf16") ? HURRAY_SCALE_TYPE_BF16
                                                            : HURRAY_SCALE_TYPE_F32;
            } else if (!strcmp(s, "nf4") || !strcmp(s, "mxfp")) {
                q->scheme_tag = !strcmp(s, "nf4") ? HURRAY_SCHEME_NF4 : HURRAY_SCHEME_MXFP;
                q->axis = U(2);
                q->block_size = U(3);
                q->scale_buffer_index = U(4);
            } else die("line %d: unknown scheme %s", lineno, s);
            if (q->zero_point_buffer_index == HURRAY_NO_BUFFER &&
                (q->scheme_tag == HURRAY_SCHEME_PER_CHANNEL_AFFINE || q->scheme_tag == HURRAY_SCHEME_PER_BLOCK_AFFINE))
                q->flags = HURRAY_QUANT_FLAG_SYMMETRIC;
#undef U
#undef ZP
        } else if (!strcmp(d, "shard")) {
            cur->has_shard = 1;
            list_u64(t[1], cur->parent);
            list_u64(t[2], cur->soff);
        } else if (!strcmp(d, "stats")) {
            cur->has_stats = 1;
            stats(&cur->st, t + 1, nt - 1);
        } else if (!strcmp(d, "role")) {
            cur->role = !strcmp(t[1], "base") ? HURRAY_MEMBER_ROLE_BASE : HURRAY_MEMBER_ROLE_CORRECTION;
        } else {
            die("line %d: unknown directive %s", lineno, d);
        }
    }
    fclose(f);
    *ncases = nc;
    return cases;
}

/* ------------------------------------------------------------ producer */

static char err[8192]; /* the current case's first failure */

#define TRY(call)                                                                         \
    do {                                                                                  \
        HurrayStatus s_ = (call);                                                         \
        if (s_ != HURRAY_OK) {                                                            \
            snprintf(err, sizeof err, "%s: %s", #call, hurray_last_error_message());      \
            goto fail;                                                                    \
        }                                                                                 \
    } while (0)

static void release_free(void *p) { free(p); }

/* The descriptor of an item, built in one call from a view (zeroed, then the
 * case's layout fields and sections). */
static HurrayDescriptor *build_descriptor(const Item *it) {
    HurrayDescriptor *d = NULL;
    HurrayDescriptorView v;
    HurrayTileLevelView levels[MAXTILES];
    HurrayBufferEntry entries[MAXB];
    HurrayCompositeHead head = it->head;
    uint8_t role = it->role >= 0 ? (uint8_t)it->role : 0;
    memset(&v, 0, sizeof v);
    memset(levels, 0, sizeof levels);
    v.header.type_tag = it->dtype;
    v.header.layout_tag = it->layout;
    v.header.rank = it->rank;
    v.header.buffer_count = it->nbufs;
    v.header.byte_offset = it->offset;
    v.shape = it->rank ? it->shape : NULL;
    switch (it->layout) {
    case HURRAY_LAYOUT_STRIDED: v.strides = it->strides; break;
    case HURRAY_LAYOUT_TILED:
        for (uint32_t l = 0; l < it->ntiles; l++) {
            const Tile *tl = &it->tiles[l];
            levels[l].tile_shape = tl->shape;
            levels[l].outer_order = tl->outer;
            levels[l].inner_order = tl->inner;
            if (tl->outer == HURRAY_TILE_ORDER_STRIDED) levels[l].outer_strides = tl->ostr;
            if (tl->inner == HURRAY_TILE_ORDER_STRIDED) levels[l].inner_strides = tl->istr;
        }
        v.tiling_depth = it->ntiles;
        v.tiling = levels;
        break;
    case HURRAY_LAYOUT_MORTON: v.morton_bits = it->morton; break;
    case HURRAY_LAYOUT_HILBERT:
        v.hilbert_order = it->h_order;
        v.hilbert_rank = it->h_rank;
        break;
    case HURRAY_LAYOUT_COO:
        v.nnz = it->nnz;
        v.coo_is_sorted = it->coo_sorted;
        break;
    case HURRAY_LAYOUT_CSR:
    case HURRAY_LAYOUT_CSC: v.nnz = it->nnz; break;
    case HURRAY_LAYOUT_CSF:
        v.nnz = it->nnz;
        v.csf_mode_order = it->mode;
        break;
    case HURRAY_LAYOUT_BLOCK_PAGED: v.block_paged = &it->bp; break;
    case HURRAY_LAYOUT_COMPOSITE_HEAD: v.composite_head = &head; break;
    default: break;
    }
    for (uint32_t i = 0; i < it->nbufs; i++) {
        HurrayBufferEntry e = {it->bufs[i].size, it->bufs[i].align, HURRAY_DEVICE_CPU,
                               HURRAY_SYNC_PRODUCER_SYNCED, it->bufs[i].memory};
        entries[i] = e;
    }
    v.buffers = it->nbufs ? entries : NULL;
    if (it->has_quant) v.quantization = &it->q;
    if (it->has_shard) {
        v.shard_parent_shape = it->parent;
        v.shard_offset = it->soff;
    }
    if (it->has_stats) v.statistics = &it->st;
    v.has_member_role = it->role >= 0;
    v.member_role = role;
    TRY(hurray_descriptor_from_view(&v, &d));
fail:
    return d;
}

/* A tensor over this program's own memory (a copy of the case's bytes, aligned as
 * declared), released by free(). */
static HurrayTensor *make_tensor(const Item *it) {
    HurrayDescriptor *d = build_descriptor(it);
    HurrayBufferList *list = NULL;
    HurrayBuffer *buf = NULL;
    HurrayTensor *t = NULL;
    uint8_t enc[4096];
    uint64_t enc_len = 0;
    if (!d) return NULL;
    TRY(hurray_descriptor_encode(d, enc, sizeof enc, &enc_len));
    TRY(hurray_buffer_list_new(&list));
    for (uint32_t i = 0; i < it->nbufs; i++) {
        const Buf *b = &it->bufs[i];
        void *mem = NULL;
        if (b->size) {
            size_t a = b->align < 64 ? 64 : b->align;
            mem = aligned_alloc(a, (b->size + a - 1) / a * a);
            if (!mem) die("out of memory");
            memcpy(mem, b->bytes, b->size);
        }
        HurrayStatus s = hurray_buffer_new(mem, b->size, b->align, HURRAY_DEVICE_CPU, HURRAY_SYNC_PRODUCER_SYNCED,
                                           b->memory, NULL, mem ? release_free : NULL, mem, &buf);
        if (s != HURRAY_OK) free(mem);
        TRY(s);
        TRY(hurray_buffer_list_push(list, &buf));
    }
    TRY(hurray_tensor_new(HURRAY_C_ABI_VERSION, enc, enc_len, list, NULL, NULL, &t));
    list = NULL;
fail:
    hurray_buffer_destroy(&buf);
    hurray_buffer_list_destroy(&list);
    hurray_descriptor_destroy(&d);
    return t;
}

static HurrayItem *make_item(const Item *it) {
    HurrayTensor *t = make_tensor(it);
    HurrayItem *item = NULL, *m = NULL;
    if (!t) return NULL;
    if (!it->composite) {
        TRY(hurray_item_from_tensor(&t, &item));
        return item;
    }
    TRY(hurray_item_composite_new(&t, &item));
    for (uint32_t i = 0; i < it->nmembers; i++) {
        m = make_item(it->members[i]);
        if (!m) goto fail;
        TRY(hurray_item_composite_push(item, &m));
    }
    return item;
fail:
    hurray_tensor_destroy(&t);
    hurray_item_destroy(&m);
    hurray_item_destroy(&item);
    return NULL;
}

/* Adds a case's KV entry in one call through the tagged value. */
static int add_kv(HurrayFileWriter *w, const Kv *kv) {
    HurrayKvValue v, *elems = NULL;
    memset(&v, 0, sizeof v);
    v.type_tag = kv->array ? HURRAY_KV_TYPE_ARRAY : kv->tag;
    if (!kv->array) {
        switch (kv->tag) {
        case HURRAY_KV_TYPE_INT64: v.int64_value = kv->i[0]; break;
        case HURRAY_KV_TYPE_UINT64: v.uint64_value = kv->u[0]; break;
        case HURRAY_KV_TYPE_FLOAT64: v.float64_value = kv->f[0]; break;
        case HURRAY_KV_TYPE_BOOL: v.bool_value = kv->b[0]; break;
        default: /* string or bytes */
            v.data = kv->s[0];
            v.len = kv->slen[0];
            break;
        }
    } else {
        v.element_type = kv->tag;
        v.len = kv->n;
        switch (kv->tag) {
        case HURRAY_KV_TYPE_INT64: v.data = kv->i; break;
        case HURRAY_KV_TYPE_UINT64: v.data = kv->u; break;
        case HURRAY_KV_TYPE_FLOAT64: v.data = kv->f; break;
        case HURRAY_KV_TYPE_BOOL: v.data = kv->b; break;
        default: /* string or byte-sequence elements: one tagged value each */
            elems = xcalloc(kv->n ? kv->n : 1, sizeof *elems);
            for (uint64_t j = 0; j < kv->n; j++) {
                elems[j].type_tag = kv->tag;
                elems[j].data = kv->s[j];
                elems[j].len = kv->slen[j];
            }
            v.data = elems;
            break;
        }
    }
    HurrayStatus st = hurray_file_writer_add_kv(w, kv->key, strlen(kv->key), &v);
    free(elems);
    TRY(st);
    return 0;
fail:
    return -1;
}

static int produce_case(const Case *c, const char *dir) {
    char path[4096];
    HurrayItem **items = xcalloc(c->nitems, sizeof(HurrayItem *));
    HurrayFileWriter *w = NULL;
    HurrayStreamEncoder *enc = NULL;
    FILE *out = NULL;
    int rc = -1;
    HurrayWriteOptions opts;
    err[0] = 0;
    for (uint32_t i = 0; i < c->nitems; i++)
        if (!(items[i] = make_item(c->items[i]))) goto fail;
    TRY(hurray_write_options_default(&opts));
    opts.durable = 0;
    snprintf(path, sizeof path, "%s/%s.hrry", dir, c->name);
    TRY(hurray_file_writer_create(path, &opts, &w));
    for (uint32_t i = 0; i < c->nitems; i++) TRY(hurray_file_writer_write_item(w, c->items[i]->name, items[i]));
    for (uint32_t i = 0; i < c->nkv; i++)
        if (add_kv(w, &c->kv[i])) goto fail;
    TRY(hurray_file_writer_finish(w));

    snprintf(path, sizeof path, "%s/%s.hrrys", dir, c->name);
    out = fopen(path, "wb");
    if (!out) {
        snprintf(err, sizeof err, "%s: %s", path, strerror(errno));
        goto fail;
    }
    TRY(hurray_stream_encoder_new(NULL, &enc));
    for (uint32_t i = 0; i < c->nitems; i++) {
        uint64_t chunks = 0, total = 0;
        TRY(hurray_stream_encoder_begin_item(enc, items[i], &chunks, &total));
        for (uint64_t k = 0; k < chunks; k++) {
            const uint8_t *p = NULL;
            uint64_t n = 0;
            TRY(hurray_stream_encoder_chunk(enc, k, &p, &n));
            if (n && fwrite(p, 1, n, out) != n) {
                snprintf(err, sizeof err, "write %s failed", path);
                goto fail;
            }
        }
        TRY(hurray_stream_encoder_end(enc));
    }
    rc = 0;
fail:
    if (out && fclose(out) != 0) rc = -1;
    hurray_stream_encoder_destroy(&enc);
    hurray_file_writer_destroy(&w);
    for (uint32_t i = 0; i < c->nitems; i++) hurray_item_destroy(&items[i]);
    free(items);
    return rc;
}

/* ------------------------------------------------------------ consumer */

static char why[8192]; /* the current check's first difference */
static char where[600]; /* "tensor \"x\"" prefix */

static int fail_at(const char *fmt, ...) {
    char msg[3000];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (where[0]) snprintf(why, sizeof why, "%s: %s", where, msg);
    else snprintf(why, sizeof why, "%s", msg);
    return -1;
}

#define CALL(call)                                                                        \
    do {                                                                                  \
        HurrayStatus s_ = (call);                                                         \
        if (s_ != HURRAY_OK) return fail_at("%s: %s", #call, hurray_last_error_message()); \
    } while (0)

#define SAME(what, fmt, want, got)                                                        \
    do {                                                                                  \
        if ((want) != (got)) return fail_at("%s: expected " fmt ", got " fmt, what, want, got); \
    } while (0)

static int same_u64s(const char *what, const uint64_t *want, const uint64_t *got, uint64_t n, uint64_t gn) {
    SAME(what, "%" PRIu64 " values", n, gn);
    for (uint64_t i = 0; i < n; i++)
        if (want[i] != got[i])
            return fail_at("%s[%" PRIu64 "]: expected %" PRIu64 ", got %" PRIu64, what, i, want[i], got[i]);
    return 0;
}
static int same_i64s(const char *what, const int64_t *want, const int64_t *got, uint64_t n, uint64_t gn) {
    SAME(what, "%" PRIu64 " values", n, gn);
    for (uint64_t i = 0; i < n; i++)
        if (want[i] != got[i])
            return fail_at("%s[%" PRIu64 "]: expected %" PRId64 ", got %" PRId64, what, i, want[i], got[i]);
    return 0;
}
static int same_u32s(const char *what, const uint32_t *want, const uint32_t *got, uint64_t n, uint64_t gn) {
    SAME(what, "%" PRIu64 " values", n, gn);
    for (uint64_t i = 0; i < n; i++)
        if (want[i] != got[i]) return fail_at("%s[%" PRIu64 "]: expected %u, got %u", what, i, want[i], got[i]);
    return 0;
}
static int same_f64(const char *what, double want, double got) {
    if (memcmp(&want, &got, 8) != 0) return fail_at("%s: expected %.17g, got %.17g", what, want, got);
    return 0;
}
static int same_bytes(const char *what, const uint8_t *want, uint64_t wn, const uint8_t *got, uint64_t gn) {
    uint64_t n = wn < gn ? wn : gn, diff = (wn > gn ? wn - gn : gn - wn), first = UINT64_MAX;
    for (uint64_t i = 0; i < n; i++)
        if (want[i] != got[i]) {
            diff++;
            if (first == UINT64_MAX) first = i;
        }
    if (first != UINT64_MAX)
        return fail_at("%s byte %" PRIu64 ": expected 0x%02x, got 0x%02x (%" PRIu64 " of %" PRIu64 " bytes differ)", what,
                       first, want[first], got[first], diff, wn);
    if (wn != gn) return fail_at("%s: expected %" PRIu64 " bytes, got %" PRIu64, what, wn, gn);
    return 0;
}

static int check_item(const Item *it, const HurrayItem *got);

static int check_descriptor(const Item *it, const HurrayDescriptor *d) {
    /* The whole descriptor in one call: a view borrowed from d. */
    const HurrayDescriptorView *dv = NULL;
    CALL(hurray_descriptor_view(d, &dv));
    const HurrayDescriptorHeader h = dv->header;
    const uint64_t r = h.rank;
    SAME("dtype tag", "0x%02x", it->dtype, h.type_tag);
    SAME("layout tag", "0x%02x", it->layout, h.layout_tag);
    SAME("rank", "%u", it->rank, h.rank);
    if (same_u64s("shape", it->shape, dv->shape, it->rank, r)) return -1;
    SAME("byte_offset", "%" PRIu64, it->offset, h.byte_offset);
    switch (it->layout) {
    case HURRAY_LAYOUT_STRIDED:
        if (same_i64s("strides", it->strides, dv->strides, it->rank, r)) return -1;
        break;
    case HURRAY_LAYOUT_TILED: {
        uint32_t depth = dv->tiling_depth;
        SAME("tiling depth", "%u", it->ntiles, depth);
        for (uint32_t l = 0; l < depth; l++) {
            const Tile *tl = &it->tiles[l];
            const HurrayTileLevelView *lv = &dv->tiling[l];
            SAME("tile outer order", "%u", tl->outer, lv->outer_order);
            SAME("tile inner order", "%u", tl->inner, lv->inner_order);
            if (same_u64s("tile shape", tl->shape, lv->tile_shape, it->rank, r)) return -1;
            if (lv->outer_order == HURRAY_TILE_ORDER_STRIDED &&
                same_i64s("tile outer strides", tl->ostr, lv->outer_strides, it->rank, r))
                return -1;
            if (lv->inner_order == HURRAY_TILE_ORDER_STRIDED &&
                same_i64s("tile inner strides", tl->istr, lv->inner_strides, it->rank, r))
                return -1;
        }
        break;
    }
    case HURRAY_LAYOUT_MORTON:
        if (same_u32s("morton bits", it->morton, dv->morton_bits, it->rank, r)) return -1;
        break;
    case HURRAY_LAYOUT_HILBERT: {
        SAME("hilbert order", "%u", it->h_order, dv->hilbert_order);
        SAME("hilbert rank", "%u", it->h_rank, dv->hilbert_rank);
        break;
    }
    case HURRAY_LAYOUT_COO:
    case HURRAY_LAYOUT_CSR:
    case HURRAY_LAYOUT_CSC:
    case HURRAY_LAYOUT_CSF: {
        SAME("nnz", "%" PRIu64, it->nnz, dv->nnz);
        if (it->layout == HURRAY_LAYOUT_COO) SAME("is_sorted", "%u", it->coo_sorted, dv->coo_is_sorted);
        if (it->layout == HURRAY_LAYOUT_CSF &&
            same_u32s("mode_order", it->mode, dv->csf_mode_order, it->rank, r))
            return -1;
        break;
    }
    case HURRAY_LAYOUT_BLOCK_PAGED: {
        if (!dv->block_paged) return fail_at("block-paged fields: NULL in the view");
        const HurrayBlockPaged bp = *dv->block_paged;
        SAME("page_size", "%u", it->bp.page_size, bp.page_size);
        SAME("num_pages", "%" PRIu64, it->bp.num_pages, bp.num_pages);
        SAME("paged_axis", "%u", 0u, bp.paged_axis);
        SAME("num_seqs", "%u", it->bp.num_seqs, bp.num_seqs);
        SAME("kv_role", "%u", it->bp.kv_role, bp.kv_role);
        SAME("layer_index", "%u", it->bp.layer_index, bp.layer_index);
        SAME("block_table_index_type", "%u", it->bp.block_table_index_type, bp.block_table_index_type);
        break;
    }
    case HURRAY_LAYOUT_COMPOSITE_HEAD: {
        if (!dv->composite_head) return fail_at("composite head fields: NULL in the view");
        const HurrayCompositeHead ch = *dv->composite_head;
        SAME("composition rule", "%u", it->head.composition_rule, ch.composition_rule);
        SAME("combine op", "%u", it->head.combine_op, ch.combine_op);
        SAME("member count", "%u", it->head.member_count, ch.member_count);
        break;
    }
    default: break;
    }
    SAME("buffer count", "%u", it->nbufs, h.buffer_count);
    for (uint32_t i = 0; i < it->nbufs; i++) {
        const HurrayBufferEntry e = dv->buffers[i];
        char what[64];
        snprintf(what, sizeof what, "buffer %u byte_size", i);
        SAME(what, "%" PRIu64, it->bufs[i].size, e.byte_size);
        snprintf(what, sizeof what, "buffer %u alignment", i);
        SAME(what, "%u", it->bufs[i].align, e.alignment);
        snprintf(what, sizeof what, "buffer %u device", i);
        SAME(what, "%u", HURRAY_DEVICE_CPU, e.device_tag);
        snprintf(what, sizeof what, "buffer %u sync_mode", i);
        SAME(what, "%u", HURRAY_SYNC_PRODUCER_SYNCED, e.sync_mode);
        snprintf(what, sizeof what, "buffer %u memory_class", i);
        SAME(what, "%u", it->bufs[i].memory, e.memory_class);
    }
    /* Optional sections: present exactly when the case has them. */
    if (!it->has_quant) {
        SAME("quantization section", "%s", "absent", dv->quantization ? "present" : "absent");
    } else {
        if (!dv->quantization) return fail_at("quantization section: absent");
        const HurrayQuantization q = *dv->quantization;
        SAME("quant scheme", "%u", it->q.scheme_tag, q.scheme_tag);
        SAME("quant scheme_version", "%u", 1u, q.scheme_version);
        SAME("quant flags", "%u", it->q.flags, q.flags);
        if (memcmp(&it->q.scale, &q.scale, 4) != 0)
            return fail_at("quant scale: expected %.9g, got %.9g", it->q.scale, q.scale);
        SAME("quant zero_point", "%d", it->q.zero_point, q.zero_point);
        SAME("quant axis", "%u", it->q.axis, q.axis);
        SAME("quant block_size", "%u", it->q.block_size, q.block_size);
        SAME("quant scale_buffer_index", "%u", it->q.scale_buffer_index, q.scale_buffer_index);
        SAME("quant zero_point_buffer_index", "%u", it->q.zero_point_buffer_index, q.zero_point_buffer_index);
        SAME("quant scale_type", "%u", it->q.scale_type_tag, q.scale_type_tag);
    }
    if (!it->has_shard) {
        SAME("shard section", "%s", "absent", dv->shard_parent_shape ? "present" : "absent");
    } else {
        if (!dv->shard_parent_shape || !dv->shard_offset) return fail_at("shard section: absent");
        if (same_u64s("shard parent_shape", it->parent, dv->shard_parent_shape, it->rank, r)) return -1;
        if (same_u64s("shard offset", it->soff, dv->shard_offset, it->rank, r)) return -1;
    }
    if (!it->has_stats) {
        SAME("statistics section", "%s", "absent", dv->statistics ? "present" : "absent");
    } else {
        if (!dv->statistics) return fail_at("statistics section: absent");
        const HurrayStatistics st = *dv->statistics;
        SAME("statistics computed_mask", "%u", it->st.computed_mask, st.computed_mask);
        SAME("statistics nnz", "%" PRIu64, it->st.nnz, st.nnz);
        if (same_f64("statistics sparsity_ratio", it->st.sparsity_ratio, st.sparsity_ratio) ||
            same_f64("statistics value_min", it->st.value_min, st.value_min) ||
            same_f64("statistics value_max", it->st.value_max, st.value_max) ||
            same_f64("statistics value_abs_max", it->st.value_abs_max, st.value_abs_max) ||
            same_f64("statistics value_mean", it->st.value_mean, st.value_mean) ||
            same_f64("statistics value_stddev", it->st.value_stddev, st.value_stddev))
            return -1;
        SAME("statistics nm_n", "%u", it->st.nm_n, st.nm_n);
        SAME("statistics nm_m", "%u", it->st.nm_m, st.nm_m);
        SAME("statistics has_nan", "%u", it->st.has_nan, st.has_nan);
        SAME("statistics has_inf", "%u", it->st.has_inf, st.has_inf);
    }
    if (it->role < 0) {
        SAME("member role section", "%s", "absent", dv->has_member_role ? "present" : "absent");
    } else {
        SAME("member role section", "%s", "present", dv->has_member_role ? "present" : "absent");
        SAME("member role", "%d", it->role, (int)dv->member_role);
    }
    return 0;
}

static int check_tensor(const Item *it, const HurrayTensor *t) {
    const HurrayDescriptor *d = NULL;
    uint32_t abi = 0;
    snprintf(where, sizeof where, "%s \"%s\"", it->composite ? "composite" : "tensor", it->name);
    CALL(hurray_tensor_abi_version(t, &abi));
    SAME("ABI version", "%u", (unsigned)HURRAY_C_ABI_VERSION, abi);
    CALL(hurray_tensor_descriptor(t, &d));
    if (check_descriptor(it, d)) return -1;
    for (uint32_t i = 0; i < it->nbufs; i++) {
        const void *data = NULL;
        uint64_t size = 0;
        char what[32];
        CALL(hurray_tensor_buffer_data(t, i, &data, &size));
        if (size && ((uintptr_t)data % 64) != 0) return fail_at("buffer %u is not 64-byte aligned in memory", i);
        snprintf(what, sizeof what, "buffer %u", i);
        if (same_bytes(what, it->bufs[i].bytes, it->bufs[i].size, data, size)) return -1;
    }
    return 0;
}

static int check_item(const Item *it, const HurrayItem *got) {
    uint8_t comp = 0;
    const HurrayTensor *t = NULL;
    snprintf(where, sizeof where, "%s \"%s\"", it->composite ? "composite" : "tensor", it->name);
    CALL(hurray_item_is_composite(got, &comp));
    if (comp != (uint8_t)it->composite)
        return fail_at("expected a %s, got a %s", it->composite ? "composite" : "plain tensor",
                       comp ? "composite" : "plain tensor");
    CALL(hurray_item_tensor(got, &t));
    if (check_tensor(it, t)) return -1;
    if (!it->composite) return 0;
    uint64_t n = 0;
    snprintf(where, sizeof where, "composite \"%s\"", it->name);
    CALL(hurray_item_member_count(got, &n));
    SAME("members", "%" PRIu64, (uint64_t)it->nmembers, n);
    for (uint32_t i = 0; i < it->nmembers; i++) {
        const HurrayItem *m = NULL;
        CALL(hurray_item_member(got, i, &m));
        if (check_item(it->members[i], m)) return -1;
    }
    return 0;
}

static void collect_names(const Item *it, char ***names, uint32_t *n) {
    *names = realloc(*names, sizeof(char *) * (*n + 1));
    if (!*names) die("out of memory");
    (*names)[(*n)++] = (char *)it->name;
    for (uint32_t i = 0; i < it->nmembers; i++) collect_names(it->members[i], names, n);
}

static int check_kv(const HurrayFileReader *r, const Case *c) {
    uint64_t n = 0;
    CALL(hurray_file_reader_kv_count(r, &n));
    SAME("KV entries", "%" PRIu64, (uint64_t)c->nkv, n);
    for (uint32_t i = 0; i < c->nkv; i++) {
        const Kv *kv = &c->kv[i];
        const char *key = NULL;
        uint64_t klen = 0;
        HurrayKvValue v;
        CALL(hurray_file_reader_kv_key(r, i, &key, &klen));
        if (strcmp(key, kv->key) != 0) return fail_at("KV entry %u: expected key \"%s\", got \"%s\"", i, kv->key, key);
        snprintf(where, sizeof where, "KV \"%s\"", kv->key);
        /* The whole value in one call. */
        CALL(hurray_file_reader_kv_value(r, i, &v));
        SAME("type", "%u", kv->array ? (unsigned)HURRAY_KV_TYPE_ARRAY : (unsigned)kv->tag, (unsigned)v.type_tag);
        if (!kv->array) {
            switch (kv->tag) {
            case HURRAY_KV_TYPE_INT64: SAME("value", "%" PRId64, kv->i[0], (int64_t)v.int64_value); break;
            case HURRAY_KV_TYPE_UINT64: SAME("value", "%" PRIu64, kv->u[0], (uint64_t)v.uint64_value); break;
            case HURRAY_KV_TYPE_FLOAT64:
                if (same_f64("value", kv->f[0], v.float64_value)) return -1;
                break;
            case HURRAY_KV_TYPE_BOOL: SAME("value", "%u", kv->b[0], v.bool_value); break;
            default: /* string or bytes */
                if (same_bytes(kv->tag == HURRAY_KV_TYPE_STRING ? "string" : "bytes", kv->s[0], kv->slen[0],
                               (const uint8_t *)v.data, v.len))
                    return -1;
                break;
            }
            continue;
        }
        SAME("element type", "%u", (unsigned)kv->tag, (unsigned)v.element_type);
        SAME("element count", "%" PRIu64, kv->n, (uint64_t)v.len);
        if (kv->tag == HURRAY_KV_TYPE_STRING || kv->tag == HURRAY_KV_TYPE_BYTES) {
            for (uint64_t j = 0; j < kv->n; j++) {
                HurrayKvValue e;
                CALL(hurray_file_reader_kv_array_element(r, i, j, &e));
                if (same_bytes("element", kv->s[j], kv->slen[j], (const uint8_t *)e.data, e.len)) return -1;
            }
            continue;
        }
        /* Numeric and bool elements are borrowed, little-endian and maybe unaligned:
         * copy them out before comparing. */
        size_t width = kv->tag == HURRAY_KV_TYPE_BOOL ? 1 : 8;
        uint8_t *x = xcalloc(kv->n ? kv->n : 1, width);
        if (kv->n) memcpy(x, v.data, kv->n * width);
        int bad = 0;
        switch (kv->tag) {
        case HURRAY_KV_TYPE_INT64: bad = same_i64s("values", kv->i, (const int64_t *)x, kv->n, v.len); break;
        case HURRAY_KV_TYPE_UINT64: bad = same_u64s("values", kv->u, (const uint64_t *)x, kv->n, v.len); break;
        case HURRAY_KV_TYPE_FLOAT64:
            for (uint64_t j = 0; !bad && j < kv->n; j++) bad = same_f64("value", kv->f[j], ((const double *)x)[j]);
            break;
        default: bad = same_bytes("values", kv->b, kv->n, x, v.len); break;
        }
        free(x);
        if (bad) return -1;
    }
    return 0;
}

static int check_file(const Case *c, const char *path) {
    HurrayFileReader *r = NULL;
    char **names = NULL;
    uint32_t nn = 0;
    int rc = -1;
    where[0] = 0;
    if (hurray_file_reader_open(path, &r) != HURRAY_OK) return fail_at("open: %s", hurray_last_error_message());
    for (uint32_t i = 0; i < c->nitems; i++) collect_names(c->items[i], &names, &nn);
    uint64_t count = 0;
    if (hurray_file_reader_tensor_count(r, &count) != HURRAY_OK) {
        fail_at("tensor_count: %s", hurray_last_error_message());
        goto done;
    }
    if (count != nn) {
        fail_at("expected %u tensors (heads and members), the file holds %" PRIu64, nn, count);
        goto done;
    }
    for (uint32_t i = 0; i < nn; i++) {
        const char *name = NULL;
        uint64_t len = 0;
        if (hurray_file_reader_tensor_name(r, i, &name, &len) != HURRAY_OK || strcmp(name, names[i]) != 0) {
            fail_at("tensor name %u: expected \"%s\", got \"%s\"", i, names[i], name ? name : "?");
            goto done;
        }
    }
    for (uint32_t i = 0; i < c->nitems; i++) {
        HurrayItem *it = NULL;
        where[0] = 0;
        if (hurray_file_reader_item(r, c->items[i]->name, &it) != HURRAY_OK) {
            fail_at("item \"%s\": %s", c->items[i]->name, hurray_last_error_message());
            goto done;
        }
        int bad = check_item(c->items[i], it);
        hurray_item_destroy(&it);
        if (bad) goto done;
    }
    where[0] = 0;
    if (check_kv(r, c)) goto done;
    rc = 0;
done:
    free(names);
    hurray_file_reader_destroy(&r);
    return rc;
}

/* Reads the stream with demand/advance: each read goes straight into the place the
 * decoder asks for (a tensor's final buffer while payload arrives). */
static int check_stream(const Case *c, const char *path) {
    FILE *f = fopen(path, "rb");
    HurrayStreamDecoder *dec = NULL;
    uint32_t next = 0;
    int rc = -1;
    where[0] = 0;
    if (!f) return fail_at("open %s: %s", path, strerror(errno));
    if (hurray_stream_decoder_new(NULL, &dec) != HURRAY_OK) {
        fail_at("decoder: %s", hurray_last_error_message());
        goto done;
    }
    for (;;) {
        for (;;) {
            HurrayItem *it = NULL;
            HurrayStatus s = hurray_stream_decoder_next(dec, &it);
            if (s != HURRAY_OK) {
                where[0] = 0;
                fail_at("item %u: %s", next, hurray_last_error_message());
                goto done;
            }
            if (!it) break;
            if (next >= c->nitems) {
                hurray_item_destroy(&it);
                where[0] = 0;
                fail_at("more than the expected %u items in the stream", c->nitems);
                goto done;
            }
            int bad = check_item(c->items[next++], it);
            hurray_item_destroy(&it);
            if (bad) goto done;
        }
        uint8_t *dst = NULL;
        uint64_t want = 0;
        if (hurray_stream_decoder_demand(dec, &dst, &want) != HURRAY_OK || want == 0) break;
        size_t got = fread(dst, 1, (size_t)want, f);
        if (got == 0) {
            if (hurray_stream_decoder_finish(dec) != HURRAY_OK) {
                where[0] = 0;
                fail_at("end of stream: %s", hurray_last_error_message());
                goto done;
            }
            break;
        }
        if (hurray_stream_decoder_advance(dec, got) != HURRAY_OK) {
            fail_at("advance: %s", hurray_last_error_message());
            goto done;
        }
    }
    where[0] = 0;
    if (next != c->nitems) {
        fail_at("the stream ends after %u items, expected %u", next, c->nitems);
        goto done;
    }
    rc = 0;
done:
    hurray_stream_decoder_destroy(&dec);
    fclose(f);
    return rc;
}

static int exists(const char *p) {
    struct stat st;
    return stat(p, &st) == 0;
}

static void consume(const Case *cases, uint32_t nc, char **dirs, int nd) {
    for (int di = 0; di < nd; di++) {
        char dir[4096];
        snprintf(dir, sizeof dir, "%s", dirs[di]);
        size_t dl = strlen(dir);
        while (dl > 1 && dir[dl - 1] == '/') dir[--dl] = 0;
        const char *producer = strrchr(dir, '/') ? strrchr(dir, '/') + 1 : dir;
        for (uint32_t ci = 0; ci < nc; ci++) {
            for (int k = 0; k < 2; k++) {
                const char *ext = k ? "hrrys" : "hrry", *container = k ? "stream" : "file";
                char path[4200], na[4300];
                snprintf(path, sizeof path, "%s/%s.%s", dir, cases[ci].name, ext);
                snprintf(na, sizeof na, "%s.na", path);
                printf("result\t%s\t%s\t%s\t", producer, container, cases[ci].name);
                FILE *f = fopen(na, "r");
                if (f) {
                    char reason[1024] = "";
                    if (!fgets(reason, sizeof reason, f)) reason[0] = 0;
                    fclose(f);
                    reason[strcspn(reason, "\r\n")] = 0;
                    printf("na\tproducer: %s\n", reason);
                    continue;
                }
                why[0] = 0;
                int bad = !exists(path) ? fail_at("no output %s", path)
                          : k           ? check_stream(&cases[ci], path)
                                        : check_file(&cases[ci], path);
                if (bad) {
                    for (char *p = why; *p; p++)
                        if (*p == '\t' || *p == '\n') *p = ' ';
                    printf("fail\t%s\n", why);
                } else {
                    printf("pass\t\n");
                }
            }
        }
    }
    if (hurray_debug_live_objects() != 0) {
        printf("note\tleak: %" PRId64 " live library objects after the checks\n",
               (int64_t)hurray_debug_live_objects());
    }
}

/* ------------------------------------------------------------ demo */

static uint32_t crc_table[256];

static uint32_t crc32_ieee(uint32_t crc, const uint8_t *p, uint64_t n) {
    if (!crc_table[1])
        for (uint32_t i = 0; i < 256; i++) {
            uint32_t c = i;
            for (int k = 0; k < 8; k++) c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
            crc_table[i] = c;
        }
    crc = ~crc;
    for (uint64_t i = 0; i < n; i++) crc = crc_table[(crc ^ p[i]) & 0xFF] ^ (crc >> 8);
    return ~crc;
}

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* How many more times `views` opens and views the file after the first pass; the
 * best of them is the `warm` figure. */
#define WARM_RUNS 200

/* One open + view pass: the reader, every tensor and a view (pointer + size) of
 * every buffer, in index order. */
typedef struct {
    HurrayFileReader *r;
    uint64_t n;
    HurrayTensor **ts;
    const char **names;
    const void **data;
    uint64_t *sizes, *nb;
} Views;

/* Opens path and views every tensor's buffers (zero copy); dies on an error. */
static void views_open(const char *path, Views *v) {
    memset(v, 0, sizeof *v);
    if (hurray_file_reader_open(path, &v->r) != HURRAY_OK) die("%s: %s", path, hurray_last_error_message());
    hurray_file_reader_tensor_count(v->r, &v->n);
    uint64_t n = v->n;
    v->ts = xcalloc(n, sizeof(HurrayTensor *));
    v->names = xcalloc(n, sizeof(char *));
    v->data = xcalloc(n * MAXB, sizeof(void *));
    v->sizes = xcalloc(n * MAXB, 8);
    v->nb = xcalloc(n, 8);
    for (uint64_t i = 0; i < n; i++) {
        uint64_t len = 0;
        const HurrayDescriptor *d = NULL;
        HurrayDescriptorHeader h;
        if (hurray_file_reader_tensor_name(v->r, i, &v->names[i], &len) != HURRAY_OK ||
            hurray_file_reader_tensor(v->r, v->names[i], &v->ts[i]) != HURRAY_OK ||
            hurray_tensor_descriptor(v->ts[i], &d) != HURRAY_OK || hurray_descriptor_header(d, &h) != HURRAY_OK)
            die("%s: %s", path, hurray_last_error_message());
        v->nb[i] = h.buffer_count < MAXB ? h.buffer_count : MAXB;
        for (uint64_t b = 0; b < v->nb[i]; b++)
            if (hurray_tensor_buffer_data(v->ts[i], b, &v->data[i * MAXB + b], &v->sizes[i * MAXB + b]) != HURRAY_OK)
                die("%s: %s", path, hurray_last_error_message());
    }
}

/* Destroys the tensors and the reader of a pass, frees its arrays. */
static void views_close(Views *v) {
    for (uint64_t i = 0; i < v->n; i++) hurray_tensor_destroy(&v->ts[i]);
    hurray_file_reader_destroy(&v->r);
    free(v->ts);
    free(v->names);
    free(v->data);
    free(v->sizes);
    free(v->nb);
}

/* Opens FILE, takes a zero-copy view (pointer + size) of every tensor's buffers,
 * then prints `view NAME CRC32` and `time SECONDS` (open + views only, this first
 * pass in a fresh process). Then WARM_RUNS more passes in this process and
 * `warm SECONDS`: the fastest (destroying is outside the timing, as in the first). */
static int views(const char *path) {
    Views v;
    double t0 = now();
    views_open(path, &v);
    double secs = now() - t0;
    for (uint64_t i = 0; i < v.n; i++) {
        uint32_t crc = 0;
        for (uint64_t b = 0; b < v.nb[i]; b++) crc = crc32_ieee(crc, v.data[i * MAXB + b], v.sizes[i * MAXB + b]);
        printf("view\t%s\t%08x\n", v.names[i], crc);
    }
    printf("time\t%.6f\n", secs);
    views_close(&v);
    double warm = -1;
    for (int w = 0; w < WARM_RUNS; w++) {
        t0 = now();
        views_open(path, &v);
        secs = now() - t0;
        if (warm < 0 || secs < warm) warm = secs;
        views_close(&v);
    }
    printf("warm\t%.6f\n", warm);
    return hurray_debug_live_objects() == 0 ? 0 : 1;
}

/* ------------------------------------------------------------ network */

/* A blocking client connected to ADDR ("host:port", split at the last colon);
 * NULL (with `err` set) when it cannot connect. */
static HurrayNetClient *net_connect(const char *addr) {
    char host[256];
    const char *colon = strrchr(addr, ':');
    HurrayNetClient *cl = NULL;
    if (!colon || (size_t)(colon - addr) >= sizeof host) {
        snprintf(err, sizeof err, "address %s is not host:port", addr);
        return NULL;
    }
    memcpy(host, addr, (size_t)(colon - addr));
    host[colon - addr] = 0;
    TRY(hurray_net_client_new(NULL, &cl));
    TRY(hurray_net_client_connect(cl, host, (uint16_t)atoi(colon + 1)));
    return cl;
fail:
    hurray_net_client_destroy(&cl);
    return NULL;
}

/* `net-get`: GETs every top-level item of case `c` (key "CASE:NAME") and writes
 * DIR/CASE.hrry holding them under NAME, with the producer's writer options. */
static int net_get_case(HurrayNetClient *cl, const Case *c, const char *dir) {
    char path[4096], key[1024];
    HurrayItem **items = xcalloc(c->nitems, sizeof(HurrayItem *));
    HurrayFileWriter *w = NULL;
    HurrayWriteOptions opts;
    int rc = -1;
    err[0] = 0;
    for (uint32_t i = 0; i < c->nitems; i++) {
        snprintf(key, sizeof key, "%s:%s", c->name, c->items[i]->name);
        TRY(hurray_net_client_get(cl, key, NULL, &items[i]));
    }
    TRY(hurray_write_options_default(&opts));
    opts.durable = 0;
    snprintf(path, sizeof path, "%s/%s.hrry", dir, c->name);
    TRY(hurray_file_writer_create(path, &opts, &w));
    for (uint32_t i = 0; i < c->nitems; i++) TRY(hurray_file_writer_write_item(w, c->items[i]->name, items[i]));
    TRY(hurray_file_writer_finish(w));
    rc = 0;
fail:
    hurray_file_writer_destroy(&w);
    for (uint32_t i = 0; i < c->nitems; i++) hurray_item_destroy(&items[i]);
    free(items);
    return rc;
}

/* `net-put`: opens DIR/CASE.hrry and PUTs each top-level item (a composite whole)
 * under "CASE:NAME". */
static int net_put_case(HurrayNetClient *cl, const Case *c, const char *dir) {
    char path[4096], key[1024];
    HurrayFileReader *r = NULL;
    HurrayItem *it = NULL;
    int rc = -1;
    err[0] = 0;
    snprintf(path, sizeof path, "%s/%s.hrry", dir, c->name);
    TRY(hurray_file_reader_open(path, &r));
    for (uint32_t i = 0; i < c->nitems; i++) {
        snprintf(key, sizeof key, "%s:%s", c->name, c->items[i]->name);
        TRY(hurray_file_reader_item(r, c->items[i]->name, &it));
        TRY(hurray_net_client_put_item(cl, key, it));
        hurray_item_destroy(&it);
    }
    rc = 0;
fail:
    hurray_item_destroy(&it);
    hurray_file_reader_destroy(&r);
    return rc;
}

/* `net-get ADDR CASES OUT` / `net-put ADDR CASES DIR`: every case over one
 * connection, connected again after a failure; the live-object counter must be
 * back to zero at the end. */
static int net_cases(int put, const char *addr, const char *cases_path, const char *dir) {
    uint32_t nc = 0, failed = 0;
    Case *cases = parse(cases_path, &nc);
    HurrayNetClient *cl = NULL;
    if (!put) mkdir(dir, 0777);
    for (uint32_t i = 0; i < nc; i++) {
        if (!cl) cl = net_connect(addr);
        if (!cl || (put ? net_put_case(cl, &cases[i], dir) : net_get_case(cl, &cases[i], dir)) != 0) {
            fprintf(stderr, "c net-%s: case %s: %s\n", put ? "put" : "get", cases[i].name, err);
            hurray_net_client_destroy(&cl);
            failed++;
        }
    }
    hurray_net_client_destroy(&cl);
    if (hurray_debug_live_objects() != 0) {
        fprintf(stderr, "c net-%s: %" PRId64 " live library objects at the end\n", put ? "put" : "get",
                (int64_t)hurray_debug_live_objects());
        failed++;
    }
    return failed ? 1 : 0;
}

/* `net-views ADDR FILE`: the demo's network step. GETs every tensor named in FILE's
 * index (FILE is read for the names only) over one connection and prints
 * `view NAME CRC32` (as `views`) and `time SECONDS` (connect and every GET). */
static int net_views(const char *addr, const char *path) {
    HurrayFileReader *r = NULL;
    uint64_t n = 0;
    if (hurray_file_reader_open(path, &r) != HURRAY_OK) die("%s: %s", path, hurray_last_error_message());
    hurray_file_reader_tensor_count(r, &n);
    const char **names = xcalloc(n, sizeof(char *));
    HurrayItem **got = xcalloc(n, sizeof(HurrayItem *));
    for (uint64_t i = 0; i < n; i++) {
        uint64_t len = 0;
        if (hurray_file_reader_tensor_name(r, i, &names[i], &len) != HURRAY_OK) die("%s: %s", path, hurray_last_error_message());
    }
    double t0 = now();
    HurrayNetClient *cl = net_connect(addr);
    if (!cl) die("%s", err);
    for (uint64_t i = 0; i < n; i++)
        if (hurray_net_client_get(cl, names[i], NULL, &got[i]) != HURRAY_OK) die("GET %s: %s", names[i], hurray_last_error_message());
    double secs = now() - t0;
    for (uint64_t i = 0; i < n; i++) {
        const HurrayTensor *t = NULL;
        const HurrayDescriptor *d = NULL;
        HurrayDescriptorHeader h;
        uint32_t crc = 0;
        if (hurray_item_tensor(got[i], &t) != HURRAY_OK || hurray_tensor_descriptor(t, &d) != HURRAY_OK ||
            hurray_descriptor_header(d, &h) != HURRAY_OK)
            die("%s: %s", names[i], hurray_last_error_message());
        for (uint64_t b = 0; b < h.buffer_count; b++) {
            const void *p = NULL;
            uint64_t sz = 0;
            if (hurray_tensor_buffer_data(t, b, &p, &sz) != HURRAY_OK) die("%s: %s", names[i], hurray_last_error_message());
            crc = crc32_ieee(crc, p, sz);
        }
        printf("view\t%s\t%08x\n", names[i], crc);
    }
    printf("time\t%.6f\n", secs);
    for (uint64_t i = 0; i < n; i++) hurray_item_destroy(&got[i]);
    hurray_net_client_destroy(&cl);
    hurray_file_reader_destroy(&r);
    free(names);
    free(got);
    return hurray_debug_live_objects() == 0 ? 0 : 1;
}

/* `net-bench ADDR KEY [REPEATS]`: the C row of `cargo xtask bench`'s network table:
 * connects, GETs KEY REPEATS times (default 3) on that connection, each item
 * destroyed before the next, and prints the fastest as `net_get c BYTES SECONDS`
 * (data bytes, the GET's wall time; connect excluded). */
static int net_bench(const char *addr, const char *key, int repeats) {
    HurrayNetClient *cl = net_connect(addr);
    uint64_t bytes = 0;
    double best = -1;
    if (!cl) die("%s", err);
    for (int r = 0; r < (repeats < 1 ? 1 : repeats); r++) {
        HurrayItem *it = NULL;
        const HurrayTensor *t = NULL;
        const HurrayDescriptor *d = NULL;
        HurrayDescriptorHeader h;
        double t0 = now();
        if (hurray_net_client_get(cl, key, NULL, &it) != HURRAY_OK) die("GET %s: %s", key, hurray_last_error_message());
        double secs = now() - t0;
        if (best < 0 || secs < best) best = secs;
        if (hurray_item_tensor(it, &t) != HURRAY_OK || hurray_tensor_descriptor(t, &d) != HURRAY_OK ||
            hurray_descriptor_header(d, &h) != HURRAY_OK)
            die("%s: %s", key, hurray_last_error_message());
        bytes = 0;
        for (uint64_t b = 0; b < h.buffer_count; b++) {
            const void *p = NULL;
            uint64_t sz = 0;
            if (hurray_tensor_buffer_data(t, b, &p, &sz) != HURRAY_OK) die("%s: %s", key, hurray_last_error_message());
            bytes += sz;
        }
        hurray_item_destroy(&it);
    }
    printf("net_get c %" PRIu64 " %.6f\n", bytes, best);
    hurray_net_client_destroy(&cl);
    return hurray_debug_live_objects() == 0 ? 0 : 1;
}

/* ------------------------------------------------------------ metadata */

/* Opens FILE, reads every KV value in full (numeric and bool arrays copied into an
 * array of the caller's, every string and byte element fetched) and every tensor
 * name, then prints what it read, like every language's `metadata` command (the
 * probe of `cargo xtask amplification`). */
static int metadata(const char *path) {
    HurrayFileReader *r = NULL;
    if (hurray_file_reader_open(path, &r) != HURRAY_OK) die("%s: %s", path, hurray_last_error_message());
    uint64_t nkv = 0, elements = 0, bytes = 0, nt = 0, name_bytes = 0;
    hurray_file_reader_kv_count(r, &nkv);
    for (uint64_t i = 0; i < nkv; i++) {
        const char *key = NULL;
        uint64_t len = 0;
        HurrayKvValue v;
        if (hurray_file_reader_kv_key(r, i, &key, &len) != HURRAY_OK ||
            hurray_file_reader_kv_value(r, i, &v) != HURRAY_OK)
            die("%s: %s", path, hurray_last_error_message());
        if (v.type_tag != HURRAY_KV_TYPE_ARRAY) {
            elements++;
            if (v.type_tag == HURRAY_KV_TYPE_STRING || v.type_tag == HURRAY_KV_TYPE_BYTES) bytes += v.len;
            continue;
        }
        uint64_t n = v.len;
        uint8_t et = v.element_type;
        elements += n;
        HurrayStatus st = HURRAY_OK;
        if (et == HURRAY_KV_TYPE_STRING || et == HURRAY_KV_TYPE_BYTES) {
            for (uint64_t k = 0; k < n && st == HURRAY_OK; k++) {
                HurrayKvValue e;
                st = hurray_file_reader_kv_array_element(r, i, k, &e);
                bytes += e.len;
            }
        } else {
            /* Copied into an array of this program's (an aligned native window). */
            uint64_t width = et == HURRAY_KV_TYPE_BOOL ? 1 : 8;
            void *x = xcalloc(n ? n : 1, 8);
            st = hurray_file_reader_kv_array_window(r, i, 0, n, n ? x : NULL, n * width);
            free(x);
        }
        if (st != HURRAY_OK) die("%s: %s", path, hurray_last_error_message());
    }
    hurray_file_reader_tensor_count(r, &nt);
    for (uint64_t i = 0; i < nt; i++) {
        const char *name = NULL;
        uint64_t len = 0;
        if (hurray_file_reader_tensor_name(r, i, &name, &len) != HURRAY_OK) die("%s: %s", path, hurray_last_error_message());
        name_bytes += len;
    }
    printf("kv_entries\t%" PRIu64 "\nkv_elements\t%" PRIu64 "\nkv_value_bytes\t%" PRIu64 "\n", nkv, elements, bytes);
    printf("tensors\t%" PRIu64 "\nname_bytes\t%" PRIu64 "\n", nt, name_bytes);
    hurray_file_reader_destroy(&r);
    return hurray_debug_live_objects() == 0 ? 0 : 1;
}

/* The `names` command: every element-type and layout tag (0..255) through hurray_type_name and
 * hurray_layout_name, one "type|layout<TAB>0x2a<TAB>NAME" line each (cargo xtask
 * matrix compares these lines across languages). */
static int tag_names(void) {
    for (int t = 0; t < 256; t++) printf("type\t0x%02x\t%s\n", t, hurray_type_name((uint8_t)t));
    for (int t = 0; t < 256; t++) printf("layout\t0x%02x\t%s\n", t, hurray_layout_name((uint8_t)t));
    return 0;
}

int main(int argc, char **argv) {
    if (hurray_c_abi_version() != HURRAY_C_ABI_VERSION) die("library ABI %u, header %u", hurray_c_abi_version(), HURRAY_C_ABI_VERSION);
    if (argc == 4 && !strcmp(argv[1], "produce")) {
        uint32_t nc = 0, failed = 0;
        Case *cases = parse(argv[2], &nc);
        mkdir(argv[3], 0777);
        for (uint32_t i = 0; i < nc; i++)
            if (produce_case(&cases[i], argv[3]) != 0) {
                fprintf(stderr, "c producer: case %s: %s\n", cases[i].name, err);
                failed++;
            }
        if (hurray_debug_live_objects() != 0) {
            fprintf(stderr, "c producer: %" PRId64 " live library objects at the end\n",
                    (int64_t)hurray_debug_live_objects());
            failed++;
        }
        return failed ? 1 : 0;
    }
    if (argc >= 3 && !strcmp(argv[1], "consume")) {
        uint32_t nc = 0;
        Case *cases = parse(argv[2], &nc);
        consume(cases, nc, argv + 3, argc - 3);
        return 0;
    }
    if (argc == 3 && !strcmp(argv[1], "views")) return views(argv[2]);
    if (argc == 3 && !strcmp(argv[1], "hostile")) return hostile(argv[2]);
    if (argc == 3 && !strcmp(argv[1], "metadata")) return metadata(argv[2]);
    if (argc == 2 && !strcmp(argv[1], "names")) return tag_names();
    if (argc == 5 && !strcmp(argv[1], "net-get")) return net_cases(0, argv[2], argv[3], argv[4]);
    if (argc == 5 && !strcmp(argv[1], "net-put")) return net_cases(1, argv[2], argv[3], argv[4]);
    if (argc == 4 && !strcmp(argv[1], "net-views")) return net_views(argv[2], argv[3]);
    if ((argc == 4 || argc == 5) && !strcmp(argv[1], "net-bench"))
        return net_bench(argv[2], argv[3], argc == 5 ? atoi(argv[4]) : 3);
    fprintf(stderr,
            "usage: matrix produce CASES OUT | consume CASES DIR... | views FILE | hostile DIR | metadata FILE | names | "
            "net-get ADDR CASES OUT | net-put ADDR CASES DIR | net-views ADDR FILE | net-bench ADDR KEY [N]\n");
    return 2;
}
