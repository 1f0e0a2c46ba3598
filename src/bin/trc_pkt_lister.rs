//! `trc_pkt_lister`: list and decode the trace in a CoreSight snapshot,
//! writing the same log as OpenCSD's test program of that name.

use std::cell::RefCell;
use std::fs::File;
use std::io::{Read, Write};
use std::os::raw::c_void;
use std::rc::Rc;
use std::time::Instant;

use opencsd_c_api::abi::gen_elem::ocsd_generic_trace_elem;
use opencsd_c_api::abi::*;
use opencsd_c_api::common::{ErrorLog, GenElemSink, OcsdError, TracePacket};
use opencsd_c_api::dcd_tree::parallel::{self, ParallelOptions, SegmentOutput};
use opencsd_c_api::dcd_tree::{DecodeTree, PacketObserver, RawFrameMonitor};
use opencsd_c_api::printers::gen_elem::{ElemLineWriter, IdxText};
use opencsd_c_api::printers::line::{LineBuf, Padded};
use opencsd_c_api::printers::num::TextOut;
use opencsd_c_api::printers::raw_frame::write_raw_frame;
use opencsd_c_api::snapshot::plan::TreePlan;
use opencsd_c_api::snapshot::{self, to_tree, Snapshot};

const ETE_OPFLG_PKTDEC_SRCADDR_N_ATOMS: u32 = 0x0001_0000;
const ETM4_OPFLG_PKTDEC_AA64_OPCODE_CHK: u32 = 0x0002_0000;

/// Where the log goes: any of stdout, stderr and a file; or, for a
/// parallel decode segment, kept in memory.
///
/// Log text is gathered in blocks of [`BLOCK`] bytes taken from one pool
/// ([`take_block`], [`give_block`]). A full block of the log file goes to a
/// writer thread ([`Writer`]), which writes it while the decode goes on and
/// then puts it back in the pool. A parallel decode segment's log is kept
/// as a chain of blocks; once stitched, whole blocks go to the writer as
/// they are, without a copy. After warm-up, no block is allocated and no
/// fresh memory is touched.
struct Log {
    stdout: bool,
    stderr: bool,
    /// The log file (written by the writer thread while there is one).
    file: Option<File>,
    writer: Option<Writer>,
    /// The block being written: the log file's next block, or the last
    /// block of a kept log. The printers write their lines straight into
    /// it when it is the only output (`direct`).
    buf: LineBuf,
    /// A kept log's full blocks before `buf`: (offset in the log, block).
    chain: Vec<(usize, LineBuf)>,
    /// Bytes of a kept log in `chain`.
    chain_len: usize,
    /// Standard output through a large buffer when it is not a terminal
    /// (a line-buffered stdout costs a system call per log line).
    stdout_buf: Option<std::io::BufWriter<std::io::Stdout>>,
    /// The log is kept in memory (never together with a file).
    keep: bool,
    /// Bytes still to drop: what a parallel decode that had to stop
    /// already wrote, when the serial decode writes it again.
    skip: usize,
    /// `buf` is the only output: lines go straight into it. Follows the
    /// fields above (see [`Log::update_direct`]).
    direct: bool,
    /// `buf` is full once it holds this many bytes (never when there is
    /// neither a file nor a kept log).
    flush_at: usize,
    /// `Idx:<n>` of the last line's index, shared by the packet and
    /// element lines.
    idx: IdxText,
}

/// Bytes of log text in a block.
const BLOCK: usize = 128 * 1024;
/// Room of a block: a line begun before `BLOCK` ends in it.
const BLOCK_ROOM: usize = BLOCK + 8192;

/// Blocks not in use, shared by every log and the writer thread.
static BLOCKS: std::sync::Mutex<Vec<LineBuf>> = std::sync::Mutex::new(Vec::new());

/// Blocks made (the most in use at once: `OCSD_PARALLEL_REPORT`).
static BLOCKS_MADE: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
/// An empty block: from the pool, or new.
fn take_block() -> LineBuf {
    let b = BLOCKS.lock().ok().and_then(|mut v| v.pop());
    b.unwrap_or_else(|| {
        BLOCKS_MADE.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        LineBuf::with_capacity(BLOCK_ROOM)
    })
}

/// A block no longer needed back to the pool (smaller buffers are
/// dropped).
fn give_block(mut b: LineBuf) {
    if b.capacity() >= BLOCK_ROOM {
        b.clear();
        if let Ok(mut v) = BLOCKS.lock() {
            v.push(b);
        }
    }
}

/// Blocks handed to the writer thread at a time: it wakes once per batch
/// instead of once per block (the decode fills a block in about 0.1 ms;
/// a wake-up and the sleep after it cost both threads a few microseconds).
const BATCH: usize = 4;

/// The thread that writes the log file's full blocks, in the order it is
/// given them, and puts them back in the pool. Write errors are ignored,
/// as the lister always has.
struct Writer {
    /// At most one batch waits: the decode waits for the writer beyond.
    tx: std::sync::mpsc::SyncSender<Vec<LineBuf>>,
    /// Batches written, emptied, to fill again.
    back: std::sync::mpsc::Receiver<Vec<LineBuf>>,
    /// The next batch.
    batch: Vec<LineBuf>,
    thread: std::thread::JoinHandle<()>,
}

impl Writer {
    /// A writer thread on a handle of `f` (None: the file is written on
    /// the calling thread).
    fn start(f: &File) -> Option<Writer> {
        let mut f = f.try_clone().ok()?;
        let (tx, rx) = std::sync::mpsc::sync_channel::<Vec<LineBuf>>(1);
        let (back_tx, back) = std::sync::mpsc::channel::<Vec<LineBuf>>();
        let thread = std::thread::Builder::new()
            .name("log writer".into())
            .spawn(move || {
                for mut v in rx {
                    for b in v.drain(..) {
                        let _ = f.write_all(b.as_bytes());
                        give_block(b);
                    }
                    let _ = back_tx.send(v);
                }
            })
            .ok()?;
        Some(Writer { tx, back, batch: Vec::with_capacity(BATCH), thread })
    }

    /// Queue block `b`. Err: the thread is gone (it cannot be, short of a
    /// panic), with the blocks it was not given.
    fn put(&mut self, b: LineBuf) -> Result<(), Vec<LineBuf>> {
        self.batch.push(b);
        if self.batch.len() >= BATCH {
            self.send()
        } else {
            Ok(())
        }
    }

