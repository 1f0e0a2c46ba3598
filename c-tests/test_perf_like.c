/*
 * test_perf_like.c : a client driving the C API as perf's cs-etm-decoder.c
 * does: a frame-formatted decode tree, a trace-ID memory access callback
 * over the whole address space, a generic element callback that answers
 * WAIT every N elements, and the DATA / FLUSH / EOT loop of
 * cs_etm_decoder__process_data_block().
 *
 * The trace decoders are custom decoders written here (no built-in
 * protocol is needed): for each trace byte b they read 4 bytes of "memory"
 * at 0x1000 + b through the library and output three CUSTOM elements
 * (st_addr = b, en_addr = the memory word, cycle_count = 0..2). Like
 * OpenCSD's decoders they keep undelivered elements when the client says
 * WAIT and deliver them on FLUSH. The test checks that every element
 * arrives once, in order, for every WAIT period.
 */
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include "opencsd/c_api/opencsd_c_api.h"
#include "check.h"

/* ------------------------------------------------------------------ */
/* the WAIT-aware custom decoder */

#define ELEMS_PER_BYTE 3
#define MAX_PENDING 16

typedef struct {
    ocsd_extern_dcd_cb_fns cb;
    uint8_t cs_id;
    ocsd_generic_trace_elem pending[MAX_PENDING];
    ocsd_trc_index_t pending_idx[MAX_PENDING];
    int n_pending, next_pending;
    int eot_sent;
} wait_dcd_t;

static char s_dcd_name[] = "wait_dcd";

/* deliver queued elements; WAIT if the client asked to wait */
static ocsd_datapath_resp_t deliver(wait_dcd_t *d)
{
    ocsd_datapath_resp_t resp = OCSD_RESP_CONT;
    while (d->next_pending < d->n_pending) {
        int i = d->next_pending++;
        resp = d->cb.fn_gen_elem_out(d->cb.lib_context, d->pending_idx[i], d->cs_id, &d->pending[i]);
        if (!OCSD_DATA_RESP_IS_CONT(resp))
            break;
    }
    if (d->next_pending == d->n_pending)
        d->n_pending = d->next_pending = 0;
    return resp;
}

static void queue_elem(wait_dcd_t *d, ocsd_trc_index_t idx, const ocsd_generic_trace_elem *e)
{
    d->pending_idx[d->n_pending] = idx;
    d->pending[d->n_pending++] = *e;
}

static ocsd_datapath_resp_t wd_data_in(const void *h, const ocsd_datapath_op_t op, const ocsd_trc_index_t index,
                                       const uint32_t size, const uint8_t *data, uint32_t *used)
{
    wait_dcd_t *d = (wait_dcd_t *)h;
    ocsd_datapath_resp_t resp = OCSD_RESP_CONT;
    uint32_t i;
    int k;

    switch (op) {
    case OCSD_OP_DATA:
        *used = 0;
        if (d->n_pending) {       /* still owe elements: the client must flush first */
            resp = deliver(d);
            if (!OCSD_DATA_RESP_IS_CONT(resp) || d->n_pending)
                return OCSD_DATA_RESP_IS_CONT(resp) ? OCSD_RESP_WAIT : resp;
        }
        for (i = 0; i < size; i++) {
            uint8_t word[4] = {0};
            uint32_t n = 4;
            ocsd_err_t err = d->cb.fn_memory_access(d->cb.lib_context, 0x1000 + data[i], d->cs_id, OCSD_MEM_SPACE_ANY, &n, word);
            if (err != OCSD_OK || n != 4)
                return OCSD_RESP_FATAL_INVALID_DATA;
            for (k = 0; k < ELEMS_PER_BYTE; k++) {
                ocsd_generic_trace_elem e;
                memset(&e, 0, sizeof(e));
                ocsd_gen_elem_init(&e, OCSD_GEN_TRC_ELEM_CUSTOM);
                e.st_addr = data[i];
                e.en_addr = (uint32_t)word[0] | ((uint32_t)word[1] << 8) | ((uint32_t)word[2] << 16) | ((uint32_t)word[3] << 24);
                e.cycle_count = (uint32_t)k;
                queue_elem(d, index + i, &e);
            }
            *used = i + 1;
            resp = deliver(d);
            if (!OCSD_DATA_RESP_IS_CONT(resp))
                return resp;
        }
        return resp;

    case OCSD_OP_FLUSH:
        resp = deliver(d);
        return resp;

    case OCSD_OP_EOT:
        if (d->n_pending) {
            resp = deliver(d);
            if (!OCSD_DATA_RESP_IS_CONT(resp))
                return resp;
        }
        if (!d->eot_sent) {
            ocsd_generic_trace_elem e;
            memset(&e, 0, sizeof(e));
            ocsd_gen_elem_init(&e, OCSD_GEN_TRC_ELEM_EO_TRACE);
            d->eot_sent = 1;
            queue_elem(d, 0, &e);
            resp = deliver(d);
        }
        return resp;

    case OCSD_OP_RESET:
        d->n_pending = d->next_pending = 0;
        d->eot_sent = 0;
        return OCSD_RESP_CONT;
    }
    return OCSD_RESP_FATAL_INVALID_OP;
}

