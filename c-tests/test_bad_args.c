/*
 * test_bad_args.c : every C API function with bad arguments (NULL / unknown /
 * destroyed handles, NULL pointers, unknown decoder names, short buffers),
 * checking OpenCSD 1.8.0's return codes; and hostile clients: calls on a
 * tree from inside its own element and memory callbacks (memory map changes
 * included, as OpenCSD allows them), non-regular files
 * as memory images (run under valgrind by run_c_tests.sh).
 */
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include "opencsd/c_api/opencsd_c_api.h"
#include "check.h"

static ocsd_datapath_resp_t elem_cb(const void *c, const ocsd_trc_index_t i, const uint8_t id, const ocsd_generic_trace_elem *e)
{ (void)c; (void)i; (void)id; (void)e; return OCSD_RESP_CONT; }
static void mon_cb(const void *c, const ocsd_datapath_op_t op, const ocsd_trc_index_t i, const void *p, const uint32_t s, const uint8_t *d)
{ (void)c; (void)op; (void)i; (void)p; (void)s; (void)d; }
static uint32_t mem_cb(const void *c, const ocsd_vaddr_t a, const ocsd_mem_space_acc_t m, const uint32_t n, uint8_t *b)
{ (void)c; (void)a; (void)m; (void)n; (void)b; return 0; }
static uint32_t mem_id_cb(const void *c, const ocsd_vaddr_t a, const ocsd_mem_space_acc_t m, const uint8_t id, const uint32_t n, uint8_t *b)
{ (void)c; (void)a; (void)m; (void)id; (void)n; (void)b; return 0; }

static void all_fns_with_handle(dcd_tree_handle_t h)
{
    uint8_t data[16] = {0};
    uint32_t n = 5;
    unsigned char id = 0;
    ocsd_decode_stats_t *stats = 0;
    ocsd_file_mem_region_t reg = { 0, 0x1000, 16 };
    uint8_t cfg[256] = {0};

    CHECK_EQ(ocsd_dt_process_data(h, OCSD_OP_DATA, 0, sizeof(data), data, &n), OCSD_RESP_FATAL_NOT_INIT);
    CHECK_EQ(ocsd_dt_process_data(h, OCSD_OP_FLUSH, 0, 0, NULL, NULL), OCSD_RESP_FATAL_NOT_INIT);
    CHECK_EQ(ocsd_dt_process_data(h, OCSD_OP_EOT, 0, 0, NULL, NULL), OCSD_RESP_FATAL_NOT_INIT);
    CHECK_EQ(ocsd_dt_set_gen_elem_outfn(h, elem_cb, NULL), OCSD_ERR_INVALID_PARAM_VAL);
    CHECK_EQ(ocsd_dt_create_decoder(h, "ETMV4I", OCSD_CREATE_FLG_FULL_DECODER, cfg, &id), OCSD_ERR_INVALID_PARAM_VAL);
    CHECK_EQ(ocsd_dt_remove_decoder(h, 0x10), OCSD_ERR_INVALID_PARAM_VAL);
    CHECK_EQ(ocsd_dt_attach_packet_callback(h, 0x10, OCSD_C_API_CB_PKT_MON, (void *)mon_cb, NULL), OCSD_ERR_INVALID_PARAM_VAL);
    CHECK_EQ(ocsd_dt_get_decode_stats(h, 0x10, &stats), OCSD_ERR_INVALID_PARAM_VAL);
    CHECK_EQ(ocsd_dt_reset_decode_stats(h, 0x10), OCSD_ERR_INVALID_PARAM_VAL);
    CHECK_EQ(ocsd_dt_add_binfile_mem_acc(h, 0x1000, OCSD_MEM_SPACE_ANY, "/bin/sh"), OCSD_ERR_INVALID_PARAM_VAL);
    CHECK_EQ(ocsd_dt_add_binfile_region_mem_acc(h, &reg, 1, OCSD_MEM_SPACE_ANY, "/bin/sh"), OCSD_ERR_INVALID_PARAM_VAL);
    CHECK_EQ(ocsd_dt_add_buffer_mem_acc(h, 0x1000, OCSD_MEM_SPACE_ANY, data, sizeof(data)), OCSD_ERR_INVALID_PARAM_VAL);
    CHECK_EQ(ocsd_dt_add_callback_mem_acc(h, 0, 0xffff, OCSD_MEM_SPACE_ANY, mem_cb, NULL), OCSD_ERR_INVALID_PARAM_VAL);
    CHECK_EQ(ocsd_dt_add_callback_trcid_mem_acc(h, 0, 0xffff, OCSD_MEM_SPACE_ANY, mem_id_cb, NULL), OCSD_ERR_INVALID_PARAM_VAL);
    CHECK_EQ(ocsd_dt_remove_mem_acc(h, 0x1000, OCSD_MEM_SPACE_ANY), OCSD_ERR_INVALID_PARAM_VAL);
    ocsd_tl_log_mapped_mem_ranges(h);
    CHECK_EQ(ocsd_dt_set_mem_acc_cacheing(h, 1, 2048, 16), OCSD_ERR_INVALID_PARAM_VAL);
    CHECK_EQ(ocsd_def_errlog_set_strprint_cb(h, NULL, NULL), OCSD_ERR_NOT_INIT);
    CHECK_EQ(ocsd_dt_set_raw_frame_printer(h, OCSD_DFRMTR_PACKED_RAW_OUT), OCSD_ERR_NOT_INIT);
    CHECK_EQ(ocsd_dt_set_gen_elem_printer(h), OCSD_ERR_NOT_INIT);
    CHECK_EQ(ocsd_dt_set_pkt_protocol_printer(h, 0x10, 1), OCSD_ERR_NOT_INIT);
    ocsd_destroy_dcd_tree(h);
}

