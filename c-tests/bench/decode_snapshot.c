/*
 * decode_snapshot.c : decode a trace snapshot through OpenCSD's public C API
 * and count the generic trace elements, for throughput measurements.
 *
 * Written only against the public C API headers, so the same source builds
 * against this project's include/ and against an installed OpenCSD
 * (e.g. Debian's libopencsd-dev), and one binary runs on either library.
 *
 *   trc_pkt_lister -ss_dir SNAPSHOT_DIR -decode -print_plan plan.txt
 *   decode_snapshot [options] plan.txt
 *
 * The plan (written by the lister from the tree it builds, see
 * src/snapshot/plan.rs) names the trace buffer and its format, one decoder
 * per trace source with its config struct's field values, and the memory
 * regions to map. The client creates the decode tree (frame formatted or
 * single source), the decoders (full decode unless -pkt), the memory, and
 * an element callback that counts elements; it feeds the buffer through
 * ocsd_dt_process_data (FLUSH while the tree answers WAIT), ends with EOT
 * and prints the counts.
 *
 * Memory (-mem):
 *   file      file / file-region memory accessors (default)
 *   callback  perf's way: one callback with trace ID over the whole
 *             address space (ocsd_dt_add_callback_trcid_mem_acc), answering
 *             from the plan's regions (read into memory beforehand); the
 *             number of calls is printed
 *
 * Options:
 *   -print      print each element (ocsd_gen_elem_str) as trc_pkt_lister does
 *   -print-mem  print each memory callback (address, space, trace ID,
 *               bytes asked and given), in order with the elements
 *   -pkt        packet processing only: count packets, not elements
 *   -mem M      memory as above
 *   -cache P,N  ocsd_dt_set_mem_acc_cacheing(1, P, N); -nocache: (0, 0, 0)
 *               (only where the library has the function: OpenCSD >= 1.5.3)
 *   -chunk N    feed at most N bytes per ocsd_dt_process_data call
 *               (default: the whole buffer in one call; frame-formatted
 *               buffers need a multiple of 16)
 *   -repeat N   decode the buffer N times, each with a new decode tree
 *   -wait N     the element callback answers WAIT every N elements
 *   -time       print the decode time and throughput (stderr)
 *   -per-id     print the element count of each trace ID
 *
 * Standard output ends with "memory callbacks: N" (callback memory) and
 * "elements: N" (or "packets: N"), the counts of the last repetition.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <dlfcn.h>

#include "opencsd/c_api/opencsd_c_api.h"

#define MAX_DECODERS 128
#define MAX_MEMS 256
#define MAX_LINE 8192

/* ------------------------------------------------------------------ */
/* the plan */

typedef union {
    ocsd_etmv4_cfg etmv4;
    ocsd_ete_cfg ete;
    ocsd_etmv3_cfg etmv3;
    ocsd_ptm_cfg ptm;
    ocsd_stm_cfg stm;
#ifdef OCSD_BUILTIN_DCD_ITM
    ocsd_itm_cfg itm;
#endif
} any_cfg;

typedef struct {
    char name[32];
    char source[64];
    any_cfg cfg;
} plan_decoder;

typedef struct {
    ocsd_vaddr_t address;
    size_t offset;
    size_t length;
    ocsd_mem_space_acc_t space;
    char *path;
    uint8_t *data; /* callback memory: the region's bytes */
    size_t size;
} plan_mem;

typedef struct {
    char format[32];
    char *buffer_path;
    plan_decoder dcd[MAX_DECODERS];
    int n_dcd;
    plan_mem mem[MAX_MEMS];
    int n_mem;
} plan_t;

/* uint32_t config fields by name */
typedef struct {
    const char *name;
    size_t off;
} field_t;

