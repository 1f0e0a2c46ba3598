//! Library errors and the error-logging interface.

use crate::abi::*;

/// Name and description of every `ocsd_err_t` code, as OpenCSD prints them.
const ERR_DESCS: [(&str, &str); 48] = [
    ("OCSD_OK", "No Error."),
    ("OCSD_ERR_FAIL", "General failure."),
    ("OCSD_ERR_MEM", "Internal memory allocation error."),
    ("OCSD_ERR_NOT_INIT", "Component not initialised."),
    ("OCSD_ERR_INVALID_ID", "Invalid CoreSight Trace Source ID."),
    ("OCSD_ERR_BAD_HANDLE", "Invalid handle passed to component."),
    ("OCSD_ERR_INVALID_PARAM_VAL", "Invalid value parameter passed to component."),
    ("OCSD_ERR_INVALID_PARAM_TYPE", "Type mismatch on abstract interface."),
    ("OCSD_ERR_FILE_ERROR", "File access error"),
    ("OCSD_ERR_NO_PROTOCOL", "Trace protocol unsupported"),
    ("OCSD_ERR_ATTACH_TOO_MANY", "Cannot attach - attach device limit reached."),
    ("OCSD_ERR_ATTACH_INVALID_PARAM", " Cannot attach - invalid parameter."),
    ("OCSD_ERR_ATTACH_COMP_NOT_FOUND", "Cannot detach - component not found."),
    ("OCSD_ERR_RDR_FILE_NOT_FOUND", "source reader - file not found."),
    ("OCSD_ERR_RDR_INVALID_INIT", "source reader - invalid initialisation parameter."),
    ("OCSD_ERR_RDR_NO_DECODER", "source reader - not trace decoder set."),
    ("OCSD_ERR_DATA_DECODE_FATAL", "A decoder in the data path has returned a fatal error."),
    ("OCSD_ERR_DFMTR_NOTCONTTRACE", "Trace input to deformatter none-continuous"),
    ("OCSD_ERR_DFMTR_BAD_FHSYNC", "Bad frame or half frame sync in trace deformatter"),
    ("OCSD_ERR_BAD_PACKET_SEQ", "Bad packet sequence"),
    ("OCSD_ERR_INVALID_PCKT_HDR", "Invalid packet header"),
    ("OCSD_ERR_PKT_INTERP_FAIL", "Interpreter failed - cannot recover - bad data or sequence"),
    ("OCSD_ERR_UNSUPPORTED_ISA", "ISA not supported in decoder"),
    ("OCSD_ERR_HW_CFG_UNSUPP", "Programmed trace configuration not supported by decodUer."),
    ("OCSD_ERR_UNSUPP_DECODE_PKT", "Packet not supported in decoder"),
    ("OCSD_ERR_BAD_DECODE_PKT", "Reserved or unknown packet in decoder."),
    ("OCSD_ERR_COMMIT_PKT_OVERRUN", "Overrun in commit packet stack - tried to commit more than available"),
    ("OCSD_ERR_MEM_NACC", "Unable to access required memory address."),
    ("OCSD_ERR_RET_STACK_OVERFLOW", "Internal return stack overflow checks failed - popped more than we pushed."),
    ("OCSD_ERR_DCDT_NO_FORMATTER", "No formatter in use - operation not valid."),
    ("OCSD_ERR_MEM_ACC_OVERLAP", "Attempted to set an overlapping range in memory access map."),
    ("OCSD_ERR_MEM_ACC_FILE_NOT_FOUND", "Memory access file could not be opened."),
    ("OCSD_ERR_MEM_ACC_FILE_DIFF_RANGE", "Attempt to re-use the same memory access file for a different address range."),
    ("OCSD_ERR_MEM_ACC_RANGE_INVALID", "Address range in accessor set to invalid values."),
    ("OCSD_ERR_MEM_ACC_BAD_LEN", "Memory accessor returned a bad read length value (larger than requested."),
    ("OCSD_ERR_TEST_SNAPSHOT_PARSE", "Test snapshot file parse error"),
    ("OCSD_ERR_TEST_SNAPSHOT_PARSE_INFO", "Test snapshot file parse information"),
    ("OCSD_ERR_TEST_SNAPSHOT_READ", "test snapshot reader error"),
    ("OCSD_ERR_TEST_SS_TO_DECODER", "test snapshot to decode tree conversion error"),
    ("OCSD_ERR_DCDREG_NAME_REPEAT", "Attempted to register a decoder with the same name as another one."),
    ("OCSD_ERR_DCDREG_NAME_UNKNOWN", "Attempted to find a decoder with a name that is not known in the library."),
    ("OCSD_ERR_DCDREG_TYPE_UNKNOWN", "Attempted to find a decoder with a type that is not known in the library."),
    ("OCSD_ERR_DCDREG_TOOMANY", "Attempted to register too many custom decoders"),
    ("OCSD_ERR_DCD_INTERFACE_UNUSED", "Attempt to connect or use and interface not supported by this decoder."),
    ("OCSD_ERR_INVALID_OPCODE", "Illegal Opode found while decoding program memory."),
    ("OCSD_ERR_I_RANGE_LIMIT_OVERRUN", "An optional limit on consecutive instructions in range during decode has been exceeded."),
    ("OCSD_ERR_BAD_DECODE_IMAGE", "Mismatch between trace packets and decode image."),
    ("OCSD_ERR_LAST", "No error - error code end marker"),
];

