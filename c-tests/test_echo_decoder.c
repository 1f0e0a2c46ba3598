/*
 * test_echo_decoder.c : a custom decoder written in C, in the manner of
 * OpenCSD's decoder/tests/ext_dcd_test_eg/c_api_echo_test: registered with
 * ocsd_register_custom_decoder(), created by name on decode trees, fed
 * bytes, it splits them into 4-byte "echo" packets and outputs one
 * OCSD_GEN_TRC_ELEM_CUSTOM element per packet (extended data -> packet).
 * Exercises every library callback (element out, error and message
 * logging, instruction decode, memory access, packet monitor and sink),
 * ocsd_pkt_str / ocsd_cust_protocol_to_str, and decoder removal.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include "opencsd/c_api/opencsd_c_api.h"
#include "check.h"

/* ------------------------------------------------------------------ */
/* the echo decoder */

typedef struct { uint8_t cs_id; } echo_cfg_t;
typedef struct { uint32_t value; ocsd_trc_index_t index; } echo_pkt_t;

typedef struct {
    ocsd_extern_dcd_cb_fns cb;
    int full;
    uint8_t cs_id;
    echo_pkt_t pkt;
    uint8_t raw[4];
    int n_raw;
    int instr_err;
} echo_dcd_t;

static char s_echo_name[] = "echo_dcd";
static int s_live_decoders = 0;

static ocsd_datapath_resp_t echo_packet_done(echo_dcd_t *d)
{
    ocsd_datapath_resp_t resp = OCSD_RESP_CONT;
    ocsd_generic_trace_elem e;

    if (d->cb.packetCBFlags & OCSD_CUST_DCD_PKT_CB_USE_MON)
        d->cb.fn_packet_mon(d->cb.lib_context, OCSD_OP_DATA, d->pkt.index, &d->pkt, 4, d->raw);
    if (!d->full) {
        if (d->cb.packetCBFlags & OCSD_CUST_DCD_PKT_CB_USE_SINK)
            resp = d->cb.fn_packet_data_sink(d->cb.lib_context, OCSD_OP_DATA, d->pkt.index, &d->pkt);
        return resp;
    }
    memset(&e, 0, sizeof(e));
    ocsd_gen_elem_init(&e, OCSD_GEN_TRC_ELEM_CUSTOM);
    e.st_addr = d->pkt.value;
    e.ptr_extended_data = &d->pkt;
    e.flag_bits = 1u << 8; /* extended_data */
    {
        /* read the "opcode" at the packet value and decode it */
        uint8_t op[4] = {0};
        uint32_t n = 4;
        ocsd_instr_info info;
        if (d->cb.fn_memory_access(d->cb.lib_context, d->pkt.value, d->cs_id, OCSD_MEM_SPACE_ANY, &n, op) == OCSD_OK && n == 4)
            e.en_addr = (uint32_t)op[0] | ((uint32_t)op[1] << 8) | ((uint32_t)op[2] << 16) | ((uint32_t)op[3] << 24);
        memset(&info, 0, sizeof(info));
        info.isa = 2; /* ocsd_isa_aarch64 */
        info.instr_addr = d->pkt.value;
        info.opcode = (uint32_t)e.en_addr;
        d->instr_err = d->cb.fn_arm_instruction_decode(d->cb.lib_context, &info);
    }
    return d->cb.fn_gen_elem_out(d->cb.lib_context, d->pkt.index, d->cs_id, &e);
}

