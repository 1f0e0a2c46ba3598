/* A minimal client built the way packagers build against OpenCSD:
 * headers from the installed include dir, flags from pkg-config or CMake. */
#include <stdio.h>
#include <string.h>
#include "opencsd/c_api/opencsd_c_api.h"

static int elems;

static ocsd_datapath_resp_t on_elem(const void *ctx, const ocsd_trc_index_t idx, const uint8_t id,
                                    const ocsd_generic_trace_elem *elem)
{
    char text[256];
    (void)ctx;
    if (ocsd_gen_elem_str(elem, text, sizeof(text)) == OCSD_OK)
        printf("Idx:%u; ID:%x; %s\n", idx, id, text);
    elems++;
    return OCSD_RESP_CONT;
}

/* No program image: every read answers 0 bytes (OpenCSD's decoder needs a
 * memory access interface attached before it runs). */
static uint32_t no_mem(const void *ctx, const ocsd_vaddr_t addr, const ocsd_mem_space_acc_t space,
                       const uint32_t req, uint8_t *buf)
{
    (void)ctx; (void)addr; (void)space; (void)req; (void)buf;
    return 0;
}

int main(void)
{
    /* One ETMv4 source, trace ID 0x10, as in the juno snapshot. */
    ocsd_etmv4_cfg cfg;
    unsigned char csid = 0;
    uint32_t used = 0;
    /* A-sync, trace info, trace on: enough for the decoder to sync. */
    static const uint8_t trace[] = { 0,0,0,0,0,0,0,0,0,0,0,0x80, 0x01,0x01,0x00, 0x04 };
    dcd_tree_handle_t tree;

    memset(&cfg, 0, sizeof(cfg));
    cfg.reg_idr0 = 0x28000EA1; cfg.reg_idr1 = 0x4100F403; cfg.reg_idr2 = 0x00000488;
    cfg.reg_configr = 0xC1; cfg.reg_traceidr = 0x10;
    cfg.arch_ver = ARCH_V8; cfg.core_prof = profile_CortexA;

    printf("library %s (0x%06x)\n", ocsd_get_version_str(), ocsd_get_version());
    if (ocsd_get_version() != OCSD_VER_NUM)
        return 1;
    tree = ocsd_create_dcd_tree(OCSD_TRC_SRC_SINGLE, 0);
    if (tree == C_API_INVALID_TREE_HANDLE)
        return 2;
    if (ocsd_dt_create_decoder(tree, OCSD_BUILTIN_DCD_ETMV4I, OCSD_CREATE_FLG_FULL_DECODER, &cfg, &csid) != OCSD_OK)
        return 3;
    if (csid != 0x10)
        return 4;
    ocsd_dt_set_gen_elem_outfn(tree, on_elem, NULL);
    if (ocsd_dt_add_callback_mem_acc(tree, 0, ~(ocsd_vaddr_t)0, OCSD_MEM_SPACE_ANY, no_mem, NULL) != OCSD_OK)
        return 8;
    if (!OCSD_DATA_RESP_IS_CONT(ocsd_dt_process_data(tree, OCSD_OP_DATA, 0, sizeof(trace), trace, &used)))
        return 5;
    if (used != sizeof(trace))
        return 6;
    ocsd_dt_process_data(tree, OCSD_OP_EOT, 0, 0, NULL, NULL);
    ocsd_destroy_dcd_tree(tree);
    printf("%d elements\n", elems);
    return elems > 0 ? 0 : 7;
}