/// (name, description) of an error code, if it is one.
pub fn err_desc(code: ocsd_err_t) -> Option<(&'static str, &'static str)> {
    usize::try_from(code).ok().and_then(|i| ERR_DESCS.get(i)).copied()
}

/// A library error, as OpenCSD's `ocsdError`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", self.details())]
pub struct OcsdError {
    pub code: ocsd_err_t,
    pub sev: ocsd_err_severity_t,
    pub idx: ocsd_trc_index_t,
    pub chan_id: u8,
    pub msg: String,
}

impl OcsdError {
    pub fn new(sev: ocsd_err_severity_t, code: ocsd_err_t) -> Self {
        OcsdError { code, sev, idx: OCSD_BAD_TRC_INDEX, chan_id: OCSD_BAD_CS_SRC_ID, msg: String::new() }
    }
    pub fn with_msg(sev: ocsd_err_severity_t, code: ocsd_err_t, msg: impl Into<String>) -> Self {
        OcsdError { msg: msg.into(), ..Self::new(sev, code) }
    }
    pub fn at(sev: ocsd_err_severity_t, code: ocsd_err_t, idx: ocsd_trc_index_t, chan_id: u8, msg: impl Into<String>) -> Self {
        OcsdError { code, sev, idx, chan_id, msg: msg.into() }
    }

    /// `0x0014 (OCSD_ERR_INVALID_PCKT_HDR) [Invalid packet header]; TrcIdx=13708; CS ID=01; msg`
    pub fn details(&self) -> String {
        let mut s = format!("0x{:04x}", self.code);
        match err_desc(self.code) {
            Some((name, desc)) => s.push_str(&format!(" ({}) [{}]; ", name, desc)),
            None => s.push_str(" (unknown); "),
        }
        if self.idx != OCSD_BAD_TRC_INDEX {
            s.push_str(&format!("TrcIdx={}; ", self.idx));
        }
        if self.chan_id != OCSD_BAD_CS_SRC_ID {
            s.push_str(&format!("CS ID={:02x}; ", self.chan_id));
        }
        s.push_str(&self.msg);
        s
    }

    /// OpenCSD's `ocsdError::getErrorString`: the details for an error,
    /// warning or info (OpenCSD builds a severity prefix, then overwrites it
    /// with the details, so none is shown), otherwise its "invalid" text.
    pub fn error_string(&self) -> String {
        match self.sev {
            OCSD_ERR_SEV_ERROR | OCSD_ERR_SEV_WARN | OCSD_ERR_SEV_INFO => self.details(),
            _ => "LIBRARY INTERNAL ERROR: Invalid Error Object".to_string(),
        }
    }
}

/// Where components report errors and messages (OpenCSD's `ITraceErrorLog`).
pub trait ErrorLog {
    /// Log an error raised by the component named `component`
    /// (e.g. `PKTP_ETMV4I_0001`).
    fn log_error(&mut self, component: &str, err: &OcsdError);
    /// Log a message of severity `sev` from `component`.
    fn log_message(&mut self, component: &str, sev: ocsd_err_severity_t, msg: &str);
    /// The most severe level that is logged (messages above it are dropped).
    fn verbosity(&self) -> ocsd_err_severity_t {
        OCSD_ERR_SEV_INFO
    }
}

/// The error log as one component of a decode stack sees it.
///
/// OpenCSD names a component `<type>_<trace ID, 4 decimal digits>`
/// (`PKTP_ETMV4I_0016`, `DCD_ETMV4_0016`) only when the decode tree has a
/// frame deformatter; on a single-source tree the name has no number
/// (`DCD_ETMV4`). And it attaches the error logger to the top component of
/// a stack only: with a packet decoder present, the packet processor logs
/// nothing (its bad packets reach the decoder, which reports them).
pub struct ComponentLog<'a> {
    pub inner: &'a mut dyn ErrorLog,
    /// Log under the name without its `_NNNN` instance number.
    pub unnumbered: bool,
    /// No logger attached: drop errors and messages.
    pub detached: bool,
}

impl<'a> ComponentLog<'a> {
    pub fn new(inner: &'a mut dyn ErrorLog, unnumbered: bool, detached: bool) -> Self {
        ComponentLog { inner, unnumbered, detached }
    }