static void wd_update(const void *h, const int flags) { (void)h; (void)flags; }

static ocsd_err_t wd_create(const int flags, const void *cfg, const ocsd_extern_dcd_cb_fns *cb, ocsd_extern_dcd_inst_t *inst)
{
    wait_dcd_t *d = calloc(1, sizeof(*d));
    (void)flags;
    if (!d)
        return 2;
    d->cb = *cb;
    d->cs_id = *(const uint8_t *)cfg;
    inst->fn_data_in = wd_data_in;
    inst->fn_update_pkt_mon = wd_update;
    inst->decoder_handle = d;
    inst->p_decoder_name = s_dcd_name;
    inst->cs_id = d->cs_id;
    return OCSD_OK;
}

static ocsd_err_t wd_destroy(const void *h) { free((void *)h); return OCSD_OK; }

static ocsd_err_t wd_csid(const void *cfg, unsigned char *id) { *id = *(const uint8_t *)cfg; return OCSD_OK; }

/* ------------------------------------------------------------------ */
/* the perf-like client */

#define NUM_IDS 2
static const uint8_t s_ids[NUM_IDS] = { 0x10, 0x23 };
#define BYTES_PER_ID 700

typedef struct {
    unsigned wait_every;
    unsigned calls;
    unsigned count[NUM_IDS];      /* elements seen per ID */
    unsigned eot[NUM_IDS];
    unsigned errors;
    unsigned mem_reads;
    const uint8_t *stream[NUM_IDS]; /* expected byte streams */
} client_t;

static int id_slot(uint8_t id)
{
    int i;
    for (i = 0; i < NUM_IDS; i++)
        if (s_ids[i] == id)
            return i;
    return -1;
}

static uint32_t mem_word(ocsd_vaddr_t a) { return (uint32_t)(a * 2654435761u); }

static uint32_t mem_access(const void *ctx, const ocsd_vaddr_t address, const ocsd_mem_space_acc_t mem_space,
                           const uint8_t trace_chan_id, const uint32_t req_size, uint8_t *buffer)
{
    client_t *c = (client_t *)ctx;
    uint32_t w = mem_word(address);
    (void)mem_space;
    c->mem_reads++;
    if (id_slot(trace_chan_id) < 0 || req_size < 4)
        return 0;
    memcpy(buffer, &w, 4); /* little-endian host */
    return 4;
}

