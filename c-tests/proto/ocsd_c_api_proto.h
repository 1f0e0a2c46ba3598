/*
 * ocsd_c_api_proto.h : TEMPORARY hand-written prototypes for the C tests.
 *
 * The minimal subset of OpenCSD 1.8.0's C API headers that the tests in
 * c-tests/ use (types, constants, the 34 functions). The real headers are
 * generated from the Rust sources on branch `headers` (include/opencsd/...);
 * once they land, the tests include "opencsd/c_api/opencsd_c_api.h" and this
 * file is deleted. Layouts follow shared/abi/opencsd-1.8.0-struct-layout.txt.
 */
#ifndef OCSD_C_API_PROTO_H_INCLUDED
#define OCSD_C_API_PROTO_H_INCLUDED

#include <stdint.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- ocsd_if_types.h subset ---- */
typedef uint32_t ocsd_trc_index_t;
#define OCSD_BAD_TRC_INDEX ((ocsd_trc_index_t)-1)
#define OCSD_BAD_CS_SRC_ID ((uint8_t)0xFF)

typedef int ocsd_err_t;
#define OCSD_OK 0
#define OCSD_ERR_FAIL 1
#define OCSD_ERR_NOT_INIT 3
#define OCSD_ERR_INVALID_ID 4
#define OCSD_ERR_INVALID_PARAM_VAL 6
#define OCSD_ERR_INVALID_PARAM_TYPE 7
#define OCSD_ERR_NO_PROTOCOL 9
#define OCSD_ERR_ATTACH_TOO_MANY 10
#define OCSD_ERR_ATTACH_INVALID_PARAM 11
#define OCSD_ERR_BAD_PACKET_SEQ 19
#define OCSD_ERR_DCDT_NO_FORMATTER 29
#define OCSD_ERR_MEM_ACC_OVERLAP 30
#define OCSD_ERR_MEM_ACC_FILE_NOT_FOUND 31
#define OCSD_ERR_MEM_ACC_RANGE_INVALID 33
#define OCSD_ERR_DCDREG_NAME_REPEAT 39
#define OCSD_ERR_DCDREG_NAME_UNKNOWN 40
#define OCSD_ERR_DCDREG_TOOMANY 42

typedef int ocsd_err_severity_t;
#define OCSD_ERR_SEV_NONE 0
#define OCSD_ERR_SEV_ERROR 1
#define OCSD_ERR_SEV_WARN 2
#define OCSD_ERR_SEV_INFO 3

typedef int ocsd_datapath_op_t;
#define OCSD_OP_DATA 0
#define OCSD_OP_EOT 1
#define OCSD_OP_FLUSH 2
#define OCSD_OP_RESET 3

typedef int ocsd_datapath_resp_t;
#define OCSD_RESP_CONT 0
#define OCSD_RESP_WARN_CONT 1
#define OCSD_RESP_ERR_CONT 2
#define OCSD_RESP_WAIT 3
#define OCSD_RESP_WARN_WAIT 4
#define OCSD_RESP_ERR_WAIT 5
#define OCSD_RESP_FATAL_NOT_INIT 6
#define OCSD_RESP_FATAL_INVALID_OP 7
#define OCSD_RESP_FATAL_INVALID_PARAM 8
#define OCSD_RESP_FATAL_INVALID_DATA 9
#define OCSD_RESP_FATAL_SYS_ERR 10
#define OCSD_DATA_RESP_IS_CONT(x) ((x) < OCSD_RESP_WAIT)
#define OCSD_DATA_RESP_IS_WAIT(x) (((x) >= OCSD_RESP_WAIT) && ((x) < OCSD_RESP_FATAL_NOT_INIT))
#define OCSD_DATA_RESP_IS_FATAL(x) ((x) >= OCSD_RESP_FATAL_NOT_INIT)

#define OCSD_DFRMTR_HAS_FSYNCS 0x01
#define OCSD_DFRMTR_FRAME_MEM_ALIGN 0x04
#define OCSD_DFRMTR_PACKED_RAW_OUT 0x08
#define OCSD_DFRMTR_UNPACKED_RAW_OUT 0x10