    fn name<'n>(&self, component: &'n str) -> &'n str {
        if self.unnumbered {
            strip_instance_number(component)
        } else {
            component
        }
    }
}

/// `PKTP_ETMV4I_0016` -> `PKTP_ETMV4I`: a trailing `_` and four digits
/// removed (other names unchanged).
pub fn strip_instance_number(name: &str) -> &str {
    let b = name.as_bytes();
    if b.len() > 5 && b[b.len() - 5] == b'_' && b[b.len() - 4..].iter().all(u8::is_ascii_digit) {
        &name[..name.len() - 5]
    } else {
        name
    }
}

impl ErrorLog for ComponentLog<'_> {
    fn log_error(&mut self, component: &str, err: &OcsdError) {
        if !self.detached {
            let n = self.name(component);
            self.inner.log_error(n, err);
        }
    }
    fn log_message(&mut self, component: &str, sev: ocsd_err_severity_t, msg: &str) {
        if !self.detached {
            let n = self.name(component);
            self.inner.log_message(n, sev, msg);
        }
    }
    fn verbosity(&self) -> ocsd_err_severity_t {
        if self.detached {
            OCSD_ERR_SEV_NONE
        } else {
            self.inner.verbosity()
        }
    }
}

/// The error log as a component attached at verbosity `max` sees it:
/// OpenCSD's components take the logger's verbosity when they are attached
/// to it (made) and drop what is above it from then on, whatever the
/// logger's verbosity becomes (the logger then filters by its own).
pub struct LevelLog<'a> {
    pub inner: &'a mut dyn ErrorLog,
    pub max: ocsd_err_severity_t,
}

impl ErrorLog for LevelLog<'_> {
    fn log_error(&mut self, component: &str, err: &OcsdError) {
        if err.sev <= self.max {
            self.inner.log_error(component, err);
        }
    }
    fn log_message(&mut self, component: &str, sev: ocsd_err_severity_t, msg: &str) {
        if sev <= self.max {
            self.inner.log_message(component, sev, msg);
        }
    }
    fn verbosity(&self) -> ocsd_err_severity_t {
        self.inner.verbosity().min(self.max)
    }
}

/// A logger that drops everything.
#[derive(Default)]
pub struct NullLog;
impl ErrorLog for NullLog {
    fn log_error(&mut self, _: &str, _: &OcsdError) {}
    fn log_message(&mut self, _: &str, _: ocsd_err_severity_t, _: &str) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_like_opencsd() {
        let e = OcsdError::at(OCSD_ERR_SEV_ERROR, OCSD_ERR_INVALID_PCKT_HDR, 13708, 1, "");
        assert_eq!(e.details(), "0x0014 (OCSD_ERR_INVALID_PCKT_HDR) [Invalid packet header]; TrcIdx=13708; CS ID=01; ");
        assert_eq!(err_desc(OCSD_ERR_LAST).unwrap().0, "OCSD_ERR_LAST");
        assert_eq!(err_desc(OCSD_ERR_I_RANGE_LIMIT_OVERRUN).unwrap().0, "OCSD_ERR_I_RANGE_LIMIT_OVERRUN");
        assert!(err_desc(-1).is_none());
    }

    struct Rec(Vec<String>);
    impl ErrorLog for Rec {
        fn log_error(&mut self, c: &str, e: &OcsdError) {
            self.0.push(format!("{} : {}", c, e.details()));
        }
        fn log_message(&mut self, c: &str, _: ocsd_err_severity_t, m: &str) {
            self.0.push(format!("{} : {}", c, m));
        }
    }

    #[test]
    fn component_names_and_detached_processors() {
        assert_eq!(strip_instance_number("PKTP_ETMV4I_0016"), "PKTP_ETMV4I");
        assert_eq!(strip_instance_number("DCD_PTM_0002"), "DCD_PTM");
        assert_eq!(strip_instance_number("DCD_PTM"), "DCD_PTM");
        assert_eq!(strip_instance_number("A_12x4"), "A_12x4");
        let mut rec = Rec(Vec::new());
        let e = OcsdError::at(OCSD_ERR_SEV_WARN, OCSD_ERR_BAD_DECODE_PKT, 7, 2, "x");
        ComponentLog::new(&mut rec, true, false).log_error("DCD_ETMV4_0002", &e);
        ComponentLog::new(&mut rec, false, false).log_error("DCD_ETMV4_0002", &e);
        ComponentLog::new(&mut rec, false, true).log_error("PKTP_ETMV4I_0002", &e);
        ComponentLog::new(&mut rec, true, true).log_message("PKTP_ETMV4I_0002", OCSD_ERR_SEV_ERROR, "m");
        assert_eq!(rec.0.len(), 2);
        assert!(rec.0[0].starts_with("DCD_ETMV4 : 0x0019"));
        assert!(rec.0[1].starts_with("DCD_ETMV4_0002 : 0x0019"));
    }
}