#define F(type, member) { #member, offsetof(type, member) }
static const field_t etmv4_fields[] = {
    F(ocsd_etmv4_cfg, reg_idr0), F(ocsd_etmv4_cfg, reg_idr1), F(ocsd_etmv4_cfg, reg_idr2),
    F(ocsd_etmv4_cfg, reg_idr8), F(ocsd_etmv4_cfg, reg_idr9), F(ocsd_etmv4_cfg, reg_idr10),
    F(ocsd_etmv4_cfg, reg_idr11), F(ocsd_etmv4_cfg, reg_idr12), F(ocsd_etmv4_cfg, reg_idr13),
    F(ocsd_etmv4_cfg, reg_configr), F(ocsd_etmv4_cfg, reg_traceidr), { NULL, 0 }
};
static const field_t ete_fields[] = {
    F(ocsd_ete_cfg, reg_idr0), F(ocsd_ete_cfg, reg_idr1), F(ocsd_ete_cfg, reg_idr2),
    F(ocsd_ete_cfg, reg_idr8), F(ocsd_ete_cfg, reg_devarch), F(ocsd_ete_cfg, reg_configr),
    F(ocsd_ete_cfg, reg_traceidr), { NULL, 0 }
};
static const field_t etmv3_fields[] = {
    F(ocsd_etmv3_cfg, reg_idr), F(ocsd_etmv3_cfg, reg_ctrl), F(ocsd_etmv3_cfg, reg_ccer),
    F(ocsd_etmv3_cfg, reg_trc_id), { NULL, 0 }
};
static const field_t ptm_fields[] = {
    F(ocsd_ptm_cfg, reg_idr), F(ocsd_ptm_cfg, reg_ctrl), F(ocsd_ptm_cfg, reg_ccer),
    F(ocsd_ptm_cfg, reg_trc_id), { NULL, 0 }
};
static const field_t stm_fields[] = {
    F(ocsd_stm_cfg, reg_tcsr), F(ocsd_stm_cfg, reg_feat3r), F(ocsd_stm_cfg, reg_devid),
    F(ocsd_stm_cfg, reg_feat1r), F(ocsd_stm_cfg, reg_hwev_mast), F(ocsd_stm_cfg, hw_event), { NULL, 0 }
};
#ifdef OCSD_BUILTIN_DCD_ITM
static const field_t itm_fields[] = { F(ocsd_itm_cfg, reg_tcr), { NULL, 0 } };
#endif
#undef F

typedef struct {
    const char *dcd_name;
    const field_t *fields;
    ptrdiff_t arch_off;  /* -1: no arch_ver / core_prof */
    ptrdiff_t prof_off;
} proto_t;

static const proto_t protos[] = {
    { OCSD_BUILTIN_DCD_ETMV4I, etmv4_fields, offsetof(ocsd_etmv4_cfg, arch_ver), offsetof(ocsd_etmv4_cfg, core_prof) },
    { OCSD_BUILTIN_DCD_ETE, ete_fields, offsetof(ocsd_ete_cfg, arch_ver), offsetof(ocsd_ete_cfg, core_prof) },
    { OCSD_BUILTIN_DCD_ETMV3, etmv3_fields, offsetof(ocsd_etmv3_cfg, arch_ver), offsetof(ocsd_etmv3_cfg, core_prof) },
    { OCSD_BUILTIN_DCD_PTM, ptm_fields, offsetof(ocsd_ptm_cfg, arch_ver), offsetof(ocsd_ptm_cfg, core_prof) },
    { OCSD_BUILTIN_DCD_STM, stm_fields, -1, -1 },
#ifdef OCSD_BUILTIN_DCD_ITM
    { OCSD_BUILTIN_DCD_ITM, itm_fields, -1, -1 },
#endif
};

static const proto_t *find_proto(const char *name)
{
    size_t i;
    for (i = 0; i < sizeof(protos) / sizeof(protos[0]); i++)
        if (strcmp(protos[i].dcd_name, name) == 0)
            return &protos[i];
    return NULL;
}

static char *dup_str(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d)
        memcpy(d, s, n);
    return d;
}