    fn send(&mut self) -> Result<(), Vec<LineBuf>> {
        if self.batch.is_empty() {
            return Ok(());
        }
        let next = self.back.try_recv().unwrap_or_else(|_| Vec::with_capacity(BATCH));
        let full = std::mem::replace(&mut self.batch, next);
        self.tx.send(full).map_err(|e| e.0)
    }

    /// Wait until everything given is written (Err: as [`Writer::put`]).
    fn finish(mut self) -> Result<(), Vec<LineBuf>> {
        let r = self.send();
        drop(self.tx);
        let _ = self.thread.join();
        r
    }
}

impl Default for Log {
    fn default() -> Self {
        let mut l = Log {
            stdout: false,
            stderr: false,
            file: None,
            writer: None,
            buf: LineBuf::new(),
            chain: Vec::new(),
            chain_len: 0,
            stdout_buf: None,
            keep: true,
            skip: 0,
            direct: false,
            flush_at: usize::MAX,
            idx: IdxText::default(),
        };
        l.update_direct();
        l
    }
}

impl Drop for Log {
    fn drop(&mut self) {
        self.finish();
        for (_, b) in self.chain.drain(..) {
            give_block(b);
        }
        give_block(std::mem::take(&mut self.buf));
    }
}

impl SegmentOutput for Log {
    fn len(&self) -> usize {
        self.chain_len + self.buf.len()
    }
    fn recycle(&mut self) {
        for (_, b) in self.chain.drain(..) {
            give_block(b);
        }
        self.chain_len = 0;
        self.buf.clear();
        if self.buf.capacity() < BLOCK_ROOM {
            give_block(std::mem::replace(&mut self.buf, take_block()));
        }
        self.skip = 0;
        self.update_direct();
    }
    fn capacity(&self) -> usize {
        self.buf.capacity()
    }
    /// The kept log's blocks so far, the one being written included (a
    /// fresh one takes its place), as a log of those blocks at their
    /// offsets: they go to the log file as they are once given out.
    fn split_front(&mut self, min: usize) -> Option<(Self, usize)> {
        let end = self.len();
        let from = self.chain.first().map_or(self.chain_len, |c| c.0);
        if !self.keep || end == from || end - from < min {
            return None;
        }
        let mut part = Log::default();
        part.chain = std::mem::replace(&mut self.chain, Vec::with_capacity(4));
        if !self.buf.is_empty() {
            let b = std::mem::replace(&mut self.buf, take_block());
            part.chain.push((self.chain_len, b));
        }
        part.chain_len = end;
        self.chain_len = end;
        Some((part, end))
    }
}

impl Log {
    fn new(stdout: bool, stderr: bool, file: Option<File>) -> Self {
        use std::io::IsTerminal;
        let stdout_buf = (stdout && !std::io::stdout().is_terminal()).then(|| std::io::BufWriter::with_capacity(1 << 16, std::io::stdout()));
        let buf = if file.is_some() { take_block() } else { LineBuf::new() };
        let writer = file.as_ref().and_then(Writer::start);
        let mut l = Log {
            stdout,
            stderr,
            file,
            writer,
            buf,
            chain: Vec::new(),
            chain_len: 0,
            stdout_buf,
            keep: false,
            skip: 0,
            direct: false,
            flush_at: usize::MAX,
            idx: IdxText::default(),
        };
        l.update_direct();
        l
    }

    /// Work out whether `buf` is the only output.
    fn update_direct(&mut self) {
        debug_assert!(!(self.keep && self.file.is_some()));
        self.direct = !self.stdout && !self.stderr && self.skip == 0 && (self.keep || self.file.is_some());
        self.flush_at = if self.keep || self.file.is_some() { BLOCK } else { usize::MAX };
    }

    fn set_skip(&mut self, n: usize) {
        self.skip = n;
        self.update_direct();
    }

    /// The buffer a printer writes its next line into: the log's own when
    /// it is the only output (true), otherwise `scratch`, emptied.
    /// [`Log::line_done`] ends the line.
    /// Also the log's `Idx:<n>` text.
    #[inline(always)]
    fn line_buf<'a>(&'a mut self, scratch: &'a mut LineBuf) -> (&'a mut LineBuf, &'a mut IdxText, bool) {
        if self.direct {
            (&mut self.buf, &mut self.idx, true)
        } else {
            scratch.clear();
            (scratch, &mut self.idx, false)
        }
    }

    #[inline(always)]
    fn line_done(&mut self, direct: bool, scratch: &LineBuf) {
        if direct {
            if self.buf.len() >= self.flush_at {
                self.block_full();
            }
        } else {
            self.msg_bytes(scratch.as_bytes());
        }
    }

    /// `buf` is full (or must go out): a kept log chains it, a log file
    /// writes it; the next block comes from the pool.
    #[cold]
    #[inline(never)]
    fn block_full(&mut self) {
        if self.keep {
            let b = std::mem::replace(&mut self.buf, take_block());
            let n = b.len();
            self.chain.push((self.chain_len, b));
            self.chain_len += n;
        } else if self.file.is_some() && !self.buf.is_empty() {
            let b = std::mem::replace(&mut self.buf, take_block());
            self.write_block(b);
        }
    }

    /// Give a block of log file text to the file, in order.
    fn write_block(&mut self, b: LineBuf) {
        match self.writer.as_mut() {
            Some(w) => {
                if let Err(left) = w.put(b) {
                    // the writer is gone: write here
                    self.writer = None;
                    for b in left {
                        self.write_block(b);
                    }
                }
            }
            None => {
                if let Some(f) = self.file.as_mut() {
                    let _ = f.write_all(b.as_bytes());
                }
                give_block(b);
            }
        }
    }

    fn msg(&mut self, s: &str) {
        self.msg_bytes(s.as_bytes())
    }

    /// Give bytes `r` of `seg`'s kept log (a parallel decode segment's)
    /// to the log. Chained blocks wholly in `r` go to the log file as they
    /// are when it is the only output (they are no longer needed in `seg`:
    /// its log is given out in order, each byte once; the chain keeps
    /// their offsets, so `seg`'s length stays).
    fn put_kept(&mut self, seg: &mut Log, r: std::ops::Range<usize>) {
        let move_whole = self.direct && !self.keep && self.file.is_some();
        let blocks = seg.chain.iter_mut().map(|(s, b)| (*s, b, true)).chain(std::iter::once((seg.chain_len, &mut seg.buf, false)));
        for (start, b, chained) in blocks {
            let end = start + b.len();
            if end <= r.start || b.is_empty() {
                continue;
            }
            if start >= r.end {
                break;
            }
            let (a, z) = (r.start.max(start) - start, r.end.min(end) - start);
            if move_whole && chained && a == 0 && z == b.len() {
                // the text before it first
                self.block_full();
                self.write_block(std::mem::take(b));
            } else {
                self.msg_bytes(&b.as_bytes()[a..z]);
            }
        }
    }

    /// Log text given as bytes (valid UTF-8: the printers' byte lines).
    fn msg_bytes(&mut self, mut s: &[u8]) {
        if self.keep {
            self.put_in_blocks(s);
        }
        if self.skip > 0 {
            let k = self.skip.min(s.len());
            self.skip -= k;
            s = &s[k..];
            if self.skip == 0 {
                self.update_direct();
            }
        }
        if self.stdout {
            match self.stdout_buf.as_mut() {
                Some(b) => {
                    let _ = b.write_all(s);
                }
                None => {
                    let _ = std::io::stdout().write_all(s);
                }
            }
        }
        if self.stderr {
            let _ = std::io::stderr().write_all(s);
        }
        if self.file.is_some() {
            self.put_in_blocks(s);
        }
    }

    /// `s` into the kept log's or the log file's blocks, each filled up to
    /// `BLOCK` and never grown (a kept log's text is read back by offset,
    /// so a piece may span blocks).
    fn put_in_blocks(&mut self, mut s: &[u8]) {
        while !s.is_empty() {
            let n = s.len().min(BLOCK.saturating_sub(self.buf.len()));
            self.buf.put_bytes(&s[..n]);
            s = &s[n..];
            if self.buf.len() >= self.flush_at {
                self.block_full();
            }
        }
    }

    /// Write out everything logged, and wait until it is written.
    fn flush(&mut self) {
        self.finish();
        if let Some(b) = self.stdout_buf.as_mut() {
            let _ = b.flush();
        }
        let _ = std::io::stdout().flush();
    }

    /// The log file's text so far written, and the writer thread ended
    /// (what is logged after goes to the file from this thread).
    fn finish(&mut self) {
        if !self.keep {
            self.block_full();
        }
        if let Some(w) = self.writer.take() {
            if let Err(left) = w.finish() {
                for b in left {
                    self.write_block(b);
                }
            }
        }
    }
}