static ocsd_datapath_resp_t elem_in(const void *ctx, const ocsd_trc_index_t index_sop, const uint8_t trc_chan_id,
                                    const ocsd_generic_trace_elem *elem)
{
    client_t *c = (client_t *)ctx;
    int s = id_slot(trc_chan_id);
    (void)index_sop;
    if (s < 0) {
        c->errors++;
        return OCSD_RESP_FATAL_INVALID_DATA;
    }
    if (elem->elem_type == OCSD_GEN_TRC_ELEM_EO_TRACE) {
        c->eot[s]++;
    } else {
        unsigned n = c->count[s];
        uint8_t b = c->stream[s][n / ELEMS_PER_BYTE];
        if (elem->elem_type != OCSD_GEN_TRC_ELEM_CUSTOM || elem->st_addr != b ||
            elem->en_addr != mem_word(0x1000 + b) || elem->cycle_count != n % ELEMS_PER_BYTE) {
            if (c->errors++ < 5)
                fprintf(stderr, "ID %02x elem %u: got st=%llx cc=%u, want st=%x cc=%u\n", trc_chan_id, n,
                        (unsigned long long)elem->st_addr, elem->cycle_count, b, n % ELEMS_PER_BYTE);
        }
        c->count[s]++;
    }
    c->calls++;
    return (c->calls % c->wait_every) == 0 ? OCSD_RESP_WAIT : OCSD_RESP_CONT;
}

/* perf's decoder state and cs_etm_decoder__process_data_block() */
typedef struct {
    dcd_tree_handle_t tree;
    ocsd_datapath_resp_t prev_return;
} decoder_t;

static int process_data_block(decoder_t *d, uint64_t indx, const uint8_t *buf, size_t len, size_t *consumed)
{
    int ret = 0;
    ocsd_datapath_resp_t cur = OCSD_RESP_CONT;
    ocsd_datapath_resp_t prev_return = d->prev_return;
    size_t processed = 0;
    uint32_t count;

    while (processed < len) {
        if (OCSD_DATA_RESP_IS_WAIT(prev_return)) {
            cur = ocsd_dt_process_data(d->tree, OCSD_OP_FLUSH, 0, 0, NULL, NULL);
        } else if (OCSD_DATA_RESP_IS_CONT(prev_return)) {
            cur = ocsd_dt_process_data(d->tree, OCSD_OP_DATA, (ocsd_trc_index_t)(indx + processed),
                                       (uint32_t)(len - processed), &buf[processed], &count);
            processed += count;
        } else {
            ret = -1;
            break;
        }
        /* return to the caller to empty its packet queue; flush next time */
        if (OCSD_DATA_RESP_IS_WAIT(cur))
            break;
        prev_return = cur;
    }
    d->prev_return = cur;
    *consumed = processed;
    return ret;
}

/* CoreSight frames: byte 0 selects the ID, then 14 data bytes (even
   positions carry bit 0 in the flag byte 15) */
static size_t make_frames(uint8_t *out, const uint8_t *streams[NUM_IDS], size_t per_id)
{
    size_t pos[NUM_IDS] = {0};
    size_t o = 0;
    int s = 0;
    while (pos[0] < per_id || pos[1] < per_id) {
        uint8_t *f = out + o;
        uint8_t flags = 0;
        int p;
        if (pos[s] >= per_id)
            s ^= 1;
        memset(f, 0, 16);
        f[0] = (uint8_t)((s_ids[s] << 1) | 1); /* ID change, effective immediately (flag bit 0 = 0) */
        for (p = 1; p < 15; p++) {
            uint8_t b = pos[s] < per_id ? streams[s][pos[s]++] : 0;
            if (p & 1) {
                f[p] = b;
            } else {
                f[p] = b & 0xFE;
                flags |= (uint8_t)((b & 1) << (p / 2));
            }
        }
        f[15] = flags;
        o += 16;
        s ^= 1;
    }
    return o;
}