static int plan_error(const char *file, int line, const char *msg, const char *what)
{
    fprintf(stderr, "%s:%d: %s%s%s\n", file, line, msg, what ? ": " : "", what ? what : "");
    return 0;
}

/* the text after the first n space-separated fields of s (n >= 1) */
static char *after_fields(char *s, int n)
{
    while (n-- > 0) {
        s = strchr(s, ' ');
        if (!s)
            return NULL;
        s++;
    }
    return s;
}

static int parse_decoder(plan_decoder *d, char *rest, const char *file, int ln)
{
    char *tok, *save = NULL;
    const proto_t *p;
    unsigned char *base = (unsigned char *)&d->cfg;

    memset(d, 0, sizeof(*d));
    tok = strtok_r(rest, " ", &save);
    if (!tok || strlen(tok) >= sizeof(d->name))
        return plan_error(file, ln, "decoder name expected", NULL);
    strcpy(d->name, tok);
    p = find_proto(d->name);
    if (!p)
        return plan_error(file, ln, "decoder not supported by these headers", d->name);
    tok = strtok_r(NULL, " ", &save);
    if (!tok)
        return plan_error(file, ln, "source name expected", NULL);
    snprintf(d->source, sizeof(d->source), "%s", tok);
    while ((tok = strtok_r(NULL, " ", &save)) != NULL) {
        char *eq = strchr(tok, '=');
        const field_t *f;
        if (!eq)
            return plan_error(file, ln, "FIELD=VALUE expected", tok);
        *eq++ = '\0';
        if (p->arch_off >= 0 && strcmp(tok, "arch_ver") == 0) {
            *(ocsd_arch_version_t *)(base + p->arch_off) = (ocsd_arch_version_t)strtoul(eq, NULL, 0);
            continue;
        }
        if (p->prof_off >= 0 && strcmp(tok, "core_prof") == 0) {
            *(ocsd_core_profile_t *)(base + p->prof_off) = (ocsd_core_profile_t)strtoul(eq, NULL, 0);
            continue;
        }
        for (f = p->fields; f->name; f++)
            if (strcmp(f->name, tok) == 0)
                break;
        if (!f->name)
            return plan_error(file, ln, "unknown config field", tok);
        *(uint32_t *)(base + f->off) = (uint32_t)strtoul(eq, NULL, 0);
    }
    return 1;
}

static int read_plan(const char *file, plan_t *plan)
{
    FILE *f = fopen(file, "r");
    char line[MAX_LINE];
    int ln = 0, ok = 1;

    memset(plan, 0, sizeof(*plan));
    if (!f) {
        fprintf(stderr, "cannot open plan %s: %s\n", file, strerror(errno));
        return 0;
    }
    while (ok && fgets(line, sizeof(line), f)) {
        size_t n = strlen(line);
        ln++;
        while (n && (line[n - 1] == '\n' || line[n - 1] == '\r'))
            line[--n] = '\0';
        if (n == 0 || line[0] == '#')
            continue;
        if (strncmp(line, "buffer ", 7) == 0) {
            char *path = after_fields(line, 2);
            if (sscanf(line + 7, "%31s", plan->format) != 1 || !path || !*path)
                ok = plan_error(file, ln, "buffer FORMAT PATH expected", NULL);
            else
                plan->buffer_path = dup_str(path);
        } else if (strncmp(line, "decoder ", 8) == 0) {
            if (plan->n_dcd == MAX_DECODERS)
                ok = plan_error(file, ln, "too many decoders", NULL);
            else if ((ok = parse_decoder(&plan->dcd[plan->n_dcd], line + 8, file, ln)))
                plan->n_dcd++;
        } else if (strncmp(line, "mem ", 4) == 0) {
            plan_mem *m = &plan->mem[plan->n_mem];
            unsigned long long a, o, l;
            unsigned sp;
            char *path = after_fields(line, 5);
            if (plan->n_mem == MAX_MEMS)
                ok = plan_error(file, ln, "too many memory dumps", NULL);
            else if (sscanf(line + 4, "%llx %llx %llx %x", &a, &o, &l, &sp) != 4 || !path || !*path)
                ok = plan_error(file, ln, "mem ADDRESS OFFSET LENGTH SPACE PATH expected", NULL);
            else {
                m->address = (ocsd_vaddr_t)a;
                m->offset = (size_t)o;
                m->length = (size_t)l;
                m->space = (ocsd_mem_space_acc_t)sp;
                m->path = dup_str(path);
                plan->n_mem++;
            }
        } else {
            ok = plan_error(file, ln, "unknown record", line);
        }
    }
    fclose(f);
    if (ok && !plan->buffer_path)
        ok = plan_error(file, ln, "no buffer line", NULL);
    if (ok && plan->n_dcd == 0)
        ok = plan_error(file, ln, "no decoder line", NULL);
    return ok;
}

