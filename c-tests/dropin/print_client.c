/*
 * print_client.c : a C API client whose own printf output interleaves with
 * the library's printing (packet printer, raw frame printer, element
 * printer, ocsd_def_errlog_msgout), for comparing the output order and
 * text of two libraries with one binary.
 *
 * OpenCSD writes its printers' and logger's text through the C library's
 * stdout / stderr streams and flushes them after each message, so in a file
 * or pipe the lines appear in call order with the client's printf lines.
 * With a string-print callback (ocsd_def_errlog_set_strprint_cb) every
 * string the library would print goes to the callback instead.
 *
 *   print_client [-out stdout|stderr|cb|cbraw|file:NAME] [-wait N] [-raw]
 *                [-elem-printer] [-chunk N] [-dfmt FLAGS] [-stats N] PLAN
 *
 * The decode tree is built from a plan (`trc_pkt_lister -print_plan`):
 * full decoders with the packet printer attached as monitor to each, memory
 * through a client callback over the snapshot's dumps, an element callback
 * that printf's a short line per element and answers WAIT every N elements
 * (or the library's element printer with -elem-printer), the raw frame
 * printer with -raw. -out cb prints each callback string as "[cb LEN] TEXT",
 * -out cbraw exactly as the library would have printed it (so the output
 * equals that of -out stdout). The client printf's a line before each data path call
 * and sends a message through ocsd_def_errlog_msgout now and then. stdout
 * is left fully buffered when it is a file, as any C program's. -dfmt sets
 * the frame deformatter's OCSD_DFRMTR_* flags (default: from the plan's
 * buffer format), e.g. 0x24 for perf's memory-aligned frames with 4x FSYNC
 * resets. -stats N prints ocsd_dt_get_decode_stats's answer for the
 * element's trace ID from inside every Nth element callback, and for each
 * trace ID after each data path call, with the counts of the first block
 * it handed out, read where it is (OpenCSD's block is its packet
 * processor's own, live).
 */
#define DECODE_SNAPSHOT_NO_MAIN
#pragma GCC diagnostic ignored "-Wunused-function"
#include "../bench/decode_snapshot.c"

static plan_t plan; /* memory: its loaded regions */
static unsigned s_wait_every;
static unsigned s_stats_every;
static dcd_tree_handle_t s_tree;
static const ocsd_decode_stats_t *s_held_stats; /* a block kept from an earlier call */
static uint8_t s_ids[MAX_DECODERS]; /* the decoders' trace IDs */
static int s_n_ids;

/* the statistics of trace ID `id` as ocsd_dt_get_decode_stats gives them,
   and those of the block kept from an earlier call, read where it is */
static void print_stats(const char *where, uint8_t id)
{
    ocsd_decode_stats_t *p = NULL;
    ocsd_err_t err = ocsd_dt_get_decode_stats(s_tree, id, &p);
    printf("client: stats %s id %x: err %d", where, id, (int)err);
    if (err == OCSD_OK && p)
        printf(" total %" PRIu64 " unsynced %" PRIu64 " bad hdr %u bad seq %u demux %" PRIu64 "/%" PRIu64 "/%" PRIu64,
               (uint64_t)p->channel_total, (uint64_t)p->channel_unsynced, p->bad_header_errs, p->bad_sequence_errs,
               (uint64_t)p->demux.frame_bytes, (uint64_t)p->demux.no_id_bytes, (uint64_t)p->demux.valid_id_bytes);
    if (err == OCSD_OK && p && !s_held_stats)
        s_held_stats = p;
    if (s_held_stats)
        printf("; held total %" PRIu64 " unsynced %" PRIu64 " bad hdr %u bad seq %u", (uint64_t)s_held_stats->channel_total,
               (uint64_t)s_held_stats->channel_unsynced, s_held_stats->bad_header_errs, s_held_stats->bad_sequence_errs);
    printf("\n");
}
static unsigned long s_elems;
static unsigned long s_cb_strings;