type SharedLog = Rc<RefCell<Log>>;

/// The log file, opened as OpenCSD's message logger opens it: created if
/// missing, appended to if there (`std::fstream::out | std::fstream::app`),
/// so that a log file already there keeps what it held and the new log
/// follows it, as with OpenCSD's lister.
fn open_log_file(path: &str) -> Option<File> {
    std::fs::OpenOptions::new().create(true).append(true).open(path).ok()
}

/// OpenCSD's default error logger writing into the log.
struct ErrLogger {
    log: SharedLog,
    /// The last error logged (OpenCSD's `GetLastError`), shared with the
    /// lister, which prints it after a fatal data path error.
    last: LastError,
}

type LastError = Rc<RefCell<Option<OcsdError>>>;

impl ErrorLog for ErrLogger {
    fn log_error(&mut self, component: &str, err: &OcsdError) {
        // verbosity INFO: every error, warning and message is logged
        if err.sev <= OCSD_ERR_SEV_INFO {
            self.log.borrow_mut().msg(&format!("{} : {}", component, err.details()));
            *self.last.borrow_mut() = Some(err.clone());
        }
    }
    fn log_message(&mut self, component: &str, sev: ocsd_err_severity_t, msg: &str) {
        if sev <= OCSD_ERR_SEV_INFO {
            self.log.borrow_mut().msg(&format!("{} : {}", component, msg));
        }
    }
}

/// Prints packets: as a monitor (with raw bytes) or as the sink.
struct PacketPrinter {
    log: SharedLog,
    id: u8,
    monitor: bool,
    /// What follows a data line's index: `; ID:<id>; [` before the raw
    /// bytes of a monitor, `; ID:<id>;\t` before a sink's packet text.
    prefix: Padded<16>,
    /// The line being written, when the log has several outputs.
    line: LineBuf,
    /// Packet text of protocols without a byte path.
    text: String,
}

impl PacketPrinter {
    fn new(log: SharedLog, id: u8, monitor: bool) -> Self {
        let prefix = Padded::new_owned(&if monitor { format!("; ID:{id:x}; [") } else { format!("; ID:{id:x};\t") });
        PacketPrinter { log, id, monitor, prefix, line: LineBuf::with_capacity(256), text: String::new() }
    }
}

/// `0x<hex> ` of each byte value, padded to 8 bytes.
const RAW_BYTE_TEXT: [[u8; 8]; 256] = {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut t = [[b' '; 8]; 256];
    let mut b = 0;
    while b < 256 {
        t[b][0] = b'0';
        t[b][1] = b'x';
        t[b][2] = HEX[b >> 4];
        t[b][3] = HEX[b & 0xF];
        b += 1;
    }
    t
};

/// `Idx:<index>; ID:<id>;` (`idx_text`, then `prefix`: see
/// [`PacketPrinter::prefix`]), then for a monitor the packet's bytes, then
/// a tab.
#[inline(always)]
fn write_packet_prefix<T: TextOut>(out: &mut T, idx_text: &Padded<32>, prefix: &Padded<16>, monitor: bool, raw: &[u8]) {
    out.put_padded(idx_text);
    out.put_padded(prefix);
    if monitor {
        for &b in raw {
            out.put_chunk(&RAW_BYTE_TEXT[b as usize], 5);
        }
        out.put_chunk(b"];\t", 3);
    }
}

impl PacketObserver for PacketPrinter {
    fn packet(
        &mut self,
        op: ocsd_datapath_op_t,
        index_sop: ocsd_trc_index_t,
        pkt: Option<&dyn TracePacket>,
        _pkt_ptr: *const c_void,
        raw: &[u8],
    ) -> ocsd_datapath_resp_t {
        use std::fmt::Write as _;
        let mut log = self.log.borrow_mut();
        let (line, idx, direct) = log.line_buf(&mut self.line);
        match op {
            OCSD_OP_DATA => {
                let Some(p) = pkt else { return OCSD_RESP_CONT };
                let idx_text = idx.get(index_sop);
                let mut room = line.room::<256>();
                write_packet_prefix(&mut room, idx_text, &self.prefix, self.monitor, raw);
                let done = room.done();
                if !line.commit(done) {
                    write_packet_prefix(line, idx_text, &self.prefix, self.monitor, raw);
                }
                if !p.write_bytes(line) {
                    self.text.clear();
                    p.write_str(&mut self.text);
                    line.put_str(&self.text);
                }
                line.put_byte(b'\n');
            }
            OCSD_OP_EOT => {
                let _ = writeln!(line, "ID:{:x}\tEND OF TRACE DATA", self.id);
            }
            OCSD_OP_FLUSH => {
                let _ = writeln!(line, "ID:{:x}\tFLUSH operation on trace decode path", self.id);
            }
            OCSD_OP_RESET => {
                let _ = writeln!(line, "ID:{:x}\tRESET operation on trace decode path", self.id);
            }
            _ => {}
        }
        log.line_done(direct, &self.line);
        OCSD_RESP_CONT
    }
}