static void free_plan(plan_t *plan)
{
    int i;
    free(plan->buffer_path);
    for (i = 0; i < plan->n_mem; i++) {
        free(plan->mem[i].path);
        free(plan->mem[i].data);
    }
}

static uint8_t *read_file(const char *path, size_t *size);

/* callback memory: each region's bytes, read once */
static int load_regions(plan_t *plan)
{
    int i;
    for (i = 0; i < plan->n_mem; i++) {
        plan_mem *m = &plan->mem[i];
        size_t size = 0, n;
        uint8_t *all = read_file(m->path, &size);
        if (!all)
            return 0;
        if (m->offset >= size) {
            fprintf(stderr, "memory dump %s: no data at offset 0x%zx\n", m->path, m->offset);
            free(all);
            return 0;
        }
        n = size - m->offset;
        if (m->length && m->length < n)
            n = m->length;
        m->data = malloc(n);
        if (!m->data) {
            free(all);
            return 0;
        }
        memcpy(m->data, all + m->offset, n);
        m->size = n;
        free(all);
    }
    return 1;
}

typedef struct {
    const plan_t *plan;
    uint64_t calls;
    int print;
} cb_mem_t;

#ifdef DECODE_SNAPSHOT_NO_MAIN
/* For the clients that include this file. */
/* What a client needs from a plan file: the plan with its memory regions
 * loaded, the trace buffer (size in *size; free it), whether it is
 * single-source and the deformatter flags. NULL when any part fails. */
static uint8_t *load_plan_input(const char *plan_file, plan_t *plan, size_t *size, int *single, uint32_t *dfmt)
{
    uint8_t *buf;
    if (!plan_file || !read_plan(plan_file, plan) || !load_regions(plan))
        return NULL;
    buf = read_file(plan->buffer_path, size);
    if (!buf)
        return NULL;
    *single = strcmp(plan->format, "source_data") == 0;
    *dfmt = strcmp(plan->format, "dstream_coresight") == 0 ? OCSD_DFRMTR_HAS_FSYNCS : OCSD_DFRMTR_FRAME_MEM_ALIGN;
    return buf;
}
#endif

/* Copy up to req bytes at address from the first loaded region (see
 * load_regions) of a matching memory space that holds it; bytes copied. */
static uint32_t plan_read(const plan_t *plan, ocsd_vaddr_t address, ocsd_mem_space_acc_t mem_space, uint32_t req,
                          uint8_t *buf)
{
    int i;
    for (i = 0; i < plan->n_mem; i++) {
        const plan_mem *m = &plan->mem[i];
        if ((m->space & mem_space) && address >= m->address && address - m->address < m->size) {
            size_t n = m->size - (size_t)(address - m->address);
            if (n > req)
                n = req;
            memcpy(buf, m->data + (address - m->address), n);
            return (uint32_t)n;
        }
    }
    return 0;
}

/* perf's memory callback (cs_etm__mem_access) in spirit: find the image
 * mapped at the address and copy from it */
