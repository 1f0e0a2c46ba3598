//! A custom (external) decoder on a decode tree: the safe half of OpenCSD's
//! `CustomDecoderWrapper`.
//!
//! A custom decoder is client code that takes the raw bytes of one trace ID
//! and produces packets and generic elements itself. The tree sees it as a
//! [`TraceIdDecoder`] ([`CustomDecoder`]); the decoder itself is reached
//! through [`CustomDecoderOps`] (implemented by the C API over the C
//! decoder's function pointers), and it calls back into the library through
//! [`CustomServices`]: element output, error and message logging,
//! instruction decode, memory access, and the packet monitor / sink.
//!
//! The services exist only while the library is calling the decoder
//! ([`CustomDecoderOps::data_in`]): that is when OpenCSD's decoders call
//! back too.

use std::any::Any;
use std::os::raw::{c_int, c_void};

use super::stack::{PacketObserver, StackEnv, TraceIdDecoder};
use crate::abi::gen_elem::ocsd_generic_trace_elem;
use crate::abi::*;
use crate::common::OcsdError;

/// `OCSD_CUST_DCD_PKT_CB_USE_MON`: the library uses the packet monitor.
pub const PKT_CB_USE_MON: c_int = 0x1;
/// `OCSD_CUST_DCD_PKT_CB_USE_SINK`: the library uses the packet sink.
pub const PKT_CB_USE_SINK: c_int = 0x2;

/// What the library offers a custom decoder while it runs.
pub trait CustomServices {
    /// Output a generic trace element (the response is the client's).
    fn gen_elem_out(&mut self, index_sop: ocsd_trc_index_t, trc_chan_id: u8, elem: &ocsd_generic_trace_elem) -> ocsd_datapath_resp_t;
    /// Log an error through the library error logger.
    fn log_error(&mut self, err: &OcsdError);
    /// Log a message through the library error logger.
    fn log_msg(&mut self, filter_level: ocsd_err_severity_t, msg: &str);
    /// Decode an Arm instruction (`OCSD_ERR_ATTACH_INVALID_PARAM` if the
    /// decoder was created without the full-decoder flag, as OpenCSD only
    /// attaches its instruction decoder to full decoders).
    fn decode_instr(&mut self, info: &mut ocsd_instr_info) -> ocsd_err_t;
    /// Read traced memory through the tree's memory accessors: bytes read
    /// (0 where nothing is mapped).
    fn mem_access(&mut self, address: ocsd_vaddr_t, cs_trace_id: u8, mem_space: ocsd_mem_space_acc_t, buf: &mut [u8]) -> Result<usize, ocsd_err_t>;
    /// A packet for the packet monitor (ignored if none is attached).
    fn pkt_mon(&mut self, op: ocsd_datapath_op_t, index_sop: ocsd_trc_index_t, pkt: *const c_void, raw: &[u8]);
    /// A packet for the packet sink (`OCSD_RESP_CONT` if none is attached).
    fn pkt_sink(&mut self, op: ocsd_datapath_op_t, index_sop: ocsd_trc_index_t, pkt: *const c_void) -> ocsd_datapath_resp_t;
}

/// The calls into a custom decoder instance. Dropping it destroys the
/// instance (the factory's `destroyDecoder`).
pub trait CustomDecoderOps {
    /// Trace data in (`fn_data_in`): (response, bytes processed). `data` is
    /// empty for the non-data operations.
    fn data_in(
        &mut self,
        op: ocsd_datapath_op_t,
        index: ocsd_trc_index_t,
        data: &[u8],
        services: &mut dyn CustomServices,
    ) -> (ocsd_datapath_resp_t, usize);
    /// Which packet callbacks the library now uses (`fn_update_pkt_mon`).
    fn update_pkt_mon(&mut self, flags: c_int);
}

/// A custom decoder attached to a trace ID of a tree.
pub struct CustomDecoder {
    /// Name the factory was registered under.
    name: String,
    /// Component name for logging: `<decoder name>_<cs id, 4 decimal digits>`.
    component: String,
    protocol: ocsd_trace_protocol_t,
    cs_id: u8,
    full: bool,
    ops: Box<dyn CustomDecoderOps>,
    monitor: Option<Box<dyn PacketObserver>>,
    sink: Option<Box<dyn PacketObserver>>,
}

impl CustomDecoder {
    /// `cs_id` is the trace ID from the configuration (the tree slot);
    /// `inst_name` / `inst_cs_id` are what the decoder instance reported.
    pub fn new(
        name: &str,
        protocol: ocsd_trace_protocol_t,
        cs_id: u8,
        create_flags: u32,
        inst_name: &str,
        inst_cs_id: u8,
        ops: Box<dyn CustomDecoderOps>,
    ) -> Self {
        CustomDecoder {
            name: name.to_string(),
            component: format!("{}_{:04}", inst_name, inst_cs_id),
            protocol,
            cs_id,
            full: create_flags & OCSD_CREATE_FLG_FULL_DECODER != 0,
            ops,
            monitor: None,
            sink: None,
        }
    }