static uint32_t pmem_cb(const void *p_context, const ocsd_vaddr_t address, const ocsd_mem_space_acc_t mem_space,
                        const uint32_t req, uint8_t *buf)
{
    (void)p_context;
    return plan_read(&plan, address, mem_space, req, buf);
}

static ocsd_datapath_resp_t pelem_cb(const void *p_context, const ocsd_trc_index_t index_sop, const uint8_t trc_chan_id,
                                     const ocsd_generic_trace_elem *e)
{
    (void)p_context;
    s_elems++;
    printf("client: element %lu idx %" PRIu64 " id %x type %d\n", s_elems, (uint64_t)index_sop, trc_chan_id, (int)e->elem_type);
    if (s_elems % 50 == 0)
        ocsd_def_errlog_msgout("client: message through the library logger\n");
    if (s_stats_every && s_elems % s_stats_every == 0)
        print_stats("in callback", trc_chan_id);
    if (s_wait_every && s_elems % s_wait_every == 0) {
        printf("client: WAIT\n");
        return OCSD_RESP_WAIT;
    }
    return OCSD_RESP_CONT;
}

static int s_cb_raw;

static void str_cb(const void *p_context, const char *psz_msg_str, const int str_len)
{
    (void)p_context;
    s_cb_strings++;
    if (s_cb_raw) {
        /* exactly what the library would have printed */
        fwrite(psz_msg_str, 1, (size_t)str_len, stdout);
        return;
    }
    printf("[cb %d] %s", str_len, psz_msg_str);
    if (str_len > 0 && psz_msg_str[str_len - 1] != '\n')
        printf("\n");
}