static uint32_t mem_cb(const void *ctx, const ocsd_vaddr_t address, const ocsd_mem_space_acc_t mem_space,
                       const uint8_t trc_id, const uint32_t req, uint8_t *buf)
{
    cb_mem_t *c = (cb_mem_t *)(uintptr_t)ctx;
    uint32_t got;
    c->calls++;
    got = plan_read(c->plan, address, mem_space, req, buf);
    if (c->print)
        printf("MEM 0x%" PRIx64 " space %d id %x asked %" PRIu32 " got %" PRIu32 "\n", (uint64_t)address, (int)mem_space, trc_id,
               req, got);
    return got;
}

/* ------------------------------------------------------------------ */
/* decoding */

typedef struct {
    int print;
    unsigned wait_every;
    uint64_t count;
    uint64_t per_id[256];
    unsigned since_wait;
    char text[1024];
} sink_t;

static ocsd_datapath_resp_t elem_in(const void *ctx, const ocsd_trc_index_t index_sop, const uint8_t trc_chan_id,
                                    const ocsd_generic_trace_elem *elem)
{
    sink_t *s = (sink_t *)ctx;
    s->count++;
    s->per_id[trc_chan_id]++;
    if (s->print) {
        s->text[0] = '\0';
        ocsd_gen_elem_str(elem, s->text, (int)sizeof(s->text));
        printf("Idx:%" PRIu64 "; ID:%x; %s\n", (uint64_t)index_sop, trc_chan_id, s->text);
    }
    if (s->wait_every && ++s->since_wait >= s->wait_every) {
        s->since_wait = 0;
        return OCSD_RESP_WAIT;
    }
    return OCSD_RESP_CONT;
}

typedef struct {
    sink_t *sink;
    uint8_t cs_id;
} pkt_ctx_t;

static ocsd_datapath_resp_t pkt_in(const void *ctx, const ocsd_datapath_op_t op, const ocsd_trc_index_t index_sop,
                                   const void *pkt)
{
    const pkt_ctx_t *p = (const pkt_ctx_t *)ctx;
    (void)index_sop;
    (void)pkt;
    if (op == OCSD_OP_DATA) {
        p->sink->count++;
        p->sink->per_id[p->cs_id]++;
    }
    return OCSD_RESP_CONT;
}

/* Map plan lines [first, first + n) (consecutive, one file): OpenCSD keeps
 * one accessor per file, so a file's ranges go in one region call (its base
 * range, file offset 0, first). A whole file (offset 0, no length) is one
 * ocsd_dt_add_binfile_mem_acc. */
static int add_memory(dcd_tree_handle_t t, const plan_mem *first, int n)
{
    ocsd_err_t err;
    ocsd_file_mem_region_t r[MAX_MEMS];
    int i;
    if (n == 1 && first->offset == 0 && first->length == 0) {
        err = ocsd_dt_add_binfile_mem_acc(t, first->address, first->space, first->path);
    } else {
        for (i = 0; i < n; i++) {
            const plan_mem *m = &first[i];
            r[i].file_offset = m->offset;
            r[i].start_address = m->address;
            r[i].region_size = m->length;
            if (r[i].region_size == 0) {
                struct stat st;
                if (stat(m->path, &st) != 0 || (size_t)st.st_size <= m->offset) {
                    fprintf(stderr, "memory dump %s: no data at offset 0x%zx\n", m->path, m->offset);
                    return 0;
                }
                r[i].region_size = (size_t)st.st_size - m->offset;
            }
        }
        err = ocsd_dt_add_binfile_region_mem_acc(t, r, n, first->space, first->path);
    }
    if (err != OCSD_OK) {
        char msg[256];
        ocsd_err_str(err, msg, (int)sizeof(msg));
        fprintf(stderr, "memory dump %s at 0x%" PRIx64 ": %s\n", first->path, (uint64_t)first->address, msg);
        /* OpenCSD's own snapshot reader logs and goes on: so do we */
    }
    return 1;
}