    pub fn component_name(&self) -> &str {
        &self.component
    }

    fn update_flags(&mut self) {
        let flags = if self.monitor.is_some() { PKT_CB_USE_MON } else { 0 }
            | if self.sink.is_some() { PKT_CB_USE_SINK } else { 0 };
        self.ops.update_pkt_mon(flags);
    }
}

struct Services<'s, 'e, 'a> {
    env: &'e mut StackEnv<'a>,
    monitor: Option<&'s mut (dyn PacketObserver + 'static)>,
    sink: Option<&'s mut (dyn PacketObserver + 'static)>,
    component: &'s str,
    full: bool,
}

impl CustomServices for Services<'_, '_, '_> {
    fn gen_elem_out(&mut self, index_sop: ocsd_trc_index_t, trc_chan_id: u8, elem: &ocsd_generic_trace_elem) -> ocsd_datapath_resp_t {
        match self.env.elem_sink.as_deref_mut() {
            Some(s) => s.trace_elem_in(index_sop, trc_chan_id, elem),
            None => OCSD_RESP_FATAL_NOT_INIT,
        }
    }

    fn log_error(&mut self, err: &OcsdError) {
        self.env.log.log_error(self.component, err);
    }

    fn log_msg(&mut self, filter_level: ocsd_err_severity_t, msg: &str) {
        self.env.log.log_message(self.component, filter_level, msg);
    }

    fn decode_instr(&mut self, info: &mut ocsd_instr_info) -> ocsd_err_t {
        if !self.full {
            return OCSD_ERR_ATTACH_INVALID_PARAM;
        }
        crate::instr::decode_instruction(info)
    }

    fn mem_access(&mut self, address: ocsd_vaddr_t, cs_trace_id: u8, mem_space: ocsd_mem_space_acc_t, buf: &mut [u8]) -> Result<usize, ocsd_err_t> {
        self.env.mem.read(address, mem_space, cs_trace_id, buf)
    }

    fn pkt_mon(&mut self, op: ocsd_datapath_op_t, index_sop: ocsd_trc_index_t, pkt: *const c_void, raw: &[u8]) {
        if let Some(m) = self.monitor.as_deref_mut() {
            m.packet(op, index_sop, None, pkt, raw);
        }
    }

    fn pkt_sink(&mut self, op: ocsd_datapath_op_t, index_sop: ocsd_trc_index_t, pkt: *const c_void) -> ocsd_datapath_resp_t {
        match self.sink.as_deref_mut() {
            Some(s) => s.packet(op, index_sop, None, pkt, &[]),
            None => OCSD_RESP_CONT,
        }
    }
}

impl TraceIdDecoder for CustomDecoder {
    fn decoder_name(&self) -> &str {
        &self.name
    }
    fn protocol(&self) -> ocsd_trace_protocol_t {
        self.protocol
    }
    fn cs_id(&self) -> u8 {
        self.cs_id
    }
    fn has_decoder(&self) -> bool {
        self.full
    }

    fn data_in(&mut self, op: ocsd_datapath_op_t, index: ocsd_trc_index_t, data: &[u8], env: &mut StackEnv) -> (ocsd_datapath_resp_t, usize) {
        let CustomDecoder { ops, monitor, sink, component, full, .. } = self;
        let mut services = Services {
            env,
            monitor: monitor.as_deref_mut(),
            sink: sink.as_deref_mut(),
            component: component.as_str(),
            full: *full,
        };
        ops.data_in(op, index, data, &mut services)
    }

    fn set_monitor(&mut self, obs: Option<Box<dyn PacketObserver>>) {
        self.monitor = obs;
        self.update_flags();
    }

    fn set_sink(&mut self, obs: Option<Box<dyn PacketObserver>>) -> ocsd_err_t {
        // OpenCSD attaches a sink to a custom decoder whatever its mode.
        self.sink = obs;
        self.update_flags();
        OCSD_OK
    }

    fn set_proc_op_flags(&mut self, _flags: u32) {}
    fn set_dec_op_flags(&mut self, _flags: u32) {}