typedef int ocsd_dcd_tree_src_t;
#define OCSD_TRC_SRC_FRAME_FORMATTED 0
#define OCSD_TRC_SRC_SINGLE 1

typedef uint64_t ocsd_vaddr_t;
typedef int ocsd_isa;
typedef int ocsd_sec_level;
typedef int ocsd_ex_level;
typedef int ocsd_instr_type;
typedef int ocsd_instr_subtype;

typedef struct _ocsd_arch_profile_t { int arch; int profile; } ocsd_arch_profile_t;

typedef struct _ocsd_instr_info {
    ocsd_arch_profile_t pe_type;
    ocsd_isa isa;
    ocsd_vaddr_t instr_addr;
    uint32_t opcode;
    uint8_t dsb_dmb_waypoints;
    uint8_t wfi_wfe_branch;
    uint8_t track_it_block;
    ocsd_instr_type type;
    ocsd_vaddr_t branch_addr;
    ocsd_isa next_isa;
    uint8_t instr_size;
    uint8_t is_conditional;
    uint8_t is_link;
    uint8_t thumb_it_conditions;
    ocsd_instr_subtype sub_type;
} ocsd_instr_info;

typedef struct _ocsd_pe_context {
    ocsd_sec_level security_level;
    ocsd_ex_level exception_level;
    uint32_t context_id;
    uint32_t vmid;
    uint32_t flags; /* bits64:1 ctxt_id_valid:1 vmid_valid:1 el_valid:1 */
} ocsd_pe_context;

typedef int ocsd_mem_space_acc_t;
#define OCSD_MEM_SPACE_EL1N 0x2
#define OCSD_MEM_SPACE_ANY 0xFF

typedef uint32_t (*Fn_MemAcc_CB)(const void *p_context, const ocsd_vaddr_t address, const ocsd_mem_space_acc_t mem_space, const uint32_t reqBytes, uint8_t *byteBuffer);
typedef uint32_t (*Fn_MemAccID_CB)(const void *p_context, const ocsd_vaddr_t address, const ocsd_mem_space_acc_t mem_space, const uint8_t trcID, const uint32_t reqBytes, uint8_t *byteBuffer);

typedef struct _ocsd_file_mem_region {
    size_t file_offset;
    ocsd_vaddr_t start_address;
    size_t region_size;
} ocsd_file_mem_region_t;

typedef int ocsd_trace_protocol_t;
#define OCSD_PROTOCOL_UNKNOWN 0
#define OCSD_PROTOCOL_ETMV3 1
#define OCSD_PROTOCOL_ETMV4I 2
#define OCSD_PROTOCOL_ETMV4D 3
#define OCSD_PROTOCOL_CUSTOM_0 100
#define OCSD_PROTOCOL_CUSTOM_9 109
#define OCSD_PROTOCOL_END 110
#define OCSD_PROTOCOL_IS_CUSTOM(P) (((P) >= OCSD_PROTOCOL_CUSTOM_0) && ((P) < OCSD_PROTOCOL_END))

#define OCSD_CREATE_FLG_PACKET_PROC 0x01
#define OCSD_CREATE_FLG_FULL_DECODER 0x02
#define OCSD_CREATE_FLG_INST_ID 0x04

typedef struct _ocsd_demux_stats {
    uint64_t valid_id_bytes;
    uint64_t no_id_bytes;
    uint64_t reserved_id_bytes;
    uint64_t unknown_id_bytes;
    uint64_t frame_bytes;
} ocsd_demux_stats_t;

typedef struct _ocsd_decode_stats {
    uint32_t version;
    uint16_t revision;
    uint64_t channel_total;
    uint64_t channel_unsynced;
    uint32_t bad_header_errs;
    uint32_t bad_sequence_errs;
    ocsd_demux_stats_t demux;
} ocsd_decode_stats_t;

/* ---- trc_gen_elem_types.h subset ---- */
typedef int ocsd_gen_trc_elem_t;
#define OCSD_GEN_TRC_ELEM_UNKNOWN 0
#define OCSD_GEN_TRC_ELEM_NO_SYNC 1
#define OCSD_GEN_TRC_ELEM_TRACE_ON 2
#define OCSD_GEN_TRC_ELEM_EO_TRACE 3
#define OCSD_GEN_TRC_ELEM_CUSTOM 19