/* ------------------------------------------------------------------ */
/* Hostile callbacks: calls on the tree from inside its own element and
 * memory callbacks. A small custom decoder reads 4 bytes of memory per
 * trace byte through the library and outputs one element per byte. */

typedef struct {
    ocsd_extern_dcd_cb_fns cb;
    uint8_t cs_id;
} mis_dcd_t;

static char s_mis_name[] = "misuse_dcd";

static ocsd_datapath_resp_t mis_data_in(const void *h, const ocsd_datapath_op_t op, const ocsd_trc_index_t index,
                                        const uint32_t size, const uint8_t *data, uint32_t *used)
{
    const mis_dcd_t *d = (const mis_dcd_t *)h;
    ocsd_datapath_resp_t resp = OCSD_RESP_CONT;
    uint32_t i;
    if (op != OCSD_OP_DATA)
        return OCSD_RESP_CONT;
    *used = 0;
    for (i = 0; i < size && OCSD_DATA_RESP_IS_CONT(resp); i++) {
        uint8_t word[4] = {0};
        uint32_t n = 4;
        ocsd_generic_trace_elem e;
        d->cb.fn_memory_access(d->cb.lib_context, 0x1000 + data[i], d->cs_id, OCSD_MEM_SPACE_ANY, &n, word);
        memset(&e, 0, sizeof(e));
        ocsd_gen_elem_init(&e, OCSD_GEN_TRC_ELEM_CUSTOM);
        e.st_addr = data[i];
        e.en_addr = ((uint64_t)n << 8) | word[0]; /* what the read gave */
        resp = d->cb.fn_gen_elem_out(d->cb.lib_context, index + i, d->cs_id, &e);
        *used = i + 1;
    }
    return resp;
}
static void mis_update(const void *h, const int flags) { (void)h; (void)flags; }
static ocsd_err_t mis_create(const int flags, const void *cfg, const ocsd_extern_dcd_cb_fns *cb, ocsd_extern_dcd_inst_t *inst)
{
    mis_dcd_t *d = calloc(1, sizeof(*d));
    (void)flags;
    if (!d)
        return OCSD_ERR_MEM;
    d->cb = *cb;
    d->cs_id = *(const uint8_t *)cfg;
    inst->fn_data_in = mis_data_in;
    inst->fn_update_pkt_mon = mis_update;
    inst->decoder_handle = d;
    inst->p_decoder_name = s_mis_name;
    inst->cs_id = d->cs_id;
    return OCSD_OK;
}
static ocsd_err_t mis_destroy(const void *h) { free((void *)h); return OCSD_OK; }
static ocsd_err_t mis_csid(const void *cfg, unsigned char *id) { *id = *(const uint8_t *)cfg; return OCSD_OK; }

enum { ACT_NONE, ACT_SET_OUTFN, ACT_SET_PRINTER, ACT_DESTROY, ACT_REMOVE, ACT_REENTER, ACT_SWAP_MEM };

typedef struct {
    dcd_tree_handle_t h;
    int elem_action, mem_action; /* what to do on the 3rd element / memory read */
    int elems, elems2, reads;
    ocsd_err_t act_err, act_err2;
    ocsd_datapath_resp_t reenter_resp;
    uint64_t got[8]; /* per element: (bytes read << 8) | first byte */
} hostile_t;

static uint8_t s_buf55[0x100];

static void hostile_act(hostile_t *c, int action);

static ocsd_datapath_resp_t hostile_elem2(const void *ctx, const ocsd_trc_index_t i, const uint8_t id, const ocsd_generic_trace_elem *e)
{
    hostile_t *c = (hostile_t *)ctx;
    (void)i; (void)id; (void)e;
    c->elems2++;
    if (c->elems2 == 2) /* and once more: to the library's element printer */
        c->act_err = ocsd_dt_set_gen_elem_printer(c->h);
    return OCSD_RESP_CONT;
}