int main(int argc, char **argv)
{
    const char *plan_file = NULL, *out = "stdout";
    size_t chunk = 0, size = 0, pos = 0;
    int raw = 0, elem_printer = 0, i, single, calls = 0;
    uint8_t *buf;
    dcd_tree_handle_t t;
    uint32_t dfmt, dfmt_opt = 0;
    ocsd_datapath_resp_t resp = OCSD_RESP_CONT;

    for (i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-out") && i + 1 < argc)
            out = argv[++i];
        else if (!strcmp(argv[i], "-wait") && i + 1 < argc)
            s_wait_every = (unsigned)strtoul(argv[++i], NULL, 0);
        else if (!strcmp(argv[i], "-chunk") && i + 1 < argc)
            chunk = strtoul(argv[++i], NULL, 0);
        else if (!strcmp(argv[i], "-dfmt") && i + 1 < argc)
            dfmt_opt = (uint32_t)strtoul(argv[++i], NULL, 0);
        else if (!strcmp(argv[i], "-stats") && i + 1 < argc)
            s_stats_every = (unsigned)strtoul(argv[++i], NULL, 0);
        else if (!strcmp(argv[i], "-raw"))
            raw = 1;
        else if (!strcmp(argv[i], "-elem-printer"))
            elem_printer = 1;
        else if (argv[i][0] != '-')
            plan_file = argv[i];
        else {
            fprintf(stderr, "usage: print_client [-out stdout|stderr|cb|cbraw|file:NAME] [-wait N] [-raw] [-elem-printer] [-chunk N] [-dfmt FLAGS] [-stats N] PLAN\n");
            return 2;
        }
    }
    buf = load_plan_input(plan_file, &plan, &size, &single, &dfmt);
    if (!buf)
        return 2;
    if (dfmt_opt)
        dfmt = dfmt_opt;
    if (chunk == 0)
        chunk = 4096;
    if (!single && chunk % 16)
        chunk += 16 - chunk % 16;

    printf("client: start\n");
    ocsd_def_errlog_init(OCSD_ERR_SEV_ERROR, 1);
    t = ocsd_create_dcd_tree(single ? OCSD_TRC_SRC_SINGLE : OCSD_TRC_SRC_FRAME_FORMATTED, single ? 0 : dfmt);
    if (t == C_API_INVALID_TREE_HANDLE)
        return 1;
    s_tree = t;
    if (!strcmp(out, "stdout"))
        ocsd_def_errlog_config_output(C_API_MSGLOGOUT_FLG_STDOUT, NULL);
    else if (!strcmp(out, "stderr"))
        ocsd_def_errlog_config_output(C_API_MSGLOGOUT_FLG_STDERR, NULL);
    else if (!strncmp(out, "file:", 5))
        ocsd_def_errlog_config_output(C_API_MSGLOGOUT_FLG_FILE, out + 5);
    else if (!strcmp(out, "cb") || !strcmp(out, "cbraw")) {
        s_cb_raw = !strcmp(out, "cbraw");
        ocsd_def_errlog_config_output(0, NULL);
        ocsd_def_errlog_set_strprint_cb(t, NULL, str_cb);
    }
    for (i = 0; i < plan.n_dcd; i++) {
        unsigned char cs_id = 0;
        if (ocsd_dt_create_decoder(t, plan.dcd[i].name, OCSD_CREATE_FLG_FULL_DECODER, &plan.dcd[i].cfg, &cs_id) == OCSD_OK) {
            ocsd_dt_set_pkt_protocol_printer(t, cs_id, 1);
            s_ids[s_n_ids++] = cs_id;
        }
        if (single)
            break;
    }
    if (raw && !single)
        ocsd_dt_set_raw_frame_printer(t, OCSD_DFRMTR_PACKED_RAW_OUT | OCSD_DFRMTR_UNPACKED_RAW_OUT);
    ocsd_dt_add_callback_mem_acc(t, 0, ~(ocsd_vaddr_t)0, OCSD_MEM_SPACE_ANY, pmem_cb, NULL);
    if (elem_printer)
        ocsd_dt_set_gen_elem_printer(t);
    else
        ocsd_dt_set_gen_elem_outfn(t, pelem_cb, NULL);
    ocsd_def_errlog_msgout("client: tree ready\n");

    while (pos < size) {
        calls++;
        if (OCSD_DATA_RESP_IS_WAIT(resp)) {
            printf("client: FLUSH\n");
            resp = ocsd_dt_process_data(t, OCSD_OP_FLUSH, 0, 0, NULL, NULL);
        } else {
            uint32_t used = 0;
            size_t n = size - pos < chunk ? size - pos : chunk;
            printf("client: DATA at %zu\n", pos);
            resp = ocsd_dt_process_data(t, OCSD_OP_DATA, (ocsd_trc_index_t)pos, (uint32_t)n, buf + pos, &used);
            pos += used;
        }
        if (s_stats_every)
            for (i = 0; i < s_n_ids; i++)
                print_stats("after call", s_ids[i]);
        if (OCSD_DATA_RESP_IS_FATAL(resp)) {
            printf("client: fatal %d\n", (int)resp);
            break;
        }
    }
    while (OCSD_DATA_RESP_IS_WAIT(resp)) {
        printf("client: FLUSH\n");
        resp = ocsd_dt_process_data(t, OCSD_OP_FLUSH, 0, 0, NULL, NULL);
    }
    printf("client: EOT\n");
    resp = ocsd_dt_process_data(t, OCSD_OP_EOT, 0, 0, NULL, NULL);
    while (OCSD_DATA_RESP_IS_WAIT(resp)) {
        printf("client: FLUSH\n");
        resp = ocsd_dt_process_data(t, OCSD_OP_FLUSH, 0, 0, NULL, NULL);
    }
    ocsd_destroy_dcd_tree(t);
    printf("client: end, %lu elements, %lu strings to the callback, %d data path calls\n", s_elems, s_cb_strings, calls);
    free(buf);
    free_plan(&plan);
    return 0;
}