struct ElemPrinter {
    log: SharedLog,
    ids: Option<Vec<u8>>,
    /// (None only once dropped: the writer goes back to the pool)
    writer: Option<ElemLineWriter>,
    /// The line being written, when the log has several outputs.
    line: LineBuf,
    /// `-test_waits N`: answer WAIT to the first N elements (each printed
    /// once), to exercise the WAIT / FLUSH path of the decoders.
    test_waits: u32,
}

impl GenElemSink for ElemPrinter {
    fn trace_elem_in(&mut self, index_sop: ocsd_trc_index_t, chan: u8, elem: &ocsd_generic_trace_elem) -> ocsd_datapath_resp_t {
        if let Some(ids) = &self.ids {
            if !ids.contains(&chan) {
                return OCSD_RESP_CONT;
            }
        }
        let mut log = self.log.borrow_mut();
        let (line, idx, direct) = log.line_buf(&mut self.line);
        if let Some(w) = self.writer.as_mut() {
            w.write_line(line, idx, index_sop, chan, elem);
        }
        log.line_done(direct, &self.line);
        drop(log);
        if self.test_waits > 0 {
            self.test_waits -= 1;
            return OCSD_RESP_WAIT;
        }
        OCSD_RESP_CONT
    }
}

impl Drop for ElemPrinter {
    fn drop(&mut self) {
        if let Some(w) = self.writer.take() {
            give_elem_writer(w);
        }
    }
}

/// Element line writers of printers dropped, for the printers of later
/// trees: a parallel decode builds a tree for every segment (and for every
/// probe) where its stacks cannot be renewed, and a writer's line table is
/// 442 KiB to fill and to touch afresh. The table only keeps lines already
/// written (keyed by all their text depends on), so a writer used before
/// writes the same lines as a new one.
static ELEM_WRITERS: std::sync::Mutex<Vec<ElemLineWriter>> = std::sync::Mutex::new(Vec::new());

fn take_elem_writer() -> ElemLineWriter {
    ELEM_WRITERS.lock().ok().and_then(|mut v| v.pop()).unwrap_or_default()
}

fn give_elem_writer(w: ElemLineWriter) {
    if let Ok(mut v) = ELEM_WRITERS.lock() {
        // one per thread that builds trees is enough
        if v.len() < 8 {
            v.push(w);
        }
    }
}

struct FramePrinter {
    log: SharedLog,
    text: String,
}

impl RawFrameMonitor for FramePrinter {
    fn raw_frame(&mut self, op: ocsd_datapath_op_t, index: ocsd_trc_index_t, elem: ocsd_rawframe_elem_t, data: &[u8], id: u8) {
        if op != OCSD_OP_DATA {
            return;
        }
        self.text.clear();
        write_raw_frame(&mut self.text, elem, index, data, id);
        self.log.borrow_mut().msg(&self.text);
    }
}

#[derive(Default)]
struct Opts {
    ss_dir: String,
    src_name: String,
    ids: Vec<u8>,
    decode: bool,
    decode_only: bool,
    pkt_mon: bool,
    raw_packed: bool,
    raw_unpacked: bool,
    dstream: bool,
    tpiu: bool,
    hsync: bool,
    multi_session: bool,
    no_time_print: bool,
    stats: bool,
    test_waits: u32,
    add_flags: u32,
    /// Memory access cache: disabled, page size, number of pages (0: default).
    macc_cache_disable: bool,
    macc_cache_page_size: u32,
    macc_cache_page_num: u32,
    /// Hidden: write the decode plan (src/snapshot/plan.rs) to this file
    /// and stop (for the C benchmark client).
    print_plan: Option<String>,
    /// `-parallel N`: decode on N threads (0: serially).
    parallel: usize,
    /// Hidden (tests): `-parallel_min_seg N`: segments of N bytes, stitched
    /// at every chunk boundary, to exercise many stitches.
    parallel_min_seg: usize,
}

fn print_help(log: &mut Log) {
    log.msg(concat!(
        "Trace Packet Lister - commands\n\n",
        "Snapshot:\n\n",
        "-ss_dir <dir>       Set the directory path to a trace snapshot\n",
        "-ss_verbose         Verbose output when reading the snapshot\n",
        "\nDecode:\n\n",
        "-id <n>             Set an ID to list (may be used multiple times) - default if no id set is for all IDs to be printed\n",
        "-src_name <name>    List packets from a given snapshot source name (defaults to first source found)\n",
        "-multi_session      List packets from all sources - assumes the sources are consecutive sessions of the same trace\n",
        "-dstream_format     Input is DSTREAM framed.\n",
        "-tpiu               Input from TPIU - sync by FSYNC.\n",
        "-tpiu_hsync         Input from TPIU - sync by FSYNC and HSYNC.\n",
        "-decode             Full decode of the packets from the trace snapshot (default is to list undecoded packets only\n",
        "-decode_only        Does not list the undecoded packets, just the trace decode.\n",
        "-o_raw_packed       Output raw packed trace frames\n",
        "-o_raw_unpacked     Output raw unpacked trace data per ID\n",
        "-test_waits <N>     Force wait from packet printer for N packets - test the wait/flush mechanisms for the decoder\n",
        "-src_addr_n         ETE protocol: Split source address ranges on N atoms\n",
        "-aa64_opcode_chk    Check for correct AA64 opcodes (MSW != 0x0000)\n",
        "-direct_br_cond     Check for N atom on direct unconditional branch\n",
        "-strict_br_cond     Strict conditional checks: N atom on unconditional branch\n",
        "-range_cont         Check for range continuity\n",
        "-halt_err           Halt on bad packet error\n",
        "-stats              Output packet processing statistics (if available).\n",
        "-parallel <N>       Decode on N threads: across trace IDs, and within an ETMv4/ETE trace ID from its\n",
        "                    sync points. Same log as the serial decode. Not with -multi_session, -stats,\n",
        "                    -o_raw_*, -test_waits (these decode serially).\n",
        "-no_time_print      Do not output elapsed time at end of decode.\n",
        "\nOutput:\n",
        "   Setting any of these options cancels the default output to file & stdout,\n   using _only_ the options supplied.\n\n",
        "-logstdout          Output to stdout -> console.\n",
        "-logstderr          Output to stderr.\n",
        "-logfile            Output to default file - trc_pkt_lister.ppl\n",
        "-logfilename <name> Output to file <name> \n",
    ));
}