static void hostile_act(hostile_t *c, int action)
{
    uint8_t byte = 1;
    uint32_t used = 0;
    switch (action) {
    case ACT_SET_OUTFN: c->act_err = ocsd_dt_set_gen_elem_outfn(c->h, hostile_elem2, c); break;
    case ACT_SET_PRINTER: c->act_err = ocsd_dt_set_gen_elem_printer(c->h); break;
    case ACT_DESTROY: ocsd_destroy_dcd_tree(c->h); break;
    case ACT_REMOVE: c->act_err = ocsd_dt_remove_decoder(c->h, 0x10); break;
    case ACT_REENTER: c->reenter_resp = ocsd_dt_process_data(c->h, OCSD_OP_DATA, 0, 1, &byte, &used); break;
    case ACT_SWAP_MEM:
        /* the callback's memory out, a buffer of 0x55 bytes in */
        c->act_err = ocsd_dt_remove_mem_acc(c->h, 0x1000, OCSD_MEM_SPACE_ANY);
        memset(s_buf55, 0x55, sizeof(s_buf55));
        c->act_err2 = ocsd_dt_add_buffer_mem_acc(c->h, 0x1000, OCSD_MEM_SPACE_ANY, s_buf55, sizeof(s_buf55));
        break;
    default: break;
    }
}

static ocsd_datapath_resp_t hostile_elem(const void *ctx, const ocsd_trc_index_t i, const uint8_t id, const ocsd_generic_trace_elem *e)
{
    hostile_t *c = (hostile_t *)ctx;
    (void)i; (void)id;
    if (c->elems < 8)
        c->got[c->elems] = e->en_addr;
    if (++c->elems == 3)
        hostile_act(c, c->elem_action);
    return OCSD_RESP_CONT;
}

static uint32_t hostile_mem(const void *ctx, const ocsd_vaddr_t a, const ocsd_mem_space_acc_t m, const uint32_t n, uint8_t *b)
{
    hostile_t *c = (hostile_t *)ctx;
    (void)a; (void)m;
    if (++c->reads == 3)
        hostile_act(c, c->mem_action);
    memset(b, 0xaa, n);
    return n;
}

/* One tree, one decode of 8 bytes with the hostile callbacks; returns
 * the response of the DATA call. */
