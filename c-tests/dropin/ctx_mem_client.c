/*
 * ctx_mem_client.c : a C API client that answers memory requests the way
 * perf does - only from what the decode has shown it so far.
 *
 * perf's memory callback (cs_etm__mem_access) reads the memory of the
 * process and exception level named by the last PE_CONTEXT element it was
 * given for that trace ID; before that it answers 0 bytes. A library that
 * reads memory before it has delivered the elements that come earlier in
 * the trace (TRACE_ON, PE_CONTEXT) therefore loses instruction ranges.
 *
 * This client decodes a snapshot (a plan from `trc_pkt_lister -print_plan`)
 * with one trace-ID memory callback over the whole address space. The
 * callback answers from the snapshot's memory dumps only when a PE_CONTEXT
 * has been delivered for that trace ID and the requested memory space
 * matches the delivered context's exception level and security state. The
 * element callback answers WAIT at random elements (seeded); the client
 * then FLUSHes, as perf does. It prints every instruction range and
 * address-not-accessible element, and counts:
 *   - reads refused because no context had been shown (or a different one),
 *   - reads made while the client was waiting (between its WAIT answer and
 *     its next FLUSH): OpenCSD makes none.
 *
 * Built once against the public headers, the same binary runs on this
 * library and on an installed OpenCSD (LD_LIBRARY_PATH picks which):
 * c-tests/run_dropin_tests.sh compares the two outputs.
 *
 *   ctx_mem_client [-seed N] [-wait-den N] [-chunk N] PLAN
 */
#define DECODE_SNAPSHOT_NO_MAIN
#pragma GCC diagnostic ignored "-Wunused-function"
#include "../bench/decode_snapshot.c"

#define MAX_IDS 128

typedef struct {
    const plan_t *plan; /* memory: its loaded regions */
    /* context shown to the client per trace ID */
    int shown[MAX_IDS];
    ocsd_pe_context ctx[MAX_IDS];
    /* WAIT answers */
    uint64_t rng;
    unsigned wait_den;
    int waiting;
    /* counts */
    uint64_t elements, ranges, naccs, waits;
    uint64_t reads, refused_no_ctx, refused_space, reads_while_waiting;
} client_t;

static unsigned next_rand(client_t *c)
{
    c->rng = c->rng * 6364136223846793005ULL + 1442695040888963407ULL;
    return (unsigned)(c->rng >> 33);
}

/* The memory space a client derives from a delivered context. */
static ocsd_mem_space_acc_t shown_space(const ocsd_pe_context *p)
{
    int secure = p->security_level == ocsd_sec_secure;
    if (!p->el_valid)
        return secure ? OCSD_MEM_SPACE_S : OCSD_MEM_SPACE_N;
    switch (p->exception_level) {
    case ocsd_EL0:
    case ocsd_EL1:
        return secure ? OCSD_MEM_SPACE_EL1S : OCSD_MEM_SPACE_EL1N;
    case ocsd_EL2:
        return secure ? OCSD_MEM_SPACE_EL2S : OCSD_MEM_SPACE_EL2;
    case ocsd_EL3:
        return OCSD_MEM_SPACE_EL3;
    default:
        return secure ? OCSD_MEM_SPACE_S : OCSD_MEM_SPACE_N;
    }
}

static uint32_t ctx_mem_cb(const void *p_context, const ocsd_vaddr_t address, const ocsd_mem_space_acc_t mem_space,
                       const uint8_t trc_id, const uint32_t req, uint8_t *buf)
{
    client_t *c = (client_t *)p_context;
    c->reads++;
    if (c->waiting)
        c->reads_while_waiting++;
    if (trc_id >= MAX_IDS || !c->shown[trc_id]) {
        c->refused_no_ctx++;
        return 0;
    }
    if ((mem_space & shown_space(&c->ctx[trc_id])) == 0) {
        c->refused_space++;
        return 0;
    }
    return plan_read(c->plan, address, mem_space, req, buf);
}

