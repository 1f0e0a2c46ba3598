//! Single-instruction code follower for ETMv3 atoms (OpenCSD's
//! `OcsdCodeFollower::followSingleAtom`): reads the opcode at an address,
//! classifies it and works out the executed range and the next address.

use crate::abi::*;
use crate::common::{MemAccess, ReadWindow};

/// Follows one instruction per atom.
#[derive(Debug)]
pub struct CodeFollower {
    info: ocsd_instr_info,
    st_range: ocsd_vaddr_t,
    en_range: ocsd_vaddr_t,
    next_addr: ocsd_vaddr_t,
    next_valid: bool,
    mem_space: ocsd_mem_space_acc_t,
    trace_id: u8,
    nacc_addr: ocsd_vaddr_t,
    nacc: bool,
    /// Opcode reads served from the view of a memory run.
    win: ReadWindow,
}

impl Default for CodeFollower {
    fn default() -> Self {
        CodeFollower {
            info: ocsd_instr_info {
                pe_type: ocsd_arch_profile_t { arch: ARCH_UNKNOWN, profile: profile_Unknown },
                isa: ocsd_isa_unknown,
                ..Default::default()
            },
            st_range: 0,
            en_range: 0,
            next_addr: 0,
            next_valid: false,
            mem_space: OCSD_MEM_SPACE_NONE,
            trace_id: 0,
            nacc_addr: 0,
            nacc: false,
            win: ReadWindow::default(),
        }
    }
}

impl CodeFollower {
    pub fn set_arch_profile(&mut self, p: ocsd_arch_profile_t) {
        self.info.pe_type = p;
    }
    pub fn set_mem_space_access(&mut self, m: ocsd_mem_space_acc_t) {
        self.mem_space = m;
    }
    pub fn mem_space_access(&self) -> ocsd_mem_space_acc_t {
        self.mem_space
    }
    pub fn set_trace_id(&mut self, id: u8) {
        self.trace_id = id;
    }
    pub fn set_isa(&mut self, isa: ocsd_isa) {
        self.info.isa = isa;
    }

    /// Before the atoms of a packet: the view of the last memory run is
    /// kept only if the memory was not used or changed since.
    pub fn begin_reads(&mut self, mem: &dyn MemAccess) {
        self.win.check(mem);
    }

    /// After them, before anything else uses the memory: the reads served
    /// from the view reported.
    pub fn end_reads(&mut self, mem: &mut dyn MemAccess) {
        self.win.report(mem);
    }

    /// Decode the instruction at `addr`, executed (`ATOM_E`) or not,
    /// between [`CodeFollower::begin_reads`] and [`CodeFollower::end_reads`].
    /// Returns OpenCSD's error code; inaccessible memory sets the NACC
    /// flag and returns `OCSD_ERR_MEM_NACC`.
    pub fn follow_single_atom(&mut self, mem: &mut dyn MemAccess, addr: ocsd_vaddr_t, atom: ocsd_atm_val) -> ocsd_err_t {
        self.next_valid = false;
        self.nacc = false;
        self.st_range = addr;
        self.en_range = addr;
        self.next_addr = addr;
        self.info.instr_addr = addr;

        let mut buf = [0u8; 4];
        let n = match self.win.read4(mem, addr, self.mem_space, self.trace_id, &mut buf) {
            Ok(n) => n,
            Err(e) => return e,
        };
        if n != 4 {
            self.nacc = true;
            self.nacc_addr = addr;
            return OCSD_ERR_MEM_NACC;
        }
        self.info.opcode = u32::from_le_bytes(buf);
        let err = crate::instr::decode_instruction(&mut self.info);
        if err != OCSD_OK {
            return err;
        }
        self.en_range = self.info.instr_addr.wrapping_add(self.info.instr_size as u64);
        self.next_addr = self.en_range;
        self.next_valid = true;
        match self.info.type_ {
            OCSD_INSTR_BR if atom == ATOM_E => self.next_addr = self.info.branch_addr,
            OCSD_INSTR_BR_INDIRECT if atom == ATOM_E => self.next_valid = false,
            _ => {}
        }
        OCSD_OK
    }

    pub fn has_range(&self) -> bool {
        self.st_range < self.en_range
    }
    pub fn range_en(&self) -> ocsd_vaddr_t {
        self.en_range
    }
    pub fn has_next_addr(&self) -> bool {
        self.next_valid
    }
    pub fn next_addr(&self) -> ocsd_vaddr_t {
        self.next_addr
    }
    pub fn instr_type(&self) -> ocsd_instr_type {
        self.info.type_
    }
    pub fn instr_subtype(&self) -> ocsd_instr_subtype {
        self.info.sub_type
    }
    pub fn instr_size(&self) -> u8 {
        self.info.instr_size
    }
    pub fn is_cond(&self) -> bool {
        self.info.is_conditional == 1
    }
    pub fn isa_changed(&self) -> bool {
        self.info.isa != self.info.next_isa
    }
    pub fn next_isa(&self) -> ocsd_isa {
        self.info.next_isa
    }
    pub fn is_nacc(&self) -> bool {
        self.nacc
    }
    pub fn clear_nacc(&mut self) {
        self.nacc = false;
    }
    pub fn nacc_addr(&self) -> ocsd_vaddr_t {
        self.nacc_addr
    }
}