static ocsd_datapath_resp_t hostile_run(hostile_t *c, int elem_action, int mem_action)
{
    uint8_t cfg = 0x10, data[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
    uint32_t used = 0;
    unsigned char id = 0;
    ocsd_datapath_resp_t r;
    memset(c, 0, sizeof(*c));
    c->elem_action = elem_action;
    c->mem_action = mem_action;
    c->h = ocsd_create_dcd_tree(OCSD_TRC_SRC_SINGLE, 0);
    CHECK(c->h != C_API_INVALID_TREE_HANDLE);
    CHECK_EQ(ocsd_dt_create_decoder(c->h, "MISUSE", OCSD_CREATE_FLG_FULL_DECODER, &cfg, &id), OCSD_OK);
    CHECK_EQ(ocsd_dt_add_callback_mem_acc(c->h, 0, 0xffff, OCSD_MEM_SPACE_ANY, hostile_mem, c), OCSD_OK);
    /* no memory access cache: every read reaches the hostile callback (set once
     * memory is attached, as OpenCSD requires) */
    CHECK_EQ(ocsd_dt_set_mem_acc_cacheing(c->h, 0, 0, 0), OCSD_OK);
    CHECK_EQ(ocsd_dt_set_gen_elem_outfn(c->h, hostile_elem, c), OCSD_OK);
    r = ocsd_dt_process_data(c->h, OCSD_OP_DATA, 0, sizeof(data), data, &used);
    return r;
}

static void hostile_callbacks(void)
{
    static ocsd_extern_dcd_fact_t fact;
    hostile_t c;
    uint8_t byte = 1;
    uint32_t used = 0;
    ocsd_file_mem_region_t reg = { 0, 0x1000, 4096 };
    dcd_tree_handle_t h;

    memset(&fact, 0, sizeof(fact));
    fact.createDecoder = mis_create;
    fact.destroyDecoder = mis_destroy;
    fact.csidFromConfig = mis_csid;
    CHECK_EQ(ocsd_register_custom_decoder("MISUSE", &fact), OCSD_OK);

    /* a new element callback from inside the element callback: OpenCSD
     * survives this; here it takes over from the next element, and a
     * printer set from inside that one takes over after it */
    ocsd_def_errlog_init(OCSD_ERR_SEV_ERROR, 1);
    ocsd_def_errlog_config_output(0, NULL); /* the printer prints nothing */
    CHECK_EQ(hostile_run(&c, ACT_SET_OUTFN, ACT_NONE), OCSD_RESP_CONT);
    CHECK_EQ(c.act_err, OCSD_OK);
    CHECK_EQ(c.elems, 3);
    CHECK_EQ(c.elems2, 2);
    CHECK_EQ(ocsd_dt_process_data(c.h, OCSD_OP_DATA, 8, 1, &byte, &used), OCSD_RESP_CONT);
    CHECK_EQ(c.elems2, 2); /* the printer has it now */
    ocsd_destroy_dcd_tree(c.h);
    CHECK_EQ(hostile_run(&c, ACT_SET_PRINTER, ACT_NONE), OCSD_RESP_CONT);
    CHECK_EQ(c.act_err, OCSD_OK);
    CHECK_EQ(c.elems, 3);
    ocsd_destroy_dcd_tree(c.h);

    /* destroying the tree from inside its element or memory callback: the
     * tree goes when the running call returns; the handle is dead at once */
    hostile_run(&c, ACT_DESTROY, ACT_NONE);
    CHECK_EQ(c.elems, 8);
    CHECK_EQ(ocsd_dt_process_data(c.h, OCSD_OP_FLUSH, 0, 0, NULL, NULL), OCSD_RESP_FATAL_NOT_INIT);
    ocsd_destroy_dcd_tree(c.h); /* twice: a dead handle, ignored */
    hostile_run(&c, ACT_NONE, ACT_DESTROY);
    CHECK_EQ(c.reads, 8);
    CHECK_EQ(ocsd_dt_set_gen_elem_outfn(c.h, hostile_elem, &c), OCSD_ERR_INVALID_PARAM_VAL);

    /* removing the running decoder from inside a callback: removed when
     * the running call returns */
    CHECK_EQ(hostile_run(&c, ACT_REMOVE, ACT_NONE), OCSD_RESP_CONT);
    CHECK_EQ(c.act_err, OCSD_OK);
    CHECK_EQ(c.elems, 8);
    CHECK_EQ(ocsd_dt_process_data(c.h, OCSD_OP_DATA, 8, 1, &byte, &used), OCSD_RESP_FATAL_NOT_INIT);
    ocsd_destroy_dcd_tree(c.h);
    CHECK_EQ(hostile_run(&c, ACT_NONE, ACT_REMOVE), OCSD_RESP_CONT);
    CHECK_EQ(c.act_err, OCSD_OK);
    CHECK_EQ(ocsd_dt_process_data(c.h, OCSD_OP_DATA, 8, 1, &byte, &used), OCSD_RESP_FATAL_NOT_INIT);
    ocsd_destroy_dcd_tree(c.h);

    /* the memory map changed from inside the element or memory callback,
     * as OpenCSD allows: the reads after the call see the new map */
    {
        int k;
        CHECK_EQ(hostile_run(&c, ACT_SWAP_MEM, ACT_NONE), OCSD_RESP_CONT);
        CHECK_EQ(c.act_err, OCSD_OK);
        CHECK_EQ(c.act_err2, OCSD_OK);
        for (k = 0; k < 8; k++)
            CHECK_EQ(c.got[k], (4 << 8) | (k < 3 ? 0xaa : 0x55));
        ocsd_destroy_dcd_tree(c.h);
        CHECK_EQ(hostile_run(&c, ACT_NONE, ACT_SWAP_MEM), OCSD_RESP_CONT);
        CHECK_EQ(c.act_err, OCSD_OK);
        CHECK_EQ(c.act_err2, OCSD_OK);
        CHECK_EQ(c.reads, 3); /* the callback is gone after its third read */
        for (k = 0; k < 8; k++)
            CHECK_EQ(c.got[k], (4 << 8) | (k < 3 ? 0xaa : 0x55));
        /* a change refused there is refused as it would be outside */
        CHECK_EQ(ocsd_dt_add_buffer_mem_acc(c.h, 0x1010, OCSD_MEM_SPACE_ANY, s_buf55, 0x10), OCSD_ERR_MEM_ACC_OVERLAP);
        ocsd_destroy_dcd_tree(c.h);
    }

    /* any other call on the tree from its own callback is refused */
    CHECK_EQ(hostile_run(&c, ACT_REENTER, ACT_NONE), OCSD_RESP_CONT);
    CHECK_EQ(c.reenter_resp, OCSD_RESP_FATAL_NOT_INIT);
    CHECK_EQ(c.elems, 8);
    ocsd_destroy_dcd_tree(c.h);

    CHECK_EQ(ocsd_deregister_decoders(), OCSD_OK);

    /* a file that is not a regular file has no size to map: its accessor
     * fails its set-up at once, as OpenCSD 1.8.0's (reading /dev/zero to
     * its end would never finish) */
    h = ocsd_create_dcd_tree(OCSD_TRC_SRC_FRAME_FORMATTED, OCSD_DFRMTR_FRAME_MEM_ALIGN);
    CHECK_EQ(ocsd_dt_add_binfile_mem_acc(h, 0x1000, OCSD_MEM_SPACE_ANY, "/dev/zero"), OCSD_ERR_NOT_INIT);
    CHECK_EQ(ocsd_dt_add_binfile_region_mem_acc(h, &reg, 1, OCSD_MEM_SPACE_ANY, "/dev/zero"), OCSD_ERR_NOT_INIT);
    CHECK_EQ(ocsd_dt_add_binfile_mem_acc(h, 0x1000, OCSD_MEM_SPACE_ANY, "/"), OCSD_ERR_NOT_INIT);
    ocsd_destroy_dcd_tree(h);
}

int main(void)
{
    char buf[256];
    char tiny[8];
    ocsd_generic_trace_elem elem;
    ocsd_trc_index_t idx = 0;
    uint8_t chan = 0;
    unsigned char id = 0;
    uint8_t data[32] = {0};
    uint32_t n = 0;
    uint8_t cfg[256] = {0};
    ocsd_decode_stats_t *stats = 0;
    ocsd_file_mem_region_t reg = { 0, 0x1000, 16 };
    ocsd_extern_dcd_fact_t fact;
    dcd_tree_handle_t h;

    /* version */
    CHECK_EQ(ocsd_get_version(), 0x010800);
    CHECK_STR(ocsd_get_version_str(), "1.8.0");

    /* logger before any output logger exists */
    CHECK_EQ(ocsd_def_errlog_config_output(C_API_MSGLOGOUT_FLG_STDOUT, NULL), OCSD_ERR_NOT_INIT);
    ocsd_def_errlog_msgout("not printed\n");
    ocsd_def_errlog_msgout(NULL);
    CHECK_EQ(ocsd_get_last_err(&idx, &chan, buf, sizeof(buf)), OCSD_OK);
    CHECK_EQ(idx, OCSD_BAD_TRC_INDEX);
    CHECK_EQ(chan, OCSD_BAD_CS_SRC_ID);
    CHECK_STR(buf, "");
    CHECK_EQ(ocsd_get_last_err(NULL, NULL, NULL, 0), OCSD_OK);

    /* NULL, made-up and destroyed handles */
    all_fns_with_handle(C_API_INVALID_TREE_HANDLE);
    all_fns_with_handle((dcd_tree_handle_t)(uintptr_t)0x12345678);
    h = ocsd_create_dcd_tree(OCSD_TRC_SRC_FRAME_FORMATTED, OCSD_DFRMTR_FRAME_MEM_ALIGN);
    CHECK(h != C_API_INVALID_TREE_HANDLE);
    ocsd_destroy_dcd_tree(h);
    all_fns_with_handle(h); /* destroys again: ignored */

    /* an unknown source type gives a single source tree, as in OpenCSD 1.8.0 */
    h = ocsd_create_dcd_tree(5, 0);
    CHECK(h != C_API_INVALID_TREE_HANDLE);
    CHECK_EQ(ocsd_dt_set_raw_frame_printer(h, OCSD_DFRMTR_PACKED_RAW_OUT), OCSD_ERR_DCDT_NO_FORMATTER);
    ocsd_destroy_dcd_tree(h);

    /* a live formatted tree, bad arguments */
    h = ocsd_create_dcd_tree(OCSD_TRC_SRC_FRAME_FORMATTED, OCSD_DFRMTR_FRAME_MEM_ALIGN);
    CHECK_EQ(ocsd_dt_create_decoder(h, "NO_SUCH_DECODER", OCSD_CREATE_FLG_FULL_DECODER, cfg, &id), OCSD_ERR_DCDREG_NAME_UNKNOWN);
    CHECK_EQ(ocsd_dt_create_decoder(h, NULL, OCSD_CREATE_FLG_FULL_DECODER, cfg, &id), OCSD_ERR_INVALID_PARAM_VAL);
    CHECK_EQ(ocsd_dt_create_decoder(h, "NO_SUCH_DECODER", OCSD_CREATE_FLG_FULL_DECODER, cfg, NULL), OCSD_ERR_INVALID_PARAM_VAL);
    CHECK_EQ(ocsd_dt_create_decoder(h, "ETMV4I", OCSD_CREATE_FLG_FULL_DECODER, NULL, &id), OCSD_ERR_INVALID_PARAM_VAL);
    CHECK_EQ(ocsd_dt_remove_decoder(h, 0x00), OCSD_ERR_INVALID_ID);
    CHECK_EQ(ocsd_dt_remove_decoder(h, 0x7F), OCSD_ERR_INVALID_ID);
    CHECK_EQ(ocsd_dt_remove_decoder(h, 0x10), OCSD_OK); /* nothing there: not an error */
    CHECK_EQ(ocsd_dt_attach_packet_callback(h, 0x10, OCSD_C_API_CB_PKT_SINK, (void *)mon_cb, NULL), OCSD_ERR_INVALID_ID);
    CHECK_EQ(ocsd_dt_get_decode_stats(h, 0x10, &stats), OCSD_ERR_INVALID_PARAM_VAL);
    CHECK_EQ(ocsd_dt_get_decode_stats(h, 0x10, NULL), OCSD_ERR_INVALID_PARAM_VAL);
    CHECK_EQ(ocsd_dt_reset_decode_stats(h, 0x10), OCSD_ERR_INVALID_PARAM_VAL);
    CHECK_EQ(ocsd_dt_set_gen_elem_outfn(h, NULL, NULL), OCSD_ERR_INVALID_PARAM_VAL);
    CHECK_EQ(ocsd_dt_set_pkt_protocol_printer(h, 0x10, 1), OCSD_ERR_INVALID_PARAM_VAL);
    n = 77;
    CHECK_EQ(ocsd_dt_process_data(h, OCSD_OP_DATA, 0, 0, data, &n), OCSD_RESP_FATAL_INVALID_PARAM);
    CHECK_EQ(n, 0);
    CHECK_EQ(ocsd_dt_process_data(h, OCSD_OP_DATA, 0, sizeof(data), NULL, &n), OCSD_RESP_FATAL_INVALID_PARAM);
    CHECK_EQ(ocsd_dt_process_data(h, OCSD_OP_DATA, 0, sizeof(data), data, NULL), OCSD_RESP_FATAL_INVALID_PARAM);
    CHECK_EQ(ocsd_dt_process_data(h, 42, 0, 0, NULL, NULL), OCSD_RESP_FATAL_INVALID_OP);

    /* memory accessors */
    CHECK_EQ(ocsd_dt_remove_mem_acc(h, 0x1000, OCSD_MEM_SPACE_ANY), OCSD_ERR_NOT_INIT);
    CHECK_EQ(ocsd_dt_set_mem_acc_cacheing(h, 1, 2048, 16), OCSD_ERR_NOT_INIT);
    CHECK_EQ(ocsd_dt_add_buffer_mem_acc(h, 0x1000, OCSD_MEM_SPACE_ANY, NULL, 16), OCSD_ERR_INVALID_PARAM_VAL);
    CHECK_EQ(ocsd_dt_add_buffer_mem_acc(h, 0x1000, OCSD_MEM_SPACE_ANY, data, 3), OCSD_ERR_INVALID_PARAM_VAL);
    CHECK_EQ(ocsd_dt_add_buffer_mem_acc(h, 0x1000, OCSD_MEM_SPACE_ANY, data, 16), OCSD_OK);
    CHECK_EQ(ocsd_dt_add_buffer_mem_acc(h, 0x1008, OCSD_MEM_SPACE_EL1N, data, 16), OCSD_ERR_MEM_ACC_OVERLAP);
    CHECK_EQ(ocsd_dt_add_callback_mem_acc(h, 0x2000, 0x2fff, OCSD_MEM_SPACE_ANY, NULL, NULL), OCSD_ERR_INVALID_PARAM_VAL);
    CHECK_EQ(ocsd_dt_add_callback_trcid_mem_acc(h, 0x2000, 0x2fff, OCSD_MEM_SPACE_ANY, NULL, NULL), OCSD_ERR_INVALID_PARAM_VAL);
    CHECK_EQ(ocsd_dt_add_callback_mem_acc(h, 0x3000, 0x2fff, OCSD_MEM_SPACE_ANY, mem_cb, NULL), OCSD_ERR_MEM_ACC_RANGE_INVALID);
    CHECK_EQ(ocsd_dt_add_binfile_mem_acc(h, 0x8000, OCSD_MEM_SPACE_ANY, NULL), OCSD_ERR_INVALID_PARAM_VAL);
    CHECK_EQ(ocsd_dt_add_binfile_mem_acc(h, 0x8000, OCSD_MEM_SPACE_ANY, ""), OCSD_ERR_INVALID_PARAM_VAL);
    /* OpenCSD 1.8.0's file accessor fails its set-up for a missing file */
    CHECK_EQ(ocsd_dt_add_binfile_mem_acc(h, 0x8000, OCSD_MEM_SPACE_ANY, "/no/such/file"), OCSD_ERR_NOT_INIT);
    /* ranges: on a halfword, ending before one, longer than a byte */
    CHECK_EQ(ocsd_dt_add_buffer_mem_acc(h, 0x4000, OCSD_MEM_SPACE_ANY, data, 5), OCSD_ERR_MEM_ACC_RANGE_INVALID);
    CHECK_EQ(ocsd_dt_add_buffer_mem_acc(h, 0x4001, OCSD_MEM_SPACE_ANY, data, 8), OCSD_ERR_MEM_ACC_RANGE_INVALID);
    CHECK_EQ(ocsd_dt_add_callback_mem_acc(h, 0x5000, 0x5000, OCSD_MEM_SPACE_ANY, mem_cb, NULL), OCSD_ERR_MEM_ACC_RANGE_INVALID);
    CHECK_EQ(ocsd_dt_add_binfile_region_mem_acc(h, NULL, 1, OCSD_MEM_SPACE_ANY, "/no/such/file"), OCSD_ERR_INVALID_PARAM_VAL);
    CHECK_EQ(ocsd_dt_add_binfile_region_mem_acc(h, &reg, 0, OCSD_MEM_SPACE_ANY, "/no/such/file"), OCSD_ERR_INVALID_PARAM_VAL);
    CHECK_EQ(ocsd_dt_add_binfile_region_mem_acc(h, &reg, 1, OCSD_MEM_SPACE_ANY, NULL), OCSD_ERR_INVALID_PARAM_VAL);
    CHECK_EQ(ocsd_dt_add_binfile_region_mem_acc(h, &reg, 1, OCSD_MEM_SPACE_ANY, "/no/such/file"), OCSD_ERR_NOT_INIT);
    CHECK_EQ(ocsd_dt_set_mem_acc_cacheing(h, 1, 2048, 16), OCSD_OK);
    CHECK_EQ(ocsd_dt_set_mem_acc_cacheing(h, 1, 16, 16), OCSD_ERR_INVALID_PARAM_VAL);
    CHECK_EQ(ocsd_dt_set_mem_acc_cacheing(h, 1, 20000, 16), OCSD_ERR_INVALID_PARAM_VAL);
    CHECK_EQ(ocsd_dt_set_mem_acc_cacheing(h, 1, 2048, 2), OCSD_ERR_INVALID_PARAM_VAL);
    CHECK_EQ(ocsd_dt_set_mem_acc_cacheing(h, 1, 2048, 300), OCSD_ERR_INVALID_PARAM_VAL);
    CHECK_EQ(ocsd_dt_set_mem_acc_cacheing(h, 0, 0, 0), OCSD_OK);
    /* the cache error was logged: it is the last error */
    CHECK_EQ(ocsd_get_last_err(&idx, &chan, buf, sizeof(buf)), OCSD_ERR_INVALID_PARAM_VAL);
    CHECK_STR(buf, "0x0006 (OCSD_ERR_INVALID_PARAM_VAL) [Invalid value parameter passed to component.]; MemAcc Caching: number of pages too large");
    CHECK_EQ(ocsd_get_last_err(&idx, &chan, tiny, sizeof(tiny)), OCSD_ERR_INVALID_PARAM_VAL);
    CHECK_STR(tiny, "0x0006 ");
    CHECK_EQ(ocsd_dt_remove_mem_acc(h, 0x1000, OCSD_MEM_SPACE_ANY), OCSD_OK);
    CHECK_EQ(ocsd_dt_remove_mem_acc(h, 0x1000, OCSD_MEM_SPACE_ANY), OCSD_ERR_INVALID_PARAM_VAL);

    /* string print callback needs an output logger */
    CHECK_EQ(ocsd_def_errlog_set_strprint_cb(h, NULL, NULL), OCSD_ERR_NOT_INIT);
    CHECK_EQ(ocsd_def_errlog_init(OCSD_ERR_SEV_ERROR, 1), OCSD_OK);
    CHECK_EQ(ocsd_def_errlog_config_output(C_API_MSGLOGOUT_FLG_NONE, NULL), OCSD_OK);
    CHECK_EQ(ocsd_def_errlog_set_strprint_cb(h, NULL, NULL), OCSD_OK);
    ocsd_def_errlog_msgout("to a NULL string callback: dropped\n");

    /* printers */
    CHECK_EQ(ocsd_dt_set_raw_frame_printer(h, OCSD_DFRMTR_PACKED_RAW_OUT), OCSD_OK);
    CHECK_EQ(ocsd_dt_set_raw_frame_printer(h, OCSD_DFRMTR_PACKED_RAW_OUT), OCSD_ERR_ATTACH_TOO_MANY);
    CHECK_EQ(ocsd_dt_set_gen_elem_printer(h), OCSD_OK);
    ocsd_destroy_dcd_tree(h);

    /* single source tree: no decoder yet */
    h = ocsd_create_dcd_tree(OCSD_TRC_SRC_SINGLE, 0);
    n = 9;
    CHECK_EQ(ocsd_dt_process_data(h, OCSD_OP_DATA, 0, sizeof(data), data, &n), OCSD_RESP_FATAL_NOT_INIT);
    CHECK_EQ(n, 0);
    CHECK_EQ(ocsd_dt_set_raw_frame_printer(h, OCSD_DFRMTR_PACKED_RAW_OUT), OCSD_ERR_DCDT_NO_FORMATTER);
    CHECK_EQ(ocsd_dt_remove_decoder(h, 0xFF), OCSD_OK);
    CHECK_EQ(ocsd_dt_attach_packet_callback(h, 0, OCSD_C_API_CB_PKT_MON, (void *)mon_cb, NULL), OCSD_ERR_INVALID_ID);
    ocsd_destroy_dcd_tree(h);

    /* text of packets, elements, errors: NULL pointers and short buffers */
    CHECK_EQ(ocsd_pkt_str(OCSD_PROTOCOL_ETMV4I, cfg, NULL, 64), OCSD_ERR_INVALID_PARAM_VAL);
    CHECK_EQ(ocsd_pkt_str(OCSD_PROTOCOL_ETMV4I, cfg, buf, 1), OCSD_ERR_INVALID_PARAM_VAL);
    CHECK_EQ(ocsd_pkt_str(OCSD_PROTOCOL_ETMV4I, NULL, buf, 64), OCSD_ERR_INVALID_PARAM_VAL);
    CHECK_EQ(ocsd_pkt_str(OCSD_PROTOCOL_UNKNOWN, cfg, buf, 64), OCSD_ERR_NO_PROTOCOL);
    CHECK_EQ(ocsd_pkt_str(OCSD_PROTOCOL_ETMV4D, cfg, buf, 64), OCSD_ERR_NO_PROTOCOL);
    CHECK_EQ(ocsd_pkt_str(OCSD_PROTOCOL_CUSTOM_9, cfg, buf, 64), OCSD_ERR_NO_PROTOCOL);
    CHECK_STR(buf, "");
    CHECK_EQ(ocsd_cust_protocol_to_str(OCSD_PROTOCOL_CUSTOM_9, cfg, buf, 64), OCSD_ERR_NO_PROTOCOL);
    CHECK_EQ(ocsd_cust_protocol_to_str(OCSD_PROTOCOL_ETMV3, cfg, buf, 64), OCSD_ERR_NO_PROTOCOL);

    memset(&elem, 0x5a, sizeof(elem));
    ocsd_gen_elem_init(&elem, OCSD_GEN_TRC_ELEM_NO_SYNC);
    CHECK_EQ(elem.elem_type, OCSD_GEN_TRC_ELEM_NO_SYNC);
    CHECK_EQ(elem.flag_bits, 0);
    CHECK(elem.ptr_extended_data == NULL);
    CHECK_EQ(elem.cycle_count, 0x5a5a5a5a); /* untouched, as OpenCSD */
    ocsd_gen_elem_init(NULL, OCSD_GEN_TRC_ELEM_NO_SYNC);
    memset(&elem, 0, sizeof(elem));
    ocsd_gen_elem_init(&elem, OCSD_GEN_TRC_ELEM_TRACE_ON);
    CHECK_EQ(ocsd_gen_elem_str(&elem, buf, sizeof(buf)), OCSD_OK);
    CHECK_STR(buf, "OCSD_GEN_TRC_ELEM_TRACE_ON( [begin or filter])");
    CHECK_EQ(ocsd_gen_elem_str(&elem, tiny, sizeof(tiny)), OCSD_OK);
    CHECK_STR(tiny, "OCSD_GE");
    CHECK_EQ(ocsd_gen_elem_str(&elem, buf, 1), OCSD_ERR_INVALID_PARAM_VAL);
    CHECK_EQ(ocsd_gen_elem_str(&elem, NULL, 64), OCSD_ERR_INVALID_PARAM_VAL);
    CHECK_EQ(ocsd_gen_elem_str(NULL, buf, 64), OCSD_ERR_INVALID_PARAM_VAL);

    ocsd_err_str(OCSD_ERR_NO_PROTOCOL, buf, sizeof(buf));
    CHECK_STR(buf, "0x0009 (OCSD_ERR_NO_PROTOCOL) [Trace protocol unsupported]; ");
    ocsd_err_str(OCSD_ERR_NO_PROTOCOL, tiny, sizeof(tiny));
    CHECK_STR(tiny, "0x0009 ");
    ocsd_err_str(12345, buf, sizeof(buf));
    CHECK_STR(buf, "0x3039 (unknown); ");
    ocsd_err_str(OCSD_OK, NULL, 64);
    ocsd_err_str(OCSD_OK, buf, 0);

    /* custom decoder registration */
    memset(&fact, 0, sizeof(fact));
    CHECK_EQ(ocsd_register_custom_decoder("BAD_FACT", &fact), OCSD_ERR_INVALID_PARAM_VAL);
    CHECK_EQ(ocsd_register_custom_decoder(NULL, &fact), OCSD_ERR_INVALID_PARAM_VAL);
    CHECK_EQ(ocsd_register_custom_decoder("BAD_FACT", NULL), OCSD_ERR_INVALID_PARAM_VAL);
    CHECK_EQ(ocsd_register_custom_decoder("ETMV4I", &fact), OCSD_ERR_DCDREG_NAME_REPEAT);
    CHECK_EQ(ocsd_deregister_decoders(), OCSD_OK);

    hostile_callbacks();

    return CHECKS_DONE("test_bad_args");
}