    fn stats(&self) -> (bool, u32, u32) {
        (true, 0, 0)
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::abi::gen_elem::OCSD_GEN_TRC_ELEM_CUSTOM;
    use crate::common::{ErrorLog, GenElemSink};
    use crate::mem::MemMapper;
    use std::cell::RefCell;
    use std::rc::Rc;

    /// A decoder that echoes each byte as a CUSTOM element and logs how the
    /// library tells it about packet callbacks.
    struct Echo {
        flags: Rc<RefCell<Vec<c_int>>>,
        dropped: Rc<RefCell<bool>>,
    }
    impl CustomDecoderOps for Echo {
        fn data_in(&mut self, op: ocsd_datapath_op_t, index: ocsd_trc_index_t, data: &[u8], s: &mut dyn CustomServices) -> (ocsd_datapath_resp_t, usize) {
            if op != OCSD_OP_DATA {
                return (OCSD_RESP_CONT, 0);
            }
            for (i, b) in data.iter().enumerate() {
                let mut e = ocsd_generic_trace_elem::new(OCSD_GEN_TRC_ELEM_CUSTOM);
                e.st_addr = *b as u64;
                s.pkt_mon(op, index + i as u32, b as *const u8 as *const c_void, std::slice::from_ref(b));
                let r = s.gen_elem_out(index + i as u32, 0x10, &e);
                if !resp_is_cont(r) {
                    return (r, i + 1);
                }
            }
            let mut info = ocsd_instr_info::default();
            assert_eq!(s.decode_instr(&mut info), OCSD_ERR_ATTACH_INVALID_PARAM);
            let mut buf = [0u8; 4];
            assert_eq!(s.mem_access(0x1000, 0x10, OCSD_MEM_SPACE_ANY, &mut buf), Ok(0));
            s.log_msg(OCSD_ERR_SEV_INFO, "done");
            (OCSD_RESP_CONT, data.len())
        }
        fn update_pkt_mon(&mut self, flags: c_int) {
            self.flags.borrow_mut().push(flags);
        }
    }
    impl Drop for Echo {
        fn drop(&mut self) {
            *self.dropped.borrow_mut() = true;
        }
    }

    struct Collect(Vec<(u32, u8, u64)>, usize);
    impl GenElemSink for Collect {
        fn trace_elem_in(&mut self, i: ocsd_trc_index_t, id: u8, e: &ocsd_generic_trace_elem) -> ocsd_datapath_resp_t {
            self.0.push((i, id, e.st_addr));
            if self.0.len() == self.1 {
                OCSD_RESP_WAIT
            } else {
                OCSD_RESP_CONT
            }
        }
    }

    struct Mon(Rc<RefCell<Vec<u8>>>);
    impl PacketObserver for Mon {
        fn packet(&mut self, _: ocsd_datapath_op_t, _: ocsd_trc_index_t, pkt: Option<&dyn crate::common::TracePacket>, ptr: *const c_void, raw: &[u8]) -> ocsd_datapath_resp_t {
            assert!(pkt.is_none() && !ptr.is_null());
            self.0.borrow_mut().extend_from_slice(raw);
            OCSD_RESP_CONT
        }
    }

    struct Msgs(Vec<String>);
    impl ErrorLog for Msgs {
        fn log_error(&mut self, c: &str, e: &OcsdError) {
            self.0.push(format!("{} : {}", c, e.details()));
        }
        fn log_message(&mut self, c: &str, _: ocsd_err_severity_t, m: &str) {
            self.0.push(format!("{} : {}", c, m));
        }
    }

    #[test]
    fn drives_ops_with_services() {
        let flags = Rc::new(RefCell::new(Vec::new()));
        let dropped = Rc::new(RefCell::new(false));
        let ops = Box::new(Echo { flags: flags.clone(), dropped: dropped.clone() });
        let mut d = CustomDecoder::new("ECHO", OCSD_PROTOCOL_CUSTOM_0, 0x10, OCSD_CREATE_FLG_PACKET_PROC, "echo_dcd", 0x10, ops);
        assert_eq!(d.component_name(), "echo_dcd_0016");
        let raw = Rc::new(RefCell::new(Vec::new()));
        d.set_monitor(Some(Box::new(Mon(raw.clone()))));
        assert_eq!(d.set_sink(None), OCSD_OK);
        assert_eq!(*flags.borrow(), vec![PKT_CB_USE_MON, PKT_CB_USE_MON]);

        let mut sink = Collect(Vec::new(), 2);
        let mut mem = MemMapper::new();
        let mut log = Msgs(Vec::new());
        let mut env = StackEnv { elem_sink: Some(&mut sink), mem: &mut mem, log: &mut log, attached: crate::dcd_tree::Interfaces::ALL };
        let (r, n) = d.data_in(OCSD_OP_DATA, 100, &[7, 8, 9], &mut env);
        assert_eq!((r, n), (OCSD_RESP_WAIT, 2));
        let (r, n) = d.data_in(OCSD_OP_DATA, 102, &[9], &mut env);
        assert_eq!((r, n), (OCSD_RESP_CONT, 1));
        assert_eq!(sink.0, vec![(100, 0x10, 7), (101, 0x10, 8), (102, 0x10, 9)]);
        assert_eq!(*raw.borrow(), vec![7, 8, 9]);
        assert_eq!(log.0, vec!["echo_dcd_0016 : done".to_string()]);
        assert_eq!(d.decode_stats().err(), Some(OCSD_ERR_INVALID_PARAM_VAL));
        drop(d);
        assert!(*dropped.borrow());
    }
}