typedef struct {
    int callback_mem;
    int cache_set;      /* 0: library default; 1: -cache; -1: -nocache */
    unsigned page_size;
    int nr_pages;
    cb_mem_t cb;
} mem_opts_t;

typedef ocsd_err_t (*set_cacheing_fn)(const dcd_tree_handle_t, const int, const uint16_t, const int);

static dcd_tree_handle_t build_tree(const plan_t *plan, int pkt_only, sink_t *sink, pkt_ctx_t *pkt_ctx, mem_opts_t *mo)
{
    int single = strcmp(plan->format, "source_data") == 0;
    uint32_t dfmt = strcmp(plan->format, "dstream_coresight") == 0 ? OCSD_DFRMTR_HAS_FSYNCS : OCSD_DFRMTR_FRAME_MEM_ALIGN;
    dcd_tree_handle_t t;
    int i, created = 0;

    t = ocsd_create_dcd_tree(single ? OCSD_TRC_SRC_SINGLE : OCSD_TRC_SRC_FRAME_FORMATTED, single ? 0 : dfmt);
    if (t == C_API_INVALID_TREE_HANDLE) {
        fprintf(stderr, "ocsd_create_dcd_tree failed\n");
        return t;
    }
    for (i = 0; i < plan->n_dcd; i++) {
        const plan_decoder *d = &plan->dcd[i];
        unsigned char cs_id = 0;
        ocsd_err_t err = ocsd_dt_create_decoder(t, d->name, pkt_only ? OCSD_CREATE_FLG_PACKET_PROC : OCSD_CREATE_FLG_FULL_DECODER,
                                                &d->cfg, &cs_id);
        if (err != OCSD_OK) {
            char msg[256];
            ocsd_err_str(err, msg, (int)sizeof(msg));
            fprintf(stderr, "decoder %s for %s: %s\n", d->name, d->source, msg);
            continue;
        }
        created++;
        if (pkt_only) {
            pkt_ctx[i].sink = sink;
            pkt_ctx[i].cs_id = cs_id;
            err = ocsd_dt_attach_packet_callback(t, cs_id, OCSD_C_API_CB_PKT_SINK, (void *)pkt_in, &pkt_ctx[i]);
            if (err != OCSD_OK)
                fprintf(stderr, "packet callback for %s failed (%d)\n", d->source, (int)err);
        }
        if (single)
            break;
    }
    if (!created) {
        ocsd_destroy_dcd_tree(t);
        return C_API_INVALID_TREE_HANDLE;
    }
    if (!pkt_only) {
        if (mo->callback_mem) {
            ocsd_err_t err = ocsd_dt_add_callback_trcid_mem_acc(t, 0, ~(ocsd_vaddr_t)0, OCSD_MEM_SPACE_ANY, mem_cb, &mo->cb);
            if (err != OCSD_OK) {
                fprintf(stderr, "ocsd_dt_add_callback_trcid_mem_acc failed (%d)\n", (int)err);
                ocsd_destroy_dcd_tree(t);
                return C_API_INVALID_TREE_HANDLE;
            }
        } else {
            for (i = 0; i < plan->n_mem;) {
                int n = 1;
                while (i + n < plan->n_mem && strcmp(plan->mem[i + n].path, plan->mem[i].path) == 0)
                    n++;
                if (!add_memory(t, &plan->mem[i], n)) {
                    ocsd_destroy_dcd_tree(t);
                    return C_API_INVALID_TREE_HANDLE;
                }
                i += n;
            }
        }
        if (mo->cache_set) {
            /* looked up at run time: OpenCSD before 1.5.3 lacks it */
            set_cacheing_fn f = (set_cacheing_fn)(uintptr_t)dlsym(RTLD_DEFAULT, "ocsd_dt_set_mem_acc_cacheing");
            if (!f)
                fprintf(stderr, "this library has no ocsd_dt_set_mem_acc_cacheing: default caching\n");
            else if (f(t, mo->cache_set > 0, (uint16_t)mo->page_size, mo->nr_pages) != OCSD_OK)
                fprintf(stderr, "ocsd_dt_set_mem_acc_cacheing refused the sizes\n");
        }
        ocsd_dt_set_gen_elem_outfn(t, elem_in, sink);
    }
    return t;
}