typedef struct _ocsd_generic_trace_elem {
    ocsd_gen_trc_elem_t elem_type;
    ocsd_isa isa;
    ocsd_vaddr_t st_addr;
    ocsd_vaddr_t en_addr;
    ocsd_pe_context context;
    uint64_t timestamp;
    uint32_t cycle_count;
    ocsd_instr_type last_i_type;
    ocsd_instr_subtype last_i_subtype;
    uint32_t flag_bits;
    union { uint32_t exception_number; uint32_t num_instr_range; uint64_t raw[2]; } payload;
    const void *ptr_extended_data;
} ocsd_generic_trace_elem;

/* ---- ocsd_c_api_types.h ---- */
typedef void *dcd_tree_handle_t;
#define C_API_INVALID_TREE_HANDLE (dcd_tree_handle_t)0
#define C_API_MSGLOGOUT_FLG_NONE 0x0
#define C_API_MSGLOGOUT_FLG_FILE 0x1
#define C_API_MSGLOGOUT_FLG_STDERR 0x2
#define C_API_MSGLOGOUT_FLG_STDOUT 0x4
#define C_API_MSGLOGOUT_MASK 0x7

typedef ocsd_datapath_resp_t (*FnTraceElemIn)(const void *p_context, const ocsd_trc_index_t index_sop, const uint8_t trc_chan_id, const ocsd_generic_trace_elem *elem);
typedef ocsd_datapath_resp_t (*FnDefPktDataIn)(const void *p_context, const ocsd_datapath_op_t op, const ocsd_trc_index_t index_sop, const void *p_packet_in);
typedef void (*FnDefPktDataMon)(const void *p_context, const ocsd_datapath_op_t op, const ocsd_trc_index_t index_sop, const void *p_packet_in, const uint32_t size, const uint8_t *p_data);
typedef void (*FnDefLoggerPrintStrCB)(const void *p_context, const char *psz_msg_str, const int str_len);

typedef enum _ocsd_c_api_cb_types {
    OCSD_C_API_CB_PKT_SINK,
    OCSD_C_API_CB_PKT_MON,
} ocsd_c_api_cb_types;

/* ---- ocsd_c_api_custom.h ---- */
typedef ocsd_datapath_resp_t (*fnTraceDataIn)(const void *decoder_handle, const ocsd_datapath_op_t op, const ocsd_trc_index_t index, const uint32_t dataBlockSize, const uint8_t *pDataBlock, uint32_t *numBytesProcessed);
typedef void (*fnUpdatePktMonFlags)(const void *decoder_handle, const int flags);
#define OCSD_CUST_DCD_PKT_CB_USE_MON 0x1
#define OCSD_CUST_DCD_PKT_CB_USE_SINK 0x2

typedef struct _ocsd_extern_dcd_inst {
    fnTraceDataIn fn_data_in;
    fnUpdatePktMonFlags fn_update_pkt_mon;
    void *decoder_handle;
    char *p_decoder_name;
    uint8_t cs_id;
} ocsd_extern_dcd_inst_t;

typedef ocsd_datapath_resp_t (*fnGenElemOpCB)(const void *lib_context, const ocsd_trc_index_t index_sop, const uint8_t trc_chan_id, const ocsd_generic_trace_elem *elem);
typedef void (*fnLogErrorCB)(const void *lib_context, const ocsd_err_severity_t filter_level, const ocsd_err_t code, const ocsd_trc_index_t idx, const uint8_t chan_id, const char *pMsg);
typedef void (*fnLogMsgCB)(const void *lib_context, const ocsd_err_severity_t filter_level, const char *msg);
typedef ocsd_err_t (*fnDecodeArmInstCB)(const void *lib_context, ocsd_instr_info *instr_info);
typedef ocsd_err_t (*fnMemAccessCB)(const void *lib_context, const ocsd_vaddr_t address, const uint8_t cs_trace_id, const ocsd_mem_space_acc_t mem_space, uint32_t *num_bytes, uint8_t *p_buffer);
typedef void (*fnPktMonCB)(const void *lib_context, const ocsd_datapath_op_t op, const ocsd_trc_index_t index_sop, const void *pkt, const uint32_t size, const uint8_t *p_data);
typedef ocsd_datapath_resp_t (*fnPktDataSinkCB)(const void *lib_context, const ocsd_datapath_op_t op, const ocsd_trc_index_t index_sop, const void *pkt);