/// `strtoul(s, 0, 0)`
fn c_num(s: &str) -> u64 {
    snapshot::parse_c_ulong(s)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    std::process::exit(run(&args));
}

fn run(args: &[String]) -> i32 {
    // logger options first
    let (mut out_stdout, mut out_stderr, mut out_file) = (true, false, true);
    let mut logfile = "trc_pkt_lister.ppl".to_string();
    {
        let (mut so, mut se, mut sf, mut changed) = (false, false, false, false);
        let mut i = 1;
        while i < args.len() {
            match args[i].as_str() {
                "-logstdout" => (so, changed) = (true, true),
                "-logstderr" => (se, changed) = (true, true),
                "-logfile" => (sf, changed) = (true, true),
                "-logfilename" => {
                    i += 1;
                    match args.get(i) {
                        Some(n) => {
                            logfile = n.clone();
                            sf = true;
                            changed = true;
                        }
                        None => {
                            println!("Bad logger command line options\nProgram Exiting");
                            return -2;
                        }
                    }
                }
                _ => {}
            }
            i += 1;
        }
        if changed {
            (out_stdout, out_stderr, out_file) = (so, se, sf);
        }
    }
    let file = if out_file { open_log_file(&logfile) } else { None };
    let log: SharedLog = Rc::new(RefCell::new(Log::new(out_stdout, out_stderr, file)));
    let res = run_logged(args, &log);
    log.borrow_mut().flush();
    res
}

fn run_logged(args: &[String], log: &SharedLog) -> i32 {
    let lmsg = |s: &str| log.borrow_mut().msg(s);
    lmsg(&format!(
        "Trace Packet Lister: CS Decode library testing\n-----------------------------------------------\n\n** Library Version : {}\n\n",
        OCSD_VER_STRING
    ));
    let mut cl = format!("Test Command Line:-\n{}   ", args[0]);
    for a in &args[1..] {
        cl.push_str(a);
        cl.push_str("  ");
    }
    cl.push_str("\n\n");
    lmsg(&cl);

    let mut o = Opts { ss_dir: "./".into(), ..Default::default() };
    let mut i = 1;
    while i < args.len() {
        let a = args[i].as_str();
        let mut next = || {
            i += 1;
            args.get(i).cloned()
        };
        match a {
            "-ss_dir" => match next() {
                Some(v) => o.ss_dir = v,
                None => {
                    lmsg("Trace Packet Lister : Error: Missing directory string on -ss_dir option\n");
                    return -1;
                }
            },
            "-id" => match next() {
                Some(v) => {
                    let id = c_num(&v) as u8;
                    if id == 0 || id >= 0x70 {
                        lmsg(&format!("Trace Packet Lister : Error: invalid ID number 0x{:x} on -id option\n", id));
                        return -1;
                    }
                    o.ids.push(id);
                }
                None => {
                    lmsg("Trace Packet Lister : Error: No ID number on -id option\n");
                    return -1;
                }
            },
            "-src_name" => match next() {
                Some(v) => o.src_name = v,
                None => {
                    lmsg("Trace Packet Lister : Error: Missing source name string on -src_name option\n");
                    return -1;
                }
            },
            "-test_waits" => match next() {
                Some(v) => o.test_waits = (c_num(&v) as i64).clamp(0, u32::MAX as i64) as u32,
                None => {
                    lmsg("Trace Packet Lister : Error: wait count value on -test_waits option\n");
                    return -1;
                }
            },
            "-macc_cache_p_size" => o.macc_cache_page_size = next().map(|v| c_num(&v) as u32).unwrap_or(0),
            "-macc_cache_p_num" => o.macc_cache_page_num = next().map(|v| c_num(&v) as u32).unwrap_or(0),
            "-macc_cache_disable" => o.macc_cache_disable = true,
            "-print_plan" => o.print_plan = next(),
            "-parallel" => match next() {
                Some(v) => o.parallel = (c_num(&v) as usize).min(1024),
                None => {
                    lmsg("Trace Packet Lister : Error: Missing thread count on -parallel option\n");
                    return -1;
                }
            },
            "-parallel_min_seg" => o.parallel_min_seg = next().map(|v| c_num(&v) as usize).unwrap_or(0),
            "-o_raw_packed" => o.raw_packed = true,
            "-o_raw_unpacked" => o.raw_unpacked = true,
            "-ss_verbose" | "-profile" => {}
            "-decode" => o.decode = true,
            "-pkt_mon" => o.pkt_mon = true,
            "-decode_only" => {
                o.decode_only = true;
                o.decode = true;
            }
            "-src_addr_n" => o.add_flags |= ETE_OPFLG_PKTDEC_SRCADDR_N_ATOMS,
            "-aa64_opcode_chk" => o.add_flags |= ETM4_OPFLG_PKTDEC_AA64_OPCODE_CHK,
            "-direct_br_cond" => o.add_flags |= OCSD_OPFLG_N_UNCOND_DIR_BR_CHK,
            "-strict_br_cond" => o.add_flags |= OCSD_OPFLG_STRICT_N_UNCOND_BR_CHK,
            "-range_cont" => o.add_flags |= OCSD_OPFLG_CHK_RANGE_CONTINUE,
            "-halt_err" => o.add_flags |= OCSD_OPFLG_PKTDEC_HALT_BAD_PKTS,
            "-multi_session" => o.multi_session = true,
            "-stats" => o.stats = true,
            "-no_time_print" => o.no_time_print = true,
            "-dstream_format" => o.dstream = true,
            "-tpiu" => o.tpiu = true,
            "-tpiu_hsync" => {
                o.tpiu = true;
                o.hsync = true;
            }
            "-help" | "--help" | "-h" => {
                print_help(&mut log.borrow_mut());
                return -1;
            }
            "-logstdout" | "-logstderr" | "-logfile" => {}
            "-logfilename" => {
                let _ = next();
            }
            other => lmsg(&format!("Trace Packet Lister : Warning: Ignored unknown option {}.\n", other)),
        }
        i += 1;
    }

    lmsg(&format!("Trace Packet Lister : reading snapshot from path {}\n", o.ss_dir));
    if !snapshot::snapshot_found(&o.ss_dir) {
        lmsg(&format!("Trace Packet Lister : Snapshot path{} not found\n", o.ss_dir));
        return 0;
    }
    let snap = match Snapshot::read(&o.ss_dir) {
        Ok(s) => s,
        Err(_) => {
            lmsg("Trace Packet Lister : Failed to read snapshot\n");
            return 0;
        }
    };
    let names = snap.buffer_names();
    if names.is_empty() {
        lmsg("Trace Packet Lister : No trace source buffer names found\n");
        return 0;
    }
    if o.src_name.is_empty() {
        o.src_name = names[0].clone();
    } else if !names.contains(&o.src_name) {
        let mut m = format!("Trace Packet Lister : Trace source name {} not found\n", o.src_name);
        m.push_str("Valid source names are:-\n");
        for n in &names {
            m.push_str(n);
            m.push('\n');
        }
        lmsg(&m);
        return 0;
    }
    lmsg(&format!("Using {} as trace source\n", o.src_name));
    list_trace(&o, &snap, &names, log);
    0
}