static ocsd_datapath_resp_t echo_data_in(const void *h, const ocsd_datapath_op_t op, const ocsd_trc_index_t index,
                                         const uint32_t size, const uint8_t *data, uint32_t *used)
{
    echo_dcd_t *d = (echo_dcd_t *)h;
    ocsd_datapath_resp_t resp = OCSD_RESP_CONT;
    uint32_t i;

    switch (op) {
    case OCSD_OP_DATA:
        for (i = 0; i < size && OCSD_DATA_RESP_IS_CONT(resp); i++) {
            if (d->n_raw == 0)
                d->pkt.index = index + i;
            d->raw[d->n_raw++] = data[i];
            if (d->n_raw == 4) {
                d->pkt.value = (uint32_t)d->raw[0] | ((uint32_t)d->raw[1] << 8) | ((uint32_t)d->raw[2] << 16) | ((uint32_t)d->raw[3] << 24);
                d->n_raw = 0;
                resp = echo_packet_done(d);
            }
        }
        *used = i;
        return resp;
    case OCSD_OP_EOT:
        if (d->n_raw) {
            d->cb.fn_log_error(d->cb.lib_context, OCSD_ERR_SEV_ERROR, OCSD_ERR_BAD_PACKET_SEQ, d->pkt.index, d->cs_id,
                               "incomplete packet at end of trace");
            d->n_raw = 0;
        }
        if (d->cb.packetCBFlags & OCSD_CUST_DCD_PKT_CB_USE_MON)
            d->cb.fn_packet_mon(d->cb.lib_context, OCSD_OP_EOT, 0, NULL, 0, NULL);
        if (!d->full && (d->cb.packetCBFlags & OCSD_CUST_DCD_PKT_CB_USE_SINK))
            return d->cb.fn_packet_data_sink(d->cb.lib_context, OCSD_OP_EOT, 0, NULL);
        d->cb.fn_log_msg(d->cb.lib_context, OCSD_ERR_SEV_INFO, "echo decoder: end of trace\n");
        return OCSD_RESP_CONT;
    case OCSD_OP_FLUSH:
        return OCSD_RESP_CONT;
    case OCSD_OP_RESET:
        d->n_raw = 0;
        return OCSD_RESP_CONT;
    }
    return OCSD_RESP_FATAL_INVALID_OP;
}

static void echo_update_pkt_mon(const void *h, const int flags)
{
    ((echo_dcd_t *)h)->cb.packetCBFlags = flags;
}

static ocsd_err_t echo_create(const int create_flags, const void *cfg, const ocsd_extern_dcd_cb_fns *cb, ocsd_extern_dcd_inst_t *inst)
{
    echo_dcd_t *d;
    if (!cfg)
        return OCSD_ERR_INVALID_PARAM_VAL;
    d = calloc(1, sizeof(*d));
    if (!d)
        return 2;
    d->cb = *cb;
    d->full = (create_flags & OCSD_CREATE_FLG_FULL_DECODER) != 0;
    d->cs_id = ((const echo_cfg_t *)cfg)->cs_id;
    inst->fn_data_in = echo_data_in;
    inst->fn_update_pkt_mon = echo_update_pkt_mon;
    inst->decoder_handle = d;
    inst->p_decoder_name = s_echo_name;
    inst->cs_id = d->cs_id;
    s_live_decoders++;
    return OCSD_OK;
}

static ocsd_err_t echo_destroy(const void *h)
{
    free((void *)h);
    s_live_decoders--;
    return OCSD_OK;
}

static ocsd_err_t echo_csid(const void *cfg, unsigned char *p_csid)
{
    if (!cfg)
        return OCSD_ERR_INVALID_PARAM_VAL;
    *p_csid = ((const echo_cfg_t *)cfg)->cs_id;
    return OCSD_OK;
}

static ocsd_err_t echo_pkt_to_str(const void *pkt, char *buffer, const int buflen)
{
    const echo_pkt_t *p = (const echo_pkt_t *)pkt;
    snprintf(buffer, (size_t)buflen, "ECHOTP:{0x%08x}", p->value);
    return OCSD_OK;
}

/* a factory that produces an invalid instance (no data-in function) */
static ocsd_err_t bad_create(const int create_flags, const void *cfg, const ocsd_extern_dcd_cb_fns *cb, ocsd_extern_dcd_inst_t *inst)
{
    (void)create_flags; (void)cfg; (void)cb;
    memset(inst, 0, sizeof(*inst));
    return OCSD_OK;
}

/* ------------------------------------------------------------------ */
/* client side */

typedef struct {
    int n;
    uint32_t values[64];
    uint64_t words[64];
    uint8_t ids[64];
    ocsd_trc_index_t idx[64];
} elems_t;

