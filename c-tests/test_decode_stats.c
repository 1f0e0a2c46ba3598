/*
 * test_decode_stats.c : ocsd_dt_get_decode_stats and
 * ocsd_dt_reset_decode_stats as a client uses them, run under valgrind.
 *
 * OpenCSD hands out a pointer to the packet processor's own statistics
 * block: it is live (its counts change as the decode goes on, also while
 * the tree's callbacks run), it may be asked for from inside those
 * callbacks, and it stays readable until the tree is destroyed. Only the
 * ETMv4 / ETE processors keep statistics; an STM decoder answers
 * OCSD_ERR_NOT_INIT with a zero block.
 *
 * The trace is hand-built ETMv4 (a frame-formatted tree, trace ID 0x10):
 * three junk bytes (dropped while unsynchronised), an A-sync and a trace
 * info packet, then a reserved header (a bad header), then another A-sync
 * and event packets, 42 bytes: three frames' worth.
 *
 * The same binary passes on Debian's OpenCSD 1.3.3 (with
 * OCSD_TEST_OTHER_LIB set, which leaves out the one read this library
 * allows beyond OpenCSD's: a removed decoder's block);
 * c-tests/run_dropin_tests.sh runs it there.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "opencsd/c_api/opencsd_c_api.h"
#include "check.h"

typedef struct {
    dcd_tree_handle_t tree;
    const ocsd_decode_stats_t *held;
    int packets;
    uint64_t total_seen[64];
    uint64_t unsynced_seen[64];
    uint32_t bad_hdr_seen[64];
    int reset_at;
} ctx_t;

static ocsd_datapath_resp_t pkt_cb(const void *p_context, const ocsd_datapath_op_t op, const ocsd_trc_index_t index_sop,
                                   const void *p_packet_in)
{
    ctx_t *c = (ctx_t *)p_context;
    ocsd_decode_stats_t *p = NULL;
    (void)index_sop;
    (void)p_packet_in;
    if (op != OCSD_OP_DATA || c->packets >= 64)
        return OCSD_RESP_CONT;
    if (c->reset_at == c->packets)
        CHECK_EQ(ocsd_dt_reset_decode_stats(c->tree, 0x10), OCSD_OK);
    /* asked for from inside the callback: the same, live block */
    CHECK_EQ(ocsd_dt_get_decode_stats(c->tree, 0x10, &p), OCSD_OK);
    CHECK(p == c->held);
    c->total_seen[c->packets] = c->held->channel_total;
    c->unsynced_seen[c->packets] = c->held->channel_unsynced;
    c->bad_hdr_seen[c->packets] = c->held->bad_header_errs;
    c->packets++;
    return OCSD_RESP_CONT;
}

/* `n` bytes of trace for ID 0x10 as 16-byte frames (ID byte, then up to 14
   data bytes with the flag byte's bits clear: the data bytes' low bits
   are written into even positions as they are) */
static size_t frames(const uint8_t *data, size_t n, uint8_t *out)
{
    size_t at = 0, k = 0;
    while (k < n) {
        uint8_t *f = out + at;
        int i;
        memset(f, 0, 16);
        /* byte 0: new ID 0x10 (id << 1 | 1), its flag bit 0 in byte 15 */
        f[0] = (0x10 << 1) | 1;
        for (i = 1; i < 15 && k < n; i++, k++) {
            if (i % 2 == 0) {
                /* an even byte: its bit 0 goes in the flag byte */
                f[i] = data[k] & 0xfe;
                f[15] |= (uint8_t)((data[k] & 1) << (i / 2));
            } else
                f[i] = data[k];
        }
        at += 16;
    }
    return at;
}

