//! The library default error logger (OpenCSD's `ocsdDefaultErrorLogger`,
//! shared by every decode tree) and its output message logger
//! (`ocsdMsgLogger`).
//!
//! - Errors and messages at or below the verbosity (default
//!   `OCSD_ERR_SEV_ERROR`) are printed as `<component> : <text>` when an
//!   output logger exists, and errors are kept as the last error.
//! - The output logger exists once `ocsd_def_errlog_init` was called with
//!   `create_output_logger` set; it starts with stderr output; it writes to
//!   stdout, stderr, a file (appending, default `ocsd_trace_decode.log`)
//!   and / or a client string callback.
//! - The library printers (packets, elements, raw frames) print through it.
//!
//! The logger is behind a mutex; the client string callback is called
//! after the mutex is released, so it may call back into the library.

use std::fs::File;
use std::io::Write;
use std::os::raw::c_int;
use std::sync::{Arc, Mutex, MutexGuard};

use crate::abi::*;
use crate::common::{ErrorLog, OcsdError};

/// `ocsdMsgLogger` output flags.
pub const OUT_FILE: c_int = 0x1;
pub const OUT_STDERR: c_int = 0x2;
pub const OUT_STDOUT: c_int = 0x4;
pub const OUT_STR_CB: c_int = 0x8;
const OUT_MASK: c_int = OUT_FILE | OUT_STDERR | OUT_STDOUT | OUT_STR_CB;

/// Component names OpenCSD gives its general log handles.
pub const GEN_ERR: &str = "Gen_Err";
pub const GEN_INFO: &str = "Gen_Info";

/// A client string-print callback, with the tree it was set for.
#[derive(Clone)]
pub struct StrCallback {
    pub tree_id: usize,
    pub print: Arc<dyn Fn(&str) + Send + Sync>,
}

struct MsgLogger {
    flags: c_int,
    file_name: String,
    file: Option<File>,
    str_cb: Option<StrCallback>,
}

impl MsgLogger {
    fn new() -> Self {
        MsgLogger { flags: OUT_STDERR, file_name: "ocsd_trace_decode.log".to_string(), file: None, str_cb: None }
    }

    /// Write `msg` to the stream outputs; returns the string callback to
    /// call (after the lock is released).
    fn log_msg(&mut self, msg: &str) -> Option<StrCallback> {
        // as OpenCSD (std::cout / std::cerr, synchronised with C stdio, then
        // flushed): through the C library's streams, so the text lands
        // after whatever the client has printf'd and not yet flushed
        if self.flags & OUT_STDOUT != 0 {
            c_stdio::write_flush(c_stdio::Stream::Stdout, msg.as_bytes());
        }
        if self.flags & OUT_STDERR != 0 {
            c_stdio::write_flush(c_stdio::Stream::Stderr, msg.as_bytes());
        }
        if self.flags & OUT_FILE != 0 {
            if self.file.is_none() {
                self.file = std::fs::OpenOptions::new().create(true).append(true).open(&self.file_name).ok();
            }
            if let Some(f) = self.file.as_mut() {
                let _ = f.write_all(msg.as_bytes());
                let _ = f.flush();
            }
        }
        if self.flags & OUT_STR_CB != 0 {
            return self.str_cb.clone();
        }
        None
    }
}

/// The C library's `stdout` / `stderr` streams.
mod c_stdio {
    extern "C" {
        // glibc and musl export the standard streams as these objects
        static mut stdout: *mut libc::FILE;
        static mut stderr: *mut libc::FILE;
    }

    #[derive(Clone, Copy)]
    pub enum Stream {
        Stdout,
        Stderr,
    }

    /// `fwrite` the bytes to the stream, then `fflush` it.
    pub fn write_flush(which: Stream, bytes: &[u8]) {
        // SAFETY: reading the C library's stream pointers (initialised
        // before main, never reassigned by this library); fwrite / fflush
        // take the stream's own lock; `bytes` is valid for its length.
        unsafe {
            let f = match which {
                Stream::Stdout => stdout,
                Stream::Stderr => {
                    // std::cerr is tied to std::cout: OpenCSD's stderr
                    // output first flushes what stdout holds
                    if !stdout.is_null() {
                        libc::fflush(stdout);
                    }
                    stderr
                }
            };
            if f.is_null() {
                return;
            }
            if !bytes.is_empty() {
                libc::fwrite(bytes.as_ptr() as *const libc::c_void, 1, bytes.len(), f);
            }
            libc::fflush(f);
        }
    }
}