static ocsd_datapath_resp_t elem_in(const void *ctx, const ocsd_trc_index_t index_sop, const uint8_t id, const ocsd_generic_trace_elem *e)
{
    elems_t *c = (elems_t *)ctx;
    char text[128];
    if (e->elem_type == OCSD_GEN_TRC_ELEM_CUSTOM && c->n < 64 && e->ptr_extended_data &&
        ocsd_pkt_str(OCSD_PROTOCOL_CUSTOM_0, e->ptr_extended_data, text, sizeof(text)) != OCSD_ERR_INVALID_PARAM_VAL) {
        c->values[c->n] = ((const echo_pkt_t *)e->ptr_extended_data)->value;
        c->words[c->n] = e->en_addr;
        c->ids[c->n] = id;
        c->idx[c->n++] = index_sop;
    }
    return OCSD_RESP_CONT;
}

typedef struct { int n_data, n_eot; uint32_t last; size_t raw_bytes; } pkts_t;

static void pkt_mon(const void *ctx, const ocsd_datapath_op_t op, const ocsd_trc_index_t idx, const void *pkt, const uint32_t size, const uint8_t *data)
{
    pkts_t *p = (pkts_t *)ctx;
    (void)idx;
    if (op == OCSD_OP_DATA) {
        p->n_data++;
        p->last = ((const echo_pkt_t *)pkt)->value;
        p->raw_bytes += size;
        if (size != 4 || memcmp(data, &p->last, 4) != 0)
            p->raw_bytes += 1000; /* flag a mismatch */
    } else if (op == OCSD_OP_EOT) {
        p->n_eot++;
    }
}

static ocsd_datapath_resp_t pkt_sink(const void *ctx, const ocsd_datapath_op_t op, const ocsd_trc_index_t idx, const void *pkt)
{
    pkts_t *p = (pkts_t *)ctx;
    (void)idx;
    if (op == OCSD_OP_DATA) {
        p->n_data++;
        p->last = ((const echo_pkt_t *)pkt)->value;
    } else if (op == OCSD_OP_EOT) {
        p->n_eot++;
    }
    return OCSD_RESP_CONT;
}

static char s_log[4096];
static void log_str(const void *ctx, const char *s, const int len)
{
    (void)ctx;
    if ((int)strlen(s) == len && strlen(s_log) + (size_t)len < sizeof(s_log))
        strcat(s_log, s);
}