static void run(unsigned wait_every, size_t block)
{
    static uint8_t streams[NUM_IDS][BYTES_PER_ID + 14];
    static uint8_t trace[2 * (BYTES_PER_ID / 14 + 2) * 16];
    const uint8_t *sp[NUM_IDS];
    client_t c;
    decoder_t d;
    size_t len, off = 0, per_id;
    int i, guard = 0;
    unsigned char id;
    ocsd_datapath_resp_t resp;

    /* streams whose length is a whole number of frames' data */
    per_id = (BYTES_PER_ID / 14) * 14;
    for (i = 0; i < (int)per_id; i++) {
        streams[0][i] = (uint8_t)(i * 7 + 3);
        streams[1][i] = (uint8_t)(255 - i);
    }
    sp[0] = streams[0];
    sp[1] = streams[1];
    len = make_frames(trace, sp, per_id);

    memset(&c, 0, sizeof(c));
    c.wait_every = wait_every;
    c.stream[0] = streams[0];
    c.stream[1] = streams[1];

    d.tree = ocsd_create_dcd_tree(OCSD_TRC_SRC_FRAME_FORMATTED, OCSD_DFRMTR_FRAME_MEM_ALIGN);
    d.prev_return = OCSD_RESP_CONT;
    CHECK(d.tree != C_API_INVALID_TREE_HANDLE);
    for (i = 0; i < NUM_IDS; i++) {
        CHECK_EQ(ocsd_dt_create_decoder(d.tree, "PERF_WAIT_DCD", OCSD_CREATE_FLG_FULL_DECODER, &s_ids[i], &id), OCSD_OK);
        CHECK_EQ(id, s_ids[i]);
    }
    CHECK_EQ(ocsd_dt_add_callback_trcid_mem_acc(d.tree, 0x0L, ~(0x0ULL), OCSD_MEM_SPACE_ANY, mem_access, &c), OCSD_OK);
    CHECK_EQ(ocsd_dt_set_gen_elem_outfn(d.tree, elem_in, &c), OCSD_OK);

    /* the perf loop: data in blocks, return on WAIT, come back */
    while (off < len && guard++ < 1000000) {
        size_t chunk = len - off < block ? len - off : block;
        size_t done = 0;
        while (done < chunk && guard++ < 1000000) {
            size_t consumed = 0;
            if (process_data_block(&d, off + done, trace + off + done, chunk - done, &consumed) != 0) {
                CHECK(!"fatal response");
                goto out;
            }
            done += consumed;
        }
        off += chunk;
    }
    /* drain, then end of trace (flushing while the client waits) */
    while (OCSD_DATA_RESP_IS_WAIT(d.prev_return))
        d.prev_return = ocsd_dt_process_data(d.tree, OCSD_OP_FLUSH, 0, 0, NULL, NULL);
    resp = ocsd_dt_process_data(d.tree, OCSD_OP_EOT, 0, 0, NULL, NULL);
    while (OCSD_DATA_RESP_IS_WAIT(resp) && guard++ < 1000000) {
        resp = ocsd_dt_process_data(d.tree, OCSD_OP_FLUSH, 0, 0, NULL, NULL);
        if (OCSD_DATA_RESP_IS_CONT(resp))
            resp = ocsd_dt_process_data(d.tree, OCSD_OP_EOT, 0, 0, NULL, NULL);
    }
    CHECK(OCSD_DATA_RESP_IS_CONT(resp));
out:
    for (i = 0; i < NUM_IDS; i++) {
        CHECK_EQ(c.count[i], per_id * ELEMS_PER_BYTE);
        CHECK_EQ(c.eot[i], 1);
    }
    CHECK_EQ(c.errors, 0);
    CHECK_EQ(c.mem_reads, NUM_IDS * per_id);
    printf("wait every %4u, blocks of %4zu: %u elements, %u memory reads\n", wait_every, block, c.calls, c.mem_reads);

    /* a reset makes the decoders ready for a new session */
    CHECK(OCSD_DATA_RESP_IS_CONT(ocsd_dt_process_data(d.tree, OCSD_OP_RESET, 0, 0, NULL, NULL)));
    ocsd_destroy_dcd_tree(d.tree);
}

int main(void)
{
    ocsd_extern_dcd_fact_t fact = { wd_create, wd_destroy, wd_csid, NULL, 0 };
    static const unsigned waits[] = { 1, 2, 3, 5, 16, 1000000 };
    static const size_t blocks[] = { 16, 112, 4096 }; /* memory-aligned frames come in 16-byte multiples */
    size_t w, b;

    CHECK_EQ(ocsd_register_custom_decoder("PERF_WAIT_DCD", &fact), OCSD_OK);
    for (w = 0; w < sizeof(waits) / sizeof(waits[0]); w++)
        for (b = 0; b < sizeof(blocks) / sizeof(blocks[0]); b++)
            run(waits[w], blocks[b]);
    CHECK_EQ(ocsd_deregister_decoders(), OCSD_OK);
    return CHECKS_DONE("test_perf_like");
}