/// Make the decode tree for the snapshot's source (None: it could not be
/// made; the reason is logged).
fn create_tree(o: &Opts, snap: &Snapshot, log: &SharedLog, last_err: &LastError, plan: &mut TreePlan) -> Option<to_tree::TreeFromSnapshot> {
    let err_logger = Box::new(ErrLogger { log: log.clone(), last: last_err.clone() });
    to_tree::create_tree_planned(snap, &o.src_name, !o.decode, o.add_flags, err_logger, plan)
}

/// Set the tree up as the options ask: memory cache, packet printers,
/// frame deformatter, element printer, ID filter. `announce`: log what is
/// attached (false for the trees of parallel decode's segments, whose logs
/// hold only what decode prints). Returns the number of packet printers.
fn configure_tree(o: &Opts, tree: &mut DecodeTree, log: &SharedLog, announce: bool) -> usize {
    let lmsg = |s: &str| {
        if announce {
            log.borrow_mut().msg(s)
        }
    };
    if o.decode && (o.macc_cache_disable || o.macc_cache_page_size != 0 || o.macc_cache_page_num != 0) {
        // as OpenCSD's lister: an unset size takes its default
        let size = if o.macc_cache_page_size != 0 { o.macc_cache_page_size as usize } else { opencsd_c_api::mem::cache::DEFAULT_PAGE_SIZE };
        let num = if o.macc_cache_page_num != 0 { o.macc_cache_page_num as usize } else { opencsd_c_api::mem::cache::DEFAULT_PAGES };
        if let Err(msg) = tree.mapper.set_caching(!o.macc_cache_disable, size, num) {
            lmsg(&format!("Trace Packet Lister : {}\n", msg));
        }
    }
    // OpenCSD's lister creates the tree (and its deformatter) before it
    // makes its own error logger current: the deformatter reports to the
    // library's default logger, which prints nothing here and is not the
    // logger whose last error the lister shows.
    tree.set_deformatter_logger(Some(Box::new(opencsd_c_api::common::error::NullLog)));

    // packet printers
    let mut printers = 0;
    if !o.decode_only {
        for id in tree.element_ids() {
            if !o.ids.is_empty() && !o.ids.contains(&id) {
                continue;
            }
            let name = tree.decoder_mut(id).map(|d| d.decoder_name().to_string()).unwrap_or_default();
            let monitor = o.decode || o.pkt_mon;
            let printer = Box::new(PacketPrinter::new(log.clone(), id, monitor));
            let ok = match tree.decoder_mut(id) {
                Some(d) => {
                    if monitor {
                        d.set_monitor(Some(printer));
                        true
                    } else {
                        d.set_sink(Some(printer)) == OCSD_OK
                    }
                }
                None => false,
            };
            if ok {
                printers += 1;
                lmsg(&format!("Trace Packet Lister : Protocol printer {} on Trace ID 0x{:x}\n", name, id));
            } else {
                lmsg(&format!("Trace Packet Lister : Failed to Protocol printer {} on Trace ID 0x{:x}\n", name, id));
            }
        }
    }

    // frame demux
    if let Some(d) = tree.deformatter_mut() {
        let mut flags = d.config_flags();
        if o.tpiu {
            flags |= OCSD_DFRMTR_HAS_FSYNCS;
            flags &= !OCSD_DFRMTR_FRAME_MEM_ALIGN;
        }
        if o.hsync {
            flags |= OCSD_DFRMTR_HAS_HSYNCS;
        }
        if flags == 0 {
            flags = OCSD_DFRMTR_FRAME_MEM_ALIGN;
        }
        if o.raw_packed {
            flags |= OCSD_DFRMTR_PACKED_RAW_OUT;
        }
        if o.raw_unpacked {
            flags |= OCSD_DFRMTR_UNPACKED_RAW_OUT;
        }
        tree.configure_deformatter(flags);
        if o.raw_packed || o.raw_unpacked {
            tree.set_raw_monitor(Some(Box::new(FramePrinter { log: log.clone(), text: String::new() })));
        }
    }

    if o.decode {
        let ids = if o.ids.is_empty() { None } else { Some(o.ids.clone()) };
        tree.set_elem_sink(Some(Box::new(ElemPrinter {
            log: log.clone(),
            ids,
            writer: Some(take_elem_writer()),
            line: LineBuf::with_capacity(256),
            test_waits: o.test_waits,
        })));
        lmsg("Trace Packet Lister : Set trace element decode printer\n");
        let mut m = String::from("Gen_Info : Mapped Memory Accessors\n");
        for a in tree.mapper.describe_each() {
            m.push_str("Gen_Info : ");
            m.push_str(&a);
            m.push('\n');
        }
        m.push_str("Gen_Info : ========================\n");
        lmsg(&m);
    }
    if !o.ids.is_empty() {
        tree.set_id_filter(Some(&o.ids));
    }
    printers
}