int main(void)
{
    static const uint8_t trace[] = {
        0x11, 0x22, 0x33,                                                    /* junk */
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x80,                                /* A-sync */
        0x01, 0x00,                                                           /* trace info */
        0x0a,                                                                 /* reserved header */
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x80,                                /* A-sync */
        0x71, 0x71, 0x71, 0x71, 0x71, 0x71, 0x71, 0x71, 0x71, 0x71, 0x71, 0x71, /* events: 3 whole frames */
    };
    uint8_t buf[256];
    size_t len = frames(trace, sizeof(trace), buf);
    ocsd_etmv4_cfg cfg;
    ocsd_stm_cfg scfg;
    unsigned char id = 0;
    uint32_t used = 0;
    ocsd_decode_stats_t *p = NULL, *q = NULL;
    ctx_t c;

    memset(&c, 0, sizeof(c));
    c.reset_at = -1;
    memset(&cfg, 0, sizeof(cfg));
    cfg.reg_idr0 = 0x28000EA1;
    cfg.reg_idr1 = 0x4100F403;
    cfg.reg_idr2 = 0x00000488;
    cfg.reg_traceidr = 0x10;
    cfg.arch_ver = ARCH_V8;
    cfg.core_prof = profile_CortexA;

    ocsd_def_errlog_init(OCSD_ERR_SEV_NONE, 0);
    c.tree = ocsd_create_dcd_tree(OCSD_TRC_SRC_FRAME_FORMATTED, OCSD_DFRMTR_FRAME_MEM_ALIGN);
    CHECK(c.tree != C_API_INVALID_TREE_HANDLE);
    CHECK_EQ(ocsd_dt_create_decoder(c.tree, OCSD_BUILTIN_DCD_ETMV4I, OCSD_CREATE_FLG_PACKET_PROC, &cfg, &id), OCSD_OK);
    CHECK_EQ(id, 0x10);
    CHECK_EQ(ocsd_dt_attach_packet_callback(c.tree, 0x10, OCSD_C_API_CB_PKT_SINK, (void *)pkt_cb, &c), OCSD_OK);
    CHECK_EQ(ocsd_dt_get_decode_stats(c.tree, 0x10, &p), OCSD_OK);
    c.held = p;
    CHECK_EQ(p->version, ocsd_get_version());
    CHECK_EQ(p->revision, OCSD_STATS_REVISION);
    CHECK_EQ(p->channel_total, 0);
    /* no decoder for this ID */
    CHECK_EQ(ocsd_dt_get_decode_stats(c.tree, 0x11, &q), OCSD_ERR_INVALID_PARAM_VAL);

    /* the frames one at a time: the processor counts each block when it is
       done with it */
    {
        size_t at;
        for (at = 0; at < len; at += 16)
            CHECK_EQ(ocsd_dt_process_data(c.tree, OCSD_OP_DATA, (ocsd_trc_index_t)at, 16, buf + at, &used), OCSD_RESP_CONT);
    }
    CHECK(c.packets >= 4);
    /* the not-sync packet: the three junk bytes dropped before it */
    CHECK_EQ(c.unsynced_seen[0], 3);
    /* counts at each packet never go down, and end at the whole trace */
    {
        int i;
        for (i = 1; i < c.packets; i++)
            CHECK(c.total_seen[i] >= c.total_seen[i - 1]);
    }
    CHECK_EQ(p->channel_total, sizeof(trace));
    CHECK_EQ(p->channel_unsynced, 3);
    CHECK_EQ(p->bad_header_errs, 1);
    CHECK_EQ(p->bad_sequence_errs, 0);
    /* the demux counts are copied in at each call */
    CHECK_EQ(ocsd_dt_get_decode_stats(c.tree, 0x10, &q), OCSD_OK);
    CHECK(q == p);
    CHECK_EQ(p->demux.valid_id_bytes, sizeof(trace));
    CHECK_EQ(p->demux.frame_bytes + p->demux.valid_id_bytes + p->demux.no_id_bytes, len);

    /* a reset from inside the callback, at the next packet */
    c.reset_at = c.packets;
    CHECK_EQ(ocsd_dt_process_data(c.tree, OCSD_OP_DATA, (ocsd_trc_index_t)len, 16, buf, &used), OCSD_RESP_CONT);
    CHECK(c.packets > c.reset_at);
    CHECK_EQ(c.total_seen[c.reset_at], 0);
    CHECK_EQ(c.unsynced_seen[c.reset_at], 0);
    CHECK_EQ(c.bad_hdr_seen[c.reset_at], 0);
    CHECK_EQ(p->channel_total, 14);

    /* removed: no statistics for the ID; the block stays readable until
       the tree goes (OpenCSD frees it with the decoder: not read there) */
    CHECK_EQ(ocsd_dt_remove_decoder(c.tree, 0x10), OCSD_OK);
    CHECK_EQ(ocsd_dt_get_decode_stats(c.tree, 0x10, &q), OCSD_ERR_INVALID_PARAM_VAL);
    if (!getenv("OCSD_TEST_OTHER_LIB"))
        CHECK_EQ(p->channel_total, 14);
    ocsd_destroy_dcd_tree(c.tree);

    /* STM keeps no statistics: NOT_INIT, a zero block */
    c.tree = ocsd_create_dcd_tree(OCSD_TRC_SRC_SINGLE, 0);
    memset(&scfg, 0, sizeof(scfg));
    scfg.reg_tcsr = 0x20 << 16;
    CHECK_EQ(ocsd_dt_create_decoder(c.tree, OCSD_BUILTIN_DCD_STM, OCSD_CREATE_FLG_PACKET_PROC, &scfg, &id), OCSD_OK);
    p = NULL;
    CHECK_EQ(ocsd_dt_get_decode_stats(c.tree, 0x20, &p), OCSD_ERR_NOT_INIT);
    CHECK(p != NULL);
    if (p) {
        CHECK_EQ(p->version, ocsd_get_version());
        CHECK_EQ(p->channel_total, 0);
    }
    ocsd_destroy_dcd_tree(c.tree);
    return CHECKS_DONE("test_decode_stats");
}