typedef struct _ocsd_extern_dcd_cb_fns {
    fnGenElemOpCB fn_gen_elem_out;
    fnLogErrorCB fn_log_error;
    fnLogMsgCB fn_log_msg;
    fnDecodeArmInstCB fn_arm_instruction_decode;
    fnMemAccessCB fn_memory_access;
    fnPktMonCB fn_packet_mon;
    fnPktDataSinkCB fn_packet_data_sink;
    int packetCBFlags;
    const void *lib_context;
} ocsd_extern_dcd_cb_fns;

typedef ocsd_err_t (*fnCreateCustomDecoder)(const int create_flags, const void *decoder_cfg, const ocsd_extern_dcd_cb_fns *p_lib_callbacks, ocsd_extern_dcd_inst_t *p_decoder_inst);
typedef ocsd_err_t (*fnDestroyCustomDecoder)(const void *decoder_handle);
typedef ocsd_err_t (*fnGetCSIDFromConfig)(const void *decoder_cfg, unsigned char *p_csid);
typedef ocsd_err_t (*fnPacketToString)(const void *trc_pkt, char *buffer, const int buflen);

typedef struct _ocsd_extern_dcd_fact {
    fnCreateCustomDecoder createDecoder;
    fnDestroyCustomDecoder destroyDecoder;
    fnGetCSIDFromConfig csidFromConfig;
    fnPacketToString pktToString;
    ocsd_trace_protocol_t protocol_id;
} ocsd_extern_dcd_fact_t;