static ocsd_datapath_resp_t feed_flush(dcd_tree_handle_t t, void (*on_flush)(void *), void *arg)
{
    if (on_flush)
        on_flush(arg);
    return ocsd_dt_process_data(t, OCSD_OP_FLUSH, 0, 0, NULL, NULL);
}

/* Feed the buffer, FLUSH while the tree waits, then EOT. 0 on a fatal
 * data path response. on_flush, if given, runs before each FLUSH (a client
 * that answered WAIT learns that it is being called again). */
static int feed_hooked(dcd_tree_handle_t t, const uint8_t *buf, size_t size, size_t chunk,
                       void (*on_flush)(void *), void *arg)
{
    size_t pos = 0;
    ocsd_datapath_resp_t resp = OCSD_RESP_CONT;

    while (pos < size) {
        if (OCSD_DATA_RESP_IS_WAIT(resp)) {
            resp = feed_flush(t, on_flush, arg);
        } else {
            uint32_t used = 0;
            size_t n = size - pos;
            if (n > chunk)
                n = chunk;
            resp = ocsd_dt_process_data(t, OCSD_OP_DATA, (ocsd_trc_index_t)pos, (uint32_t)n, buf + pos, &used);
            pos += used;
        }
        if (OCSD_DATA_RESP_IS_FATAL(resp)) {
            fprintf(stderr, "fatal data path response %d at index %zu\n", (int)resp, pos);
            return 0;
        }
    }
    while (OCSD_DATA_RESP_IS_WAIT(resp) && !OCSD_DATA_RESP_IS_FATAL(resp))
        resp = feed_flush(t, on_flush, arg);
    resp = ocsd_dt_process_data(t, OCSD_OP_EOT, 0, 0, NULL, NULL);
    while (OCSD_DATA_RESP_IS_WAIT(resp))
        resp = feed_flush(t, on_flush, arg);
    if (OCSD_DATA_RESP_IS_FATAL(resp)) {
        fprintf(stderr, "fatal data path response %d at end of trace\n", (int)resp);
        return 0;
    }
    return 1;
}

static int feed(dcd_tree_handle_t t, const uint8_t *buf, size_t size, size_t chunk)
{
    return feed_hooked(t, buf, size, chunk, NULL, NULL);
}

static uint8_t *read_file(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    uint8_t *buf = NULL;
    long n;
    if (!f) {
        fprintf(stderr, "cannot open %s: %s\n", path, strerror(errno));
        return NULL;
    }
    if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0) {
        buf = malloc(n ? (size_t)n : 1);
        if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
            free(buf);
            buf = NULL;
        }
        *size = (size_t)n;
    }
    fclose(f);
    if (!buf)
        fprintf(stderr, "cannot read %s\n", path);
    return buf;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void usage(void)
{
    fprintf(stderr, "usage: decode_snapshot [-print] [-print-mem] [-pkt] [-mem file|callback] [-cache PAGE_SIZE,PAGES | -nocache] [-chunk N] [-repeat N] [-wait N] [-time] [-per-id] PLAN\n");
    exit(2);
}

