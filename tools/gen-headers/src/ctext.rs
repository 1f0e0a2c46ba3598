//! Hand-written C for the generated headers: what has no Rust item to
//! generate it from (function-like macros, `static inline` helpers, and
//! declarations of functions that a client's custom decoder implements).
//! Names, parameters and meaning follow OpenCSD 1.8.0's public headers.

/// Function-like macros of `ocsd_if_types.h`. Arguments are parenthesised
/// (OpenCSD's own macros evaluate to the same values for the same inputs).
pub const IF_TYPES_MACROS: &str = r#"/** @name Trace source IDs
@{*/
/** True if CoreSight trace source ID `id` can carry trace (0x01 to 0x6F). */
#define OCSD_IS_VALID_CS_SRC_ID(id) (((id) > 0) && ((id) < 0x70))
/** True if CoreSight trace source ID `id` is reserved (0x00, or 0x70 to 0x7F). */
#define OCSD_IS_RESERVED_CS_SRC_ID(id) (((id) == 0) || (((id) >= 0x70) && ((id) <= 0x7F)))
/** @}*/

/** @name Data path response tests (argument: an ocsd_datapath_resp_t)
@{*/
/** True if the response is fatal: processing cannot continue. */
#define OCSD_DATA_RESP_IS_FATAL(x) ((x) >= OCSD_RESP_FATAL_NOT_INIT)
/** True if the response is a warning (continue or wait). */
#define OCSD_DATA_RESP_IS_WARN(x) (((x) == OCSD_RESP_WARN_CONT) || ((x) == OCSD_RESP_WARN_WAIT))
/** True if the response is a non-fatal error (continue or wait). */
#define OCSD_DATA_RESP_IS_ERR(x) (((x) == OCSD_RESP_ERR_CONT) || ((x) == OCSD_RESP_ERR_WAIT))
/** True if the response is a warning or a non-fatal error. */
#define OCSD_DATA_RESP_IS_WARN_OR_ERR(x) (OCSD_DATA_RESP_IS_ERR(x) || OCSD_DATA_RESP_IS_WARN(x))
/** True if the response lets processing continue. */
#define OCSD_DATA_RESP_IS_CONT(x) ((x) < OCSD_RESP_WAIT)
/** True if the response asks the caller to wait (flush before sending more data). */
#define OCSD_DATA_RESP_IS_WAIT(x) (((x) >= OCSD_RESP_WAIT) && ((x) < OCSD_RESP_FATAL_NOT_INIT))
/** @}*/

/** @name Architecture tests (argument: an ocsd_arch_version_t)
@{*/
/** True if `arch` is an Armv8 (or later v8.x / AArch64) architecture. */
#define OCSD_IS_V8_ARCH(arch) (((arch) >= ARCH_V8) && ((arch) <= ARCH_V8_max))
/** True if `arch` is at least `min_arch`. */
#define OCSD_IS_ARCH_MINVER(arch, min_arch) ((arch) >= (min_arch))
/** @}*/

/** Mask of the low `bits` bits of an address (all bits for OCSD_MAX_VA_BITSIZE). */
#define OCSD_BIT_MASK(bits) (((bits) == OCSD_MAX_VA_BITSIZE) ? OCSD_VA_MASK : (((ocsd_vaddr_t)1 << (bits)) - 1))

/** @name Protocol tests (argument: an ocsd_trace_protocol_t)
@{*/
/** True if protocol `P` is decoded by a decoder built into the library. */
#define OCSD_PROTOCOL_IS_BUILTIN(P) (((P) > OCSD_PROTOCOL_UNKNOWN) && ((P) < OCSD_PROTOCOL_BUILTIN_END))
/** True if protocol `P` is a custom (externally registered) decoder protocol. */
#define OCSD_PROTOCOL_IS_CUSTOM(P) (((P) >= OCSD_PROTOCOL_CUSTOM_0) && ((P) < OCSD_PROTOCOL_END))
/** @}*/
"#;

/// `ocsd_c_api_cust_fact.h`: the functions a custom decoder factory
/// implements (the library does not define them; the client does).
pub const CUST_FACT_DECLS: &str = r#"#ifdef __cplusplus
extern "C" {
#endif

/* Functions implemented by a custom decoder factory (client code). */

/** Create a decoder instance for `decoder_cfg` and fill in `p_decoder_inst`. */
ocsd_err_t CreateCustomDecoder(const int create_flags, const void *decoder_cfg, ocsd_extern_dcd_inst_t *p_decoder_inst);

/** Destroy the decoder instance `decoder_handle`. */
ocsd_err_t DestroyCustomDecoder(const void *decoder_handle);

/** Write the CoreSight trace ID found in `decoder_cfg` to `p_csid`. */
ocsd_err_t GetCSIDFromConfig(const void *decoder_cfg, unsigned char *p_csid);

/** Optional: write a protocol packet as text into `buffer` (`buflen` bytes). */
ocsd_err_t PacketToString(const void *trc_pkt, char *buffer, const int buflen);

#ifdef __cplusplus
}  /* extern "C" */
#endif
"#;

/// `ocsd_c_api_cust_impl.h`: `static inline` helpers through which a custom
/// decoder calls the library callbacks in its `ocsd_extern_dcd_cb_fns`,
/// checking that each callback is set (and, for the packet callbacks, in
/// use) first.
pub const CUST_IMPL_INLINES: &str = r#"/** Output a generic trace element through the library callback. */
static inline ocsd_datapath_resp_t lib_cb_GenElemOp(const ocsd_extern_dcd_cb_fns *callbacks,
                                                    const ocsd_trc_index_t index_sop,
                                                    const uint8_t trc_chan_id,
                                                    const ocsd_generic_trace_elem *elem)
{
    if (!callbacks->fn_gen_elem_out)
        return OCSD_RESP_FATAL_NOT_INIT;
    return callbacks->fn_gen_elem_out(callbacks->lib_context, index_sop, trc_chan_id, elem);
}

/** Log an error through the library callback. */
static inline ocsd_err_t lib_cb_LogError(const ocsd_extern_dcd_cb_fns *callbacks,
                                         const ocsd_err_severity_t filter_level,
                                         const ocsd_err_t code,
                                         const ocsd_trc_index_t idx,
                                         const uint8_t chan_id,
                                         const char *pMsg)
{
    if (!callbacks->fn_log_error)
        return OCSD_ERR_NOT_INIT;
    callbacks->fn_log_error(callbacks->lib_context, filter_level, code, idx, chan_id, pMsg);
    return OCSD_OK;
}

/** Log a message through the library callback. */
static inline ocsd_err_t lib_cb_LogMsg(const ocsd_extern_dcd_cb_fns *callbacks,
                                       const ocsd_err_severity_t filter_level,
                                       const char *pMsg)
{
    if (!callbacks->fn_log_msg)
        return OCSD_ERR_NOT_INIT;
    callbacks->fn_log_msg(callbacks->lib_context, filter_level, pMsg);
    return OCSD_OK;
}

/** Decode an Arm instruction with the library's instruction decoder. */
static inline ocsd_err_t lib_cb_DecodeArmInst(const ocsd_extern_dcd_cb_fns *callbacks,
                                              ocsd_instr_info *instr_info)
{
    if (!callbacks->fn_arm_instruction_decode)
        return OCSD_ERR_NOT_INIT;
    return callbacks->fn_arm_instruction_decode(callbacks->lib_context, instr_info);
}

/** Read traced memory through the library's memory accessors. */
static inline ocsd_err_t lib_cb_MemAccess(const ocsd_extern_dcd_cb_fns *callbacks,
                                          const ocsd_vaddr_t address,
                                          const uint8_t cs_trace_id,
                                          const ocsd_mem_space_acc_t mem_space,
                                          uint32_t *num_bytes,
                                          uint8_t *p_buffer)
{
    if (!callbacks->fn_memory_access)
        return OCSD_ERR_NOT_INIT;
    return callbacks->fn_memory_access(callbacks->lib_context, address, cs_trace_id, mem_space, num_bytes, p_buffer);
}

/** Send a packet to the packet monitor callback, if the library uses it. */
static inline void lib_cb_PktMon(const ocsd_extern_dcd_cb_fns *callbacks,
                                 const ocsd_datapath_op_t op,
                                 const ocsd_trc_index_t index_sop,
                                 const void *pkt,
                                 const uint32_t size,
                                 const uint8_t *p_data)
{
    if ((callbacks->packetCBFlags & OCSD_CUST_DCD_PKT_CB_USE_MON) && callbacks->fn_packet_mon)
        callbacks->fn_packet_mon(callbacks->lib_context, op, index_sop, pkt, size, p_data);
}

/** Non-zero if the library uses the packet monitor callback. */
static inline int lib_cb_usePktMon(const ocsd_extern_dcd_cb_fns *callbacks)
{
    return callbacks->packetCBFlags & OCSD_CUST_DCD_PKT_CB_USE_MON;
}

/** Send a packet to the packet sink callback (packet processing only mode). */
static inline ocsd_datapath_resp_t lib_cb_PktDataSink(const ocsd_extern_dcd_cb_fns *callbacks,
                                                      const ocsd_datapath_op_t op,
                                                      const ocsd_trc_index_t index_sop,
                                                      const void *pkt)
{
    if (!(callbacks->packetCBFlags & OCSD_CUST_DCD_PKT_CB_USE_SINK))
        return OCSD_RESP_CONT;
    if (!callbacks->fn_packet_data_sink)
        return OCSD_RESP_FATAL_NOT_INIT;
    return callbacks->fn_packet_data_sink(callbacks->lib_context, op, index_sop, pkt);
}

/** Non-zero if the library uses the packet sink callback. */
static inline int lib_cb_usePktSink(const ocsd_extern_dcd_cb_fns *callbacks)
{
    return callbacks->packetCBFlags & OCSD_CUST_DCD_PKT_CB_USE_SINK;
}

/** Set the packet callback usage flags (OCSD_CUST_DCD_PKT_CB_USE_*). */
static inline void lib_cb_updatePktCBFlags(ocsd_extern_dcd_cb_fns *callbacks, const int newFlags)
{
    callbacks->packetCBFlags = newFlags;
}
"#;

/// `C_API_INVALID_TREE_HANDLE`: a null handle constant that cbindgen
/// cannot express from Rust.
pub const C_API_TYPES_TRAILER: &str = r#"/** The invalid decode tree handle. */
#define C_API_INVALID_TREE_HANDLE (dcd_tree_handle_t)0
"#;