struct DefaultLogger {
    verbosity: ocsd_err_severity_t,
    output: Option<MsgLogger>,
    last_err: Option<OcsdError>,
}

static LOGGER: Mutex<DefaultLogger> = Mutex::new(DefaultLogger { verbosity: OCSD_ERR_SEV_ERROR, output: None, last_err: None });

fn lock() -> MutexGuard<'static, DefaultLogger> {
    LOGGER.lock().unwrap_or_else(|e| e.into_inner())
}

fn emit(cb: Option<StrCallback>, msg: &str) {
    if let Some(cb) = cb {
        (cb.print)(msg);
    }
}

/// `ocsd_def_errlog_init`: set the verbosity; create a (new) output logger
/// writing to stderr if asked.
pub fn init(verbosity: ocsd_err_severity_t, create_output_logger: bool) {
    let mut g = lock();
    g.verbosity = verbosity;
    if create_output_logger {
        g.output = Some(MsgLogger::new());
    }
}

/// `ocsd_def_errlog_config_output`: `OCSD_ERR_NOT_INIT` without an output
/// logger.
pub fn config_output(flags: c_int, file_name: Option<String>) -> ocsd_err_t {
    let mut g = lock();
    match g.output.as_mut() {
        Some(o) => {
            o.flags = flags & OUT_MASK;
            if let Some(n) = file_name {
                o.file_name = n;
                o.file = None;
            }
            OCSD_OK
        }
        None => OCSD_ERR_NOT_INIT,
    }
}

/// `ocsd_def_errlog_set_strprint_cb`: route output to the client's string
/// callback too (`OCSD_ERR_NOT_INIT` without an output logger).
pub fn set_str_callback(cb: StrCallback) -> ocsd_err_t {
    let mut g = lock();
    match g.output.as_mut() {
        Some(o) => {
            o.str_cb = Some(cb);
            o.flags |= OUT_STR_CB;
            OCSD_OK
        }
        None => OCSD_ERR_NOT_INIT,
    }
}

/// Forget the string callback set for a tree being destroyed.
pub fn drop_tree_callback(tree_id: usize) {
    let mut g = lock();
    if let Some(o) = g.output.as_mut() {
        if o.str_cb.as_ref().is_some_and(|c| c.tree_id == tree_id) {
            o.str_cb = None;
        }
    }
}

/// Whether an output logger exists (printers created without one print
/// nothing, as OpenCSD's).
pub fn has_output() -> bool {
    lock().output.is_some()
}

/// `ocsd_def_errlog_msgout` / the printers: print through the output logger.
pub fn msg_out(msg: &str) {
    let cb = {
        let mut g = lock();
        g.output.as_mut().and_then(|o| o.log_msg(msg))
    };
    emit(cb, msg);
}

/// The last error logged (for `ocsd_get_last_err`).
pub fn last_error() -> Option<OcsdError> {
    lock().last_err.clone()
}

/// Log an error from `component`.
pub fn log_error(component: &str, err: &OcsdError) {
    let (cb, text) = {
        let mut g = lock();
        if g.verbosity < err.sev {
            return;
        }
        let mut res = (None, String::new());
        if let Some(o) = g.output.as_mut() {
            if o.flags & OUT_MASK != 0 {
                let text = format!("{} : {}", component, err.error_string());
                res = (o.log_msg(&text), text);
            }
        }
        g.last_err = Some(err.clone());
        res
    };
    emit(cb, &text);
}

/// Log a message of severity `sev` from `component`.
pub fn log_message(component: &str, sev: ocsd_err_severity_t, msg: &str) {
    let (cb, text) = {
        let mut g = lock();
        if g.verbosity < sev {
            return;
        }
        match g.output.as_mut() {
            Some(o) if o.flags & OUT_MASK != 0 => {
                let text = format!("{} : {}", component, msg);
                (o.log_msg(&text), text)
            }
            _ => return,
        }
    };
    emit(cb, &text);
}

pub fn verbosity() -> ocsd_err_severity_t {
    lock().verbosity
}

/// The error logger every C API decode tree uses: the default logger.
pub struct DefaultLog;

impl ErrorLog for DefaultLog {
    fn log_error(&mut self, component: &str, err: &OcsdError) {
        log_error(component, err);
    }
    fn log_message(&mut self, component: &str, sev: ocsd_err_severity_t, msg: &str) {
        log_message(component, sev, msg);
    }
    fn verbosity(&self) -> ocsd_err_severity_t {
        verbosity()
    }
}