/* ---- opencsd_c_api.h: the 34 functions ---- */
uint32_t ocsd_get_version(void);
const char *ocsd_get_version_str(void);
dcd_tree_handle_t ocsd_create_dcd_tree(const ocsd_dcd_tree_src_t src_type, const uint32_t deformatterCfgFlags);
void ocsd_destroy_dcd_tree(const dcd_tree_handle_t handle);
ocsd_datapath_resp_t ocsd_dt_process_data(const dcd_tree_handle_t handle, const ocsd_datapath_op_t op, const ocsd_trc_index_t index, const uint32_t dataBlockSize, const uint8_t *pDataBlock, uint32_t *numBytesProcessed);
ocsd_err_t ocsd_dt_set_gen_elem_outfn(const dcd_tree_handle_t handle, FnTraceElemIn pFn, const void *p_context);
ocsd_err_t ocsd_dt_create_decoder(const dcd_tree_handle_t handle, const char *decoder_name, const int create_flags, const void *decoder_cfg, unsigned char *pCSID);
ocsd_err_t ocsd_dt_remove_decoder(const dcd_tree_handle_t handle, const unsigned char CSID);
ocsd_err_t ocsd_dt_attach_packet_callback(const dcd_tree_handle_t handle, const unsigned char CSID, const ocsd_c_api_cb_types callback_type, void *p_fn_callback_data, const void *p_context);
ocsd_err_t ocsd_dt_get_decode_stats(const dcd_tree_handle_t handle, const unsigned char CSID, ocsd_decode_stats_t **p_stats_block);
ocsd_err_t ocsd_dt_reset_decode_stats(const dcd_tree_handle_t handle, const unsigned char CSID);
ocsd_err_t ocsd_dt_add_binfile_mem_acc(const dcd_tree_handle_t handle, const ocsd_vaddr_t address, const ocsd_mem_space_acc_t mem_space, const char *filepath);
ocsd_err_t ocsd_dt_add_binfile_region_mem_acc(const dcd_tree_handle_t handle, const ocsd_file_mem_region_t *region_array, const int num_regions, const ocsd_mem_space_acc_t mem_space, const char *filepath);
ocsd_err_t ocsd_dt_add_buffer_mem_acc(const dcd_tree_handle_t handle, const ocsd_vaddr_t address, const ocsd_mem_space_acc_t mem_space, const uint8_t *p_mem_buffer, const uint32_t mem_length);
ocsd_err_t ocsd_dt_add_callback_mem_acc(const dcd_tree_handle_t handle, const ocsd_vaddr_t st_address, const ocsd_vaddr_t en_address, const ocsd_mem_space_acc_t mem_space, Fn_MemAcc_CB p_cb_func, const void *p_context);
ocsd_err_t ocsd_dt_add_callback_trcid_mem_acc(const dcd_tree_handle_t handle, const ocsd_vaddr_t st_address, const ocsd_vaddr_t en_address, const ocsd_mem_space_acc_t mem_space, Fn_MemAccID_CB p_cb_func, const void *p_context);
ocsd_err_t ocsd_dt_remove_mem_acc(const dcd_tree_handle_t handle, const ocsd_vaddr_t st_address, const ocsd_mem_space_acc_t mem_space);
void ocsd_tl_log_mapped_mem_ranges(const dcd_tree_handle_t handle);
ocsd_err_t ocsd_dt_set_mem_acc_cacheing(const dcd_tree_handle_t handle, const int enable, const uint16_t page_size, const int nr_pages);
ocsd_err_t ocsd_def_errlog_init(const ocsd_err_severity_t verbosity, const int create_output_logger);
ocsd_err_t ocsd_def_errlog_config_output(const int output_flags, const char *log_file_name);
ocsd_err_t ocsd_def_errlog_set_strprint_cb(const dcd_tree_handle_t handle, void *p_context, FnDefLoggerPrintStrCB p_str_print_cb);
void ocsd_def_errlog_msgout(const char *msg);
ocsd_err_t ocsd_pkt_str(const ocsd_trace_protocol_t pkt_protocol, const void *p_pkt, char *buffer, const int buffer_size);
ocsd_err_t ocsd_gen_elem_str(const ocsd_generic_trace_elem *p_pkt, char *buffer, const int buffer_size);
void ocsd_gen_elem_init(ocsd_generic_trace_elem *p_pkt, const ocsd_gen_trc_elem_t elem_type);
ocsd_err_t ocsd_dt_set_raw_frame_printer(const dcd_tree_handle_t handle, int flags);
ocsd_err_t ocsd_dt_set_gen_elem_printer(const dcd_tree_handle_t handle);
ocsd_err_t ocsd_dt_set_pkt_protocol_printer(const dcd_tree_handle_t handle, uint8_t cs_id, int monitor);
void ocsd_err_str(const ocsd_err_t err, char *buffer, const int buffer_size);
ocsd_err_t ocsd_get_last_err(ocsd_trc_index_t *index, uint8_t *chan_id, char *message, const int message_len);
ocsd_err_t ocsd_register_custom_decoder(const char *name, ocsd_extern_dcd_fact_t *p_dcd_fact);
ocsd_err_t ocsd_deregister_decoders(void);
ocsd_err_t ocsd_cust_protocol_to_str(const ocsd_trace_protocol_t pkt_protocol, const void *trc_pkt, char *buffer, const int buflen);

#ifdef __cplusplus
}
#endif

/* layout checks against OpenCSD 1.8.0 */
#ifdef __cplusplus
#define OCSD_PROTO_ASSERT static_assert
#else
#define OCSD_PROTO_ASSERT _Static_assert
#endif
OCSD_PROTO_ASSERT(sizeof(ocsd_generic_trace_elem) == 96, "ocsd_generic_trace_elem size");
OCSD_PROTO_ASSERT(offsetof(ocsd_generic_trace_elem, payload) == 72, "payload offset");
OCSD_PROTO_ASSERT(sizeof(ocsd_decode_stats_t) == 72, "ocsd_decode_stats_t size");
OCSD_PROTO_ASSERT(sizeof(ocsd_instr_info) == 64, "ocsd_instr_info size");
OCSD_PROTO_ASSERT(sizeof(ocsd_extern_dcd_inst_t) == 40, "ocsd_extern_dcd_inst_t size");
OCSD_PROTO_ASSERT(sizeof(ocsd_extern_dcd_cb_fns) == 72, "ocsd_extern_dcd_cb_fns size");
OCSD_PROTO_ASSERT(sizeof(ocsd_extern_dcd_fact_t) == 40, "ocsd_extern_dcd_fact_t size");

#endif /* OCSD_C_API_PROTO_H_INCLUDED */