/* c-tests/dropin/ reuses the plan reader above without this main() */
#ifndef DECODE_SNAPSHOT_NO_MAIN
int main(int argc, char **argv)
{
    static plan_t plan;
    static pkt_ctx_t pkt_ctx[MAX_DECODERS];
    static sink_t sink;
    static mem_opts_t mo;
    const char *plan_file = NULL;
    int pkt_only = 0, timing = 0, per_id = 0, repeat = 1, r, i, rc = 0;
    size_t chunk = (size_t)UINT32_MAX, size = 0;
    uint8_t *buf;
    double t_decode = 0;

    for (i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-print") == 0)
            sink.print = 1;
        else if (strcmp(argv[i], "-print-mem") == 0)
            mo.cb.print = 1;
        else if (strcmp(argv[i], "-pkt") == 0)
            pkt_only = 1;
        else if (strcmp(argv[i], "-time") == 0)
            timing = 1;
        else if (strcmp(argv[i], "-per-id") == 0)
            per_id = 1;
        else if (strcmp(argv[i], "-mem") == 0 && i + 1 < argc) {
            i++;
            if (strcmp(argv[i], "callback") == 0)
                mo.callback_mem = 1;
            else if (strcmp(argv[i], "file") != 0)
                usage();
        } else if (strcmp(argv[i], "-cache") == 0 && i + 1 < argc) {
            if (sscanf(argv[++i], "%u,%d", &mo.page_size, &mo.nr_pages) != 2)
                usage();
            mo.cache_set = 1;
        } else if (strcmp(argv[i], "-nocache") == 0)
            mo.cache_set = -1;
        else if (strcmp(argv[i], "-chunk") == 0 && i + 1 < argc)
            chunk = strtoul(argv[++i], NULL, 0);
        else if (strcmp(argv[i], "-repeat") == 0 && i + 1 < argc)
            repeat = atoi(argv[++i]);
        else if (strcmp(argv[i], "-wait") == 0 && i + 1 < argc)
            sink.wait_every = (unsigned)strtoul(argv[++i], NULL, 0);
        else if (argv[i][0] == '-' || plan_file)
            usage();
        else
            plan_file = argv[i];
    }
    if (!plan_file || chunk == 0 || repeat < 1)
        usage();
    if (!read_plan(plan_file, &plan))
        return 2;
    mo.cb.plan = &plan;
    if (mo.callback_mem && !pkt_only && !load_regions(&plan))
        return 2;
    buf = read_file(plan.buffer_path, &size);
    if (!buf)
        return 2;

    ocsd_def_errlog_init(OCSD_ERR_SEV_ERROR, 1);
    ocsd_def_errlog_config_output(C_API_MSGLOGOUT_FLG_STDERR, NULL);

    for (r = 0; r < repeat && rc == 0; r++) {
        dcd_tree_handle_t t;
        double t0;
        sink.count = 0;
        mo.cb.calls = 0;
        memset(sink.per_id, 0, sizeof(sink.per_id));
        t = build_tree(&plan, pkt_only, &sink, pkt_ctx, &mo);
        if (t == C_API_INVALID_TREE_HANDLE) {
            rc = 1;
            break;
        }
        t0 = now();
        if (!feed(t, buf, size, chunk))
            rc = 1;
        t_decode += now() - t0;
        ocsd_destroy_dcd_tree(t);
    }

    if (per_id)
        for (i = 0; i < 256; i++)
            if (sink.per_id[i])
                printf("id 0x%02x: %" PRIu64 "\n", i, sink.per_id[i]);
    if (timing && r > 0 && t_decode > 0) {
        double total = (double)size * r;
        fprintf(stderr, "%s %s: %d x %zu bytes in %.6f s: %.2f MB/s, %.0f %s/s\n", ocsd_get_version_str(),
                pkt_only ? "packet processing" : "full decode", r, size, t_decode, total / t_decode / 1e6,
                (double)sink.count * r / t_decode, pkt_only ? "packets" : "elements");
    }
    if (mo.callback_mem && !pkt_only)
        printf("memory callbacks: %" PRIu64 "\n", mo.cb.calls);
    printf("%s: %" PRIu64 "\n", pkt_only ? "packets" : "elements", sink.count);
    free(buf);
    free_plan(&plan);
    return rc;
}
#endif /* DECODE_SNAPSHOT_NO_MAIN */