int main(void)
{
    ocsd_extern_dcd_fact_t fact = { echo_create, echo_destroy, echo_csid, echo_pkt_to_str, 0 };
    ocsd_extern_dcd_fact_t nostr = { echo_create, echo_destroy, echo_csid, NULL, 0 };
    ocsd_extern_dcd_fact_t bad = { bad_create, echo_destroy, echo_csid, NULL, 0 };
    echo_cfg_t cfg = { 0x11 }, cfg2 = { 0x22 };
    echo_pkt_t pkt = { 0xcafef00d, 0 };
    uint8_t mem[64];
    uint8_t trace[24];
    char buf[64];
    char tiny[8];
    elems_t el;
    pkts_t mon, sink;
    dcd_tree_handle_t h;
    unsigned char id = 0;
    uint32_t n = 0;
    ocsd_decode_stats_t *stats = NULL;
    ocsd_trc_index_t eidx;
    uint8_t echan;
    int i;

    /* registration */
    CHECK_EQ(ocsd_register_custom_decoder("ECHO_DCD", &fact), OCSD_OK);
    CHECK(OCSD_PROTOCOL_IS_CUSTOM(fact.protocol_id));
    CHECK_EQ(ocsd_register_custom_decoder("ECHO_DCD", &fact), OCSD_ERR_DCDREG_NAME_REPEAT);
    CHECK_EQ(ocsd_register_custom_decoder("ECHO_NOSTR", &nostr), OCSD_OK);
    CHECK_EQ(nostr.protocol_id, fact.protocol_id + 1);
    CHECK_EQ(ocsd_register_custom_decoder("BAD_DCD", &bad), OCSD_OK);

    /* packet text through the factory */
    CHECK_EQ(ocsd_cust_protocol_to_str(fact.protocol_id, &pkt, buf, sizeof(buf)), OCSD_OK);
    CHECK_STR(buf, "ECHOTP:{0xcafef00d}");
    CHECK_EQ(ocsd_pkt_str(fact.protocol_id, &pkt, buf, sizeof(buf)), OCSD_OK);
    CHECK_STR(buf, "ECHOTP:{0xcafef00d}");
    CHECK_EQ(ocsd_pkt_str(fact.protocol_id, &pkt, tiny, sizeof(tiny)), OCSD_OK);
    CHECK_STR(tiny, "ECHOTP:");
    CHECK_EQ(ocsd_cust_protocol_to_str(nostr.protocol_id, &pkt, buf, sizeof(buf)), OCSD_OK);
    snprintf(tiny, sizeof(tiny), "%d", nostr.protocol_id);
    {
        char want[64];
        snprintf(want, sizeof(want), "CUSTOM_PKT[]: print unsupported; protocol(%d).", nostr.protocol_id);
        CHECK_STR(buf, want);
    }
    CHECK_EQ(ocsd_cust_protocol_to_str(OCSD_PROTOCOL_CUSTOM_9, &pkt, buf, sizeof(buf)), OCSD_ERR_NO_PROTOCOL);
    CHECK_EQ(ocsd_cust_protocol_to_str(fact.protocol_id, &pkt, NULL, 10), OCSD_ERR_INVALID_PARAM_VAL);

    /* library logging to a string callback */
    CHECK_EQ(ocsd_def_errlog_init(OCSD_ERR_SEV_INFO, 1), OCSD_OK);
    CHECK_EQ(ocsd_def_errlog_config_output(C_API_MSGLOGOUT_FLG_NONE, NULL), OCSD_OK);

    /* ---- full decoder on a single source tree ---- */
    h = ocsd_create_dcd_tree(OCSD_TRC_SRC_SINGLE, 0);
    CHECK_EQ(ocsd_def_errlog_set_strprint_cb(h, NULL, log_str), OCSD_OK);
    CHECK_EQ(ocsd_dt_create_decoder(h, "ECHO_DCD", OCSD_CREATE_FLG_FULL_DECODER, NULL, &id), OCSD_ERR_INVALID_PARAM_VAL);
    CHECK_EQ(ocsd_dt_create_decoder(h, "BAD_DCD", OCSD_CREATE_FLG_FULL_DECODER, &cfg, &id), OCSD_ERR_INVALID_PARAM_VAL);
    /* as in OpenCSD 1.8.0, the failed decoder's slot stays taken until removed */
    CHECK_EQ(ocsd_dt_create_decoder(h, "ECHO_DCD", OCSD_CREATE_FLG_FULL_DECODER, &cfg, &id), OCSD_ERR_ATTACH_TOO_MANY);
    CHECK_EQ(s_live_decoders, 0);
    CHECK_EQ(ocsd_dt_remove_decoder(h, 0), OCSD_OK);
    CHECK_EQ(ocsd_dt_create_decoder(h, "ECHO_DCD", OCSD_CREATE_FLG_FULL_DECODER, &cfg, &id), OCSD_OK);
    CHECK_EQ(id, 0x11);
    CHECK_EQ(s_live_decoders, 1);
    CHECK_EQ(ocsd_dt_create_decoder(h, "ECHO_DCD", OCSD_CREATE_FLG_FULL_DECODER, &cfg2, &id), OCSD_ERR_ATTACH_TOO_MANY);
    CHECK_EQ(s_live_decoders, 1);
    for (i = 0; i < 64; i++)
        mem[i] = (uint8_t)(0x80 + i);
    CHECK_EQ(ocsd_dt_add_buffer_mem_acc(h, 0x1000, OCSD_MEM_SPACE_ANY, mem, sizeof(mem)), OCSD_OK);
    memset(&el, 0, sizeof(el));
    memset(&mon, 0, sizeof(mon));
    CHECK_EQ(ocsd_dt_set_gen_elem_outfn(h, elem_in, &el), OCSD_OK);
    CHECK_EQ(ocsd_dt_attach_packet_callback(h, 0x11, OCSD_C_API_CB_PKT_MON, (void *)pkt_mon, &mon), OCSD_OK);
    CHECK_EQ(ocsd_dt_attach_packet_callback(h, 0x11, 7, (void *)pkt_mon, &mon), OCSD_ERR_INVALID_PARAM_VAL);
    CHECK_EQ(ocsd_dt_get_decode_stats(h, 0x11, &stats), OCSD_ERR_INVALID_PARAM_VAL); /* no library packet processor */
    CHECK_EQ(ocsd_dt_set_pkt_protocol_printer(h, 0x11, 1), OCSD_ERR_INVALID_PARAM_VAL); /* no printer for custom protocols */

    /* packets: 0x1000, 0x1010, 0x1020 then 2 stray bytes */
    for (i = 0; i < 3; i++) {
        uint32_t v = 0x1000 + 0x10 * (uint32_t)i;
        memcpy(trace + 4 * i, &v, 4);
    }
    trace[12] = 0xAA;
    trace[13] = 0xBB;
    CHECK_EQ(ocsd_dt_process_data(h, OCSD_OP_DATA, 1000, 5, trace, &n), OCSD_RESP_CONT);
    CHECK_EQ(n, 5);
    CHECK_EQ(ocsd_dt_process_data(h, OCSD_OP_DATA, 1005, 9, trace + 5, &n), OCSD_RESP_CONT);
    CHECK_EQ(n, 9);
    CHECK_EQ(el.n, 3);
    for (i = 0; i < el.n && i < 3; i++) {
        CHECK_EQ(el.values[i], 0x1000 + 0x10 * (uint32_t)i);
        CHECK_EQ(el.ids[i], 0x11);
        CHECK_EQ(el.idx[i], 1000 + 4 * (uint32_t)i);
        CHECK_EQ(el.words[i], (uint32_t)mem[16 * i] | ((uint32_t)mem[16 * i + 1] << 8) | ((uint32_t)mem[16 * i + 2] << 16) | ((uint32_t)mem[16 * i + 3] << 24));
    }
    CHECK_EQ(mon.n_data, 3);
    CHECK_EQ(mon.raw_bytes, 12);
    CHECK_EQ(mon.last, 0x1020);
    s_log[0] = 0;
    CHECK_EQ(ocsd_dt_process_data(h, OCSD_OP_EOT, 0, 0, NULL, NULL), OCSD_RESP_CONT);
    CHECK_EQ(mon.n_eot, 1);
    CHECK_STR(s_log, "echo_dcd_0017 : 0x0013 (OCSD_ERR_BAD_PACKET_SEQ) [Bad packet sequence]; TrcIdx=1012; CS ID=11; incomplete packet at end of traceecho_dcd_0017 : echo decoder: end of trace\n");
    CHECK_EQ(ocsd_get_last_err(&eidx, &echan, buf, sizeof(buf)), OCSD_ERR_BAD_PACKET_SEQ);
    CHECK_EQ(eidx, 1012);
    CHECK_EQ(echan, 0x11);
    s_log[0] = 0;
    ocsd_tl_log_mapped_mem_ranges(h);
    CHECK_STR(s_log, "Gen_Info : Mapped Memory Accessors\nGen_Info : BuffAcc; Range::0x1000:103f; Mem Space::Any\nGen_Info : ========================\n");
    CHECK_EQ(ocsd_dt_remove_decoder(h, 0x11), OCSD_OK);
    CHECK_EQ(s_live_decoders, 0);
    CHECK_EQ(ocsd_dt_process_data(h, OCSD_OP_DATA, 0, 4, trace, &n), OCSD_RESP_FATAL_NOT_INIT);
    ocsd_destroy_dcd_tree(h);

    /* ---- packet processing only, on a formatted tree: the sink gets the packets ---- */
    h = ocsd_create_dcd_tree(OCSD_TRC_SRC_FRAME_FORMATTED, OCSD_DFRMTR_FRAME_MEM_ALIGN);
    CHECK_EQ(ocsd_dt_create_decoder(h, "ECHO_DCD", OCSD_CREATE_FLG_PACKET_PROC, &cfg2, &id), OCSD_OK);
    CHECK_EQ(id, 0x22);
    memset(&sink, 0, sizeof(sink));
    memset(&mon, 0, sizeof(mon));
    CHECK_EQ(ocsd_dt_attach_packet_callback(h, 0x22, OCSD_C_API_CB_PKT_SINK, (void *)pkt_sink, &sink), OCSD_OK);
    CHECK_EQ(ocsd_dt_attach_packet_callback(h, 0x22, OCSD_C_API_CB_PKT_MON, (void *)pkt_mon, &mon), OCSD_OK);
    CHECK_EQ(ocsd_dt_attach_packet_callback(h, 0x33, OCSD_C_API_CB_PKT_SINK, (void *)pkt_sink, &sink), OCSD_ERR_INVALID_ID);
    {
        /* one frame: ID 0x22 then 12 bytes = 3 packets, 2 bytes padding for ID 0x22 are a 4th partial packet */
        uint8_t frame[16];
        uint8_t flags = 0;
        uint8_t payload[14];
        int p;
        for (i = 0; i < 3; i++) {
            uint32_t v = 0xA0B0C000u + (uint32_t)i;
            memcpy(payload + 4 * i, &v, 4);
        }
        payload[12] = 0x01;
        payload[13] = 0x02;
        frame[0] = (uint8_t)((0x22 << 1) | 1);
        for (p = 1; p < 15; p++) {
            uint8_t b = payload[p - 1];
            if (p & 1)
                frame[p] = b;
            else {
                frame[p] = b & 0xFE;
                flags |= (uint8_t)((b & 1) << (p / 2));
            }
        }
        frame[15] = flags;
        CHECK_EQ(ocsd_dt_process_data(h, OCSD_OP_DATA, 0, 16, frame, &n), OCSD_RESP_CONT);
        CHECK_EQ(n, 16);
    }
    CHECK_EQ(sink.n_data, 3);
    CHECK_EQ(sink.last, 0xA0B0C002u);
    CHECK_EQ(mon.n_data, 3);
    CHECK_EQ(ocsd_dt_process_data(h, OCSD_OP_EOT, 0, 0, NULL, NULL), OCSD_RESP_CONT);
    CHECK_EQ(sink.n_eot, 1);
    CHECK_EQ(mon.n_eot, 1);
    ocsd_destroy_dcd_tree(h); /* destroys the decoder */
    CHECK_EQ(s_live_decoders, 0);

    /* after deregistration names and protocols are unknown; the protocol
       IDs are not reused */
    CHECK_EQ(ocsd_deregister_decoders(), OCSD_OK);
    CHECK_EQ(ocsd_cust_protocol_to_str(fact.protocol_id, &pkt, buf, sizeof(buf)), OCSD_ERR_NO_PROTOCOL);
    h = ocsd_create_dcd_tree(OCSD_TRC_SRC_SINGLE, 0);
    CHECK_EQ(ocsd_dt_create_decoder(h, "ECHO_DCD", OCSD_CREATE_FLG_FULL_DECODER, &cfg, &id), OCSD_ERR_DCDREG_NAME_UNKNOWN);
    ocsd_destroy_dcd_tree(h);
    CHECK_EQ(ocsd_register_custom_decoder("ECHO_DCD", &fact), OCSD_OK);
    CHECK_EQ(fact.protocol_id, OCSD_PROTOCOL_CUSTOM_0 + 3);
    for (i = 0; i < 6; i++) {
        char name[32];
        snprintf(name, sizeof(name), "ECHO_%d", i);
        CHECK_EQ(ocsd_register_custom_decoder(name, &fact), OCSD_OK);
    }
    CHECK_EQ(fact.protocol_id, OCSD_PROTOCOL_CUSTOM_9);
    CHECK_EQ(ocsd_register_custom_decoder("ONE_TOO_MANY", &fact), OCSD_ERR_DCDREG_TOOMANY);
    CHECK_EQ(ocsd_deregister_decoders(), OCSD_OK);
    return CHECKS_DONE("test_echo_decoder");
}