fn list_trace(o: &Opts, snap: &Snapshot, names: &[String], log: &SharedLog) {
    let lmsg = |s: &str| log.borrow_mut().msg(s);
    let last_err: LastError = Rc::new(RefCell::new(None));
    let mut plan = TreePlan::default();
    let Some(built) = create_tree(o, snap, log, &last_err, &mut plan) else {
        return;
    };
    if let Some(file) = &o.print_plan {
        if std::fs::write(file, plan.text()).is_err() {
            lmsg(&format!("Trace Packet Lister : Error: cannot write {}\n", file));
        }
        return;
    }
    let mut tree = built.tree;
    let printers = configure_tree(o, &mut tree, log, true);

    if !(o.decode || printers > 0) {
        lmsg("Trace Packet Lister : No supported protocols found.\n");
        return;
    }

    if o.multi_session {
        let total = names.len();
        for (n, name) in names.iter().enumerate() {
            lmsg(&format!("####### Multi Session decode: Buffer {} of {}; Source name = {}.\n\n", n + 1, total, name));
            let Some(b) = snap.buffer(name) else {
                lmsg(&format!(
                    "Trace Packet Lister : ERROR : Multi-session decode for buffer {} - buffer not found. Aborting.\n\n",
                    name
                ));
                break;
            };
            if !process_file(o, &mut tree, &snap.path_of(&b.file), log, &last_err) {
                lmsg(&format!("Trace Packet Lister : ERROR : Multi-session decode for buffer {} failed. Aborting.\n\n", name));
                break;
            }
            lmsg(&format!("####### Buffer {} : {} Complete\n\n", n + 1, name));
        }
    } else {
        if o.parallel > 0 && parallel_supported(o) {
            let start = Instant::now();
            match process_file_parallel(o, snap, &built.buffer_file, &tree.mapper, log) {
                Parallel::Done(bytes) => {
                    end_message(o, log, bytes, start);
                    return;
                }
                Parallel::NotStarted => {}
                Parallel::Stopped(written) => {
                    // the serial decode writes what was written again
                    log.borrow_mut().set_skip(written);
                }
            }
        }
        process_file(o, &mut tree, &built.buffer_file, log, &last_err);
    }
}

/// Parallel decode gives the serial log for these options; the others
/// (statistics, raw frames, waiting printers, several sessions) decode
/// serially.
fn parallel_supported(o: &Opts) -> bool {
    !o.multi_session && !o.stats && !o.raw_packed && !o.raw_unpacked && o.test_waits == 0
}

/// Read a trace file block by block as OpenCSD's lister does, giving each
/// block to `feed` (index, bytes, what follows them in the read buffer),
/// and `flush` while the tree asks to wait. The bytes processed and the
/// last response.
fn feed_file(
    o: &Opts,
    f: &mut File,
    log: &SharedLog,
    feed: &mut dyn FnMut(u32, &[u8], &[u8]) -> (ocsd_datapath_resp_t, usize),
    flush: &mut dyn FnMut() -> ocsd_datapath_resp_t,
) -> (u32, ocsd_datapath_resp_t) {
    let lmsg = |s: &str| log.borrow_mut().msg(s);
    let mut buf = [0u8; 1024];
    let mut index: u32 = 0;
    let mut resp = OCSD_RESP_CONT;
    let mut eof = false;
    // C++ istream semantics: a short read sets EOF; the buffer keeps old
    // bytes beyond what was read.
    let read_into = |f: &mut File, dst: &mut [u8], eof: &mut bool| -> usize {
        let mut got = 0;
        while got < dst.len() {
            match f.read(&mut dst[got..]) {
                Ok(0) => {
                    *eof = true;
                    break;
                }
                Ok(n) => got += n,
                Err(_) => {
                    *eof = true;
                    break;
                }
            }
        }
        got
    };
    while !eof && !resp_is_fatal(resp) {
        let want = if o.dstream { 512 - 8 } else { 1024 };
        let n = read_into(f, &mut buf[..want], &mut eof);
        let mut done = 0usize;
        while done < n && !resp_is_fatal(resp) {
            if resp_is_cont(resp) {
                // the rest of the read buffer follows the block, as in
                // OpenCSD's lister (see DecodeTree::data_in_with_tail)
                let (r, used) = feed(index, &buf[done..n], &buf[n..]);
                resp = r;
                done += used;
                index = index.wrapping_add(used as u32);
            } else {
                resp = flush();
            }
        }
        if o.dstream {
            let mut footer = [0u8; 8];
            footer.copy_from_slice(&buf[..8]);
            let got = read_into(f, &mut footer, &mut eof);
            let _ = got;
            if o.raw_packed {
                let mut m = String::from("DSTREAM footer [");
                for b in footer {
                    m.push_str(&format!("0x{:x} ", b));
                }
                m.push_str("]\n");
                lmsg(&m);
            }
            buf[..8].copy_from_slice(&footer);
        }
    }
    (index, resp)
}

fn end_message(o: &Opts, log: &SharedLog, index: u32, start: Instant) {
    let mut m = format!("Trace Packet Lister : Trace buffer done, processed {} bytes", index);
    if o.no_time_print {
        m.push_str(".\n");
    } else {
        m.push_str(&format!(" in {:.8} seconds.\n", start.elapsed().as_secs_f64()));
    }
    log.borrow_mut().msg(&m);
}

/// How a parallel decode went.
enum Parallel {
    /// The decode is written: the trace bytes processed.
    Done(u32),
    /// Nothing written: decode serially.
    NotStarted,
    /// These bytes of the decode are written (the start of the serial
    /// log); decode serially for the rest.
    Stopped(usize),
}

/// `-parallel N`: decode the trace file on N threads (see
/// `opencsd_c_api::dcd_tree::parallel`) and write the log the serial decode
/// would write.
fn process_file_parallel(o: &Opts, snap: &Snapshot, path: &str, mem: &opencsd_c_api::mem::MemMapper, log: &SharedLog) -> Parallel {
    match parallel_decode(o, snap, path, mem, log) {
        Ok(bytes) => Parallel::Done(bytes),
        Err(0) => Parallel::NotStarted,
        Err(written) => Parallel::Stopped(written),
    }
}