static ocsd_datapath_resp_t elem_cb(const void *p_context, const ocsd_trc_index_t index_sop, const uint8_t trc_chan_id,
                                    const ocsd_generic_trace_elem *e)
{
    client_t *c = (client_t *)p_context;
    c->elements++;
    switch (e->elem_type) {
    case OCSD_GEN_TRC_ELEM_PE_CONTEXT:
        if (trc_chan_id < MAX_IDS) {
            c->shown[trc_chan_id] = 1;
            c->ctx[trc_chan_id] = e->context;
        }
        break;
    case OCSD_GEN_TRC_ELEM_INSTR_RANGE:
        c->ranges++;
        printf("Idx:%" PRIu64 "; ID:%x; RANGE 0x%" PRIx64 "-0x%" PRIx64 " n=%u isa=%d exec=%u type=%d\n", (uint64_t)index_sop,
               trc_chan_id, (uint64_t)e->st_addr, (uint64_t)e->en_addr, e->num_instr_range, (int)e->isa,
               (unsigned)e->last_instr_exec, (int)e->last_i_type);
        break;
    case OCSD_GEN_TRC_ELEM_ADDR_NACC:
        c->naccs++;
        printf("Idx:%" PRIu64 "; ID:%x; NACC 0x%" PRIx64 "\n", (uint64_t)index_sop, trc_chan_id, (uint64_t)e->st_addr);
        break;
    default:
        break;
    }
    if (c->wait_den && next_rand(c) % c->wait_den == 0) {
        c->waits++;
        c->waiting = 1;
        return OCSD_RESP_WAIT;
    }
    return OCSD_RESP_CONT;
}

/* The client answered WAIT: when the tree is flushed it is called again. */
static void end_wait(void *arg)
{
    ((client_t *)arg)->waiting = 0;
}

int main(int argc, char **argv)
{
    static plan_t plan;
    static client_t c;
    size_t chunk = 0, size = 0;
    uint8_t *buf;
    const char *plan_file = NULL;
    dcd_tree_handle_t t;
    int i, single, created = 0;
    uint32_t dfmt;

    c.rng = 1;
    c.wait_den = 7;
    for (i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-seed") && i + 1 < argc)
            c.rng = strtoull(argv[++i], NULL, 0) * 2 + 1;
        else if (!strcmp(argv[i], "-wait-den") && i + 1 < argc)
            c.wait_den = (unsigned)strtoul(argv[++i], NULL, 0);
        else if (!strcmp(argv[i], "-chunk") && i + 1 < argc)
            chunk = strtoul(argv[++i], NULL, 0);
        else if (argv[i][0] != '-')
            plan_file = argv[i];
        else {
            fprintf(stderr, "usage: ctx_mem_client [-seed N] [-wait-den N] [-chunk N] PLAN\n");
            return 2;
        }
    }
    buf = load_plan_input(plan_file, &plan, &size, &single, &dfmt);
    if (!buf)
        return 2;
    if (chunk == 0)
        chunk = size ? size : 1;
    if (!single && chunk % 16)
        chunk += 16 - chunk % 16;

    c.plan = &plan;

    t = ocsd_create_dcd_tree(single ? OCSD_TRC_SRC_SINGLE : OCSD_TRC_SRC_FRAME_FORMATTED, single ? 0 : dfmt);
    if (t == C_API_INVALID_TREE_HANDLE)
        return 1;
    for (i = 0; i < plan.n_dcd; i++) {
        unsigned char cs_id = 0;
        if (ocsd_dt_create_decoder(t, plan.dcd[i].name, OCSD_CREATE_FLG_FULL_DECODER, &plan.dcd[i].cfg, &cs_id) == OCSD_OK)
            created++;
        if (single)
            break;
    }
    if (!created) {
        printf("no decoder\n");
        ocsd_destroy_dcd_tree(t);
        return 1;
    }
    ocsd_dt_add_callback_trcid_mem_acc(t, 0, ~(ocsd_vaddr_t)0, OCSD_MEM_SPACE_ANY, ctx_mem_cb, &c);
    ocsd_dt_set_gen_elem_outfn(t, elem_cb, &c);
    feed_hooked(t, buf, size, chunk, end_wait, &c);
    ocsd_destroy_dcd_tree(t);

    printf("elements %" PRIu64 ", ranges %" PRIu64 ", nacc %" PRIu64 "\n", c.elements, c.ranges, c.naccs);
    printf("memory reads %" PRIu64 ": refused before any context %" PRIu64 ", refused for another context %" PRIu64
           ", made while the client waited %" PRIu64 "\n",
           c.reads, c.refused_no_ctx, c.refused_space, c.reads_while_waiting);
    fprintf(stderr, "waits answered: %" PRIu64 "\n", c.waits);
    free(buf);
    free_plan(&plan);
    return 0;
}