/// Ok: the bytes processed; Err: the bytes of log written. `mem`: the
/// serial tree's memory (its files are read once, and shared by the
/// segments' trees).
fn parallel_decode(o: &Opts, snap: &Snapshot, path: &str, mem: &opencsd_c_api::mem::MemMapper, log: &SharedLog) -> Result<u32, usize> {
    // memory read through a callback is never decoded in parallel (the
    // lister maps files only)
    if !mem.can_share_static() {
        return Err(0);
    }
    let quiet: SharedLog = Rc::new(RefCell::new(Log::default()));
    let no_err: LastError = Rc::new(RefCell::new(None));
    // the recording tree needs no memory
    let mut tree = create_tree(o, snap, &quiet, &no_err, &mut TreePlan { skip_memory: true, ..TreePlan::default() }).ok_or(0usize)?.tree;
    configure_tree(o, &mut tree, &quiet, false);
    let mut f = File::open(path).map_err(|_| 0usize)?;
    let t0 = Instant::now();
    let mut rec = tree.start_recording();
    if rec.unsupported().is_some() {
        return Err(0);
    }
    if let Ok(m) = f.metadata() {
        rec.reserve(usize::try_from(m.len()).unwrap_or(0));
    }
    let (index, resp) = feed_file(o, &mut f, log, &mut |i, d, t| tree.record_data(&mut rec, i, d, t), &mut || OCSD_RESP_CONT);
    if !resp_is_cont(resp) || rec.unsupported().is_some() {
        return Err(0);
    }
    let mut opts = ParallelOptions::new(o.parallel);
    if o.parallel_min_seg > 0 {
        opts = ParallelOptions::stress(o.parallel, o.parallel_min_seg);
    }

    // (each segment's tree is built whole, from the snapshot, as the
    // serial tree is; it uses the stack of the slot given)
    let make = |_slot: u8| {
        let seg_log: SharedLog = Rc::new(RefCell::new(Log::default()));
        let last: LastError = Rc::new(RefCell::new(None));
        // memory: the first tree's, shared by every segment
        let mut t = create_tree(o, snap, &seg_log, &last, &mut TreePlan { skip_memory: true, ..TreePlan::default() })?.tree;
        configure_tree(o, &mut t, &seg_log, false);
        // what building the tree logged is not decode output
        seg_log.borrow_mut().recycle();
        Some((t, seg_log))
    };
    let t1 = Instant::now();
    let mut written = 0usize;
    let outcome = {
        let mut l = log.borrow_mut();
        parallel::decode(&rec, mem, &opts, make, |out: &mut Log, r| {
            written += r.len();
            l.put_kept(out, r);
        })
    };
    match outcome {
        parallel::Outcome::Done(sum) => {
            if std::env::var_os("OCSD_PARALLEL_REPORT").is_some() {
                eprintln!(
                    "trc_pkt_lister: parallel decode: {} segments, {} stitches, {} chunks decoded again, at most {} segments in flight, largest output {} bytes, {} log blocks of {} KiB; recorded in {:.3} s, decoded in {:.3} s",
                    sum.segments,
                    sum.stitches,
                    sum.overlap_chunks,
                    sum.most_in_flight,
                    sum.largest_output,
                    BLOCKS_MADE.load(std::sync::atomic::Ordering::Relaxed),
                    BLOCK / 1024,
                    (t1 - t0).as_secs_f64(),
                    t1.elapsed().as_secs_f64()
                );
            }
            Ok(index)
        }
        parallel::Outcome::Fallback => Err(written),
    }
}

/// Feed one trace file through the tree. Returns false on a fatal error.
fn process_file(o: &Opts, tree: &mut DecodeTree, path: &str, log: &SharedLog, last_err: &LastError) -> bool {
    let lmsg = |s: &str| log.borrow_mut().msg(s);
    let Ok(mut f) = File::open(path) else {
        lmsg("Trace Packet Lister : Error : Unable to open trace buffer.\n");
        return false;
    };
    let start = Instant::now();
    let (index, resp) = {
        let tree_cell = RefCell::new(&mut *tree);
        feed_file(
            o,
            &mut f,
            log,
            &mut |i, d, t| tree_cell.borrow_mut().data_in_with_tail(OCSD_OP_DATA, i, d, t),
            &mut || tree_cell.borrow_mut().data_in(OCSD_OP_FLUSH, 0, &[]).0,
        )
    };
    let fatal = resp_is_fatal(resp);
    if fatal {
        // no end of trace after a fatal error: the last error the lister's
        // logger recorded follows (its text as is, without a line end)
        lmsg("Trace Packet Lister : Data Path fatal error\n");
        if let Some(e) = last_err.borrow().as_ref() {
            lmsg(&e.error_string());
        }
    } else {
        // end of trace; a waiting element printer (-test_waits) is flushed
        let (mut r, _) = tree.data_in(OCSD_OP_EOT, 0, &[]);
        while resp_is_wait(r) {
            r = tree.data_in(OCSD_OP_FLUSH, 0, &[]).0;
        }
    }
    end_message(o, log, index, start);
    if o.multi_session {
        tree.data_in(OCSD_OP_RESET, 0, &[]);
    }
    if o.stats {
        print_stats(tree, log);
    }
    !fatal
}

/// `-stats`: the decode statistics of each trace ID, then the frame
/// demultiplexer's.
fn print_stats(tree: &mut DecodeTree, log: &SharedLog) {
    let lmsg = |s: &str| log.borrow_mut().msg(s);
    lmsg("\nReading packet decoder statistics....\n\n");
    let demux = tree.demux_stats();
    for id in tree.element_ids() {
        let Some(d) = tree.decoder_mut(id) else { continue };
        match d.decode_stats() {
            Ok(s) => lmsg(&format!(
                "Decode stats ID 0x{:x}\nTotal Bytes: {}; Unsynced Bytes: {}\nBad Header Errors: {}; Bad Sequence Errors: {}\n",
                id, s.channel_total, s.channel_unsynced, s.bad_header_errs, s.bad_sequence_errs
            )),
            Err(_) => lmsg(&format!("Decode stats unavailable on Trace ID 0x{:x}\n", id)),
        }
    }
    if let Some(d) = demux {
        lmsg(&format!(
            "\nFrame Demux Stats\nTrace data bytes sent to registered ID decoders: {}\nTrace data bytes without registered ID decoders: {}\nTrace data bytes with unknown ID: {}\nTrace data bytes with reserved ID: {}\nFrame demux bytes, ID bytes and sync bytes: {}\nTotal bytes processed by frame demux: {}\n\n",
            d.valid_id_bytes,
            d.no_id_bytes,
            d.unknown_id_bytes,
            d.reserved_id_bytes,
            d.frame_bytes,
            d.valid_id_bytes + d.no_id_bytes + d.unknown_id_bytes + d.reserved_id_bytes + d.frame_bytes
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A log file already there is appended to (as OpenCSD's message
    /// logger does), also when written through the writer thread.
    #[test]
    fn a_log_file_already_there_is_appended_to() {
        let p = std::env::temp_dir().join(format!("lister_logfile_{}_append", std::process::id()));
        let old = vec![b'#'; 3 * BLOCK + 5];
        std::fs::write(&p, &old).unwrap();
        let mut log = Log::new(false, false, open_log_file(p.to_str().unwrap()));
        for i in 0..20_000 {
            log.msg(&format!("line {i}\n"));
        }
        log.flush();
        drop(log);
        let mut want = old;
        for i in 0..20_000 {
            want.extend_from_slice(format!("line {i}\n").as_bytes());
        }
        assert!(std::fs::read(&p).unwrap() == want);
        let _ = std::fs::remove_file(&p);
    }
}
