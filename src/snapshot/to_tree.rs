//! Build a decode tree for one trace buffer of a snapshot, as OpenCSD's
//! test library does: one decoder per source feeding the buffer, configured
//! from the device registers, and the cores' memory dumps mapped.


use super::{Device, Snapshot};
use crate::abi::*;
use crate::common::{ErrorLog, OcsdError};
pub use crate::config::mem_space_from_str;
use crate::config::{arch_profile, Protocol, ProtocolConfig};
use crate::mem::ocsd_files::AccList;
use crate::dcd_tree::DecodeTree;
use super::plan::TreePlan;

/// Name under which snapshot-conversion errors are logged.
pub const SS2_COMPONENT: &str = "ss2_dcdtree";

/// The decoder configuration of a source device, from its registers
/// (see [`crate::config`]); missing registers are logged as OpenCSD's
/// snapshot reader logs them.
pub fn device_config(dev: &Device, ap: ocsd_arch_profile_t, log: &mut dyn ErrorLog) -> Option<ProtocolConfig> {
    let protocol = Protocol::from_device_type(&dev.type_name)?;
    ProtocolConfig::from_registers(protocol, dev, ap, &mut |name, default| match default {
        None => log.log_message(SS2_COMPONENT, OCSD_ERR_SEV_ERROR, &format!("Error:Missing {}\n", name)),
        Some(_) => log.log_message(SS2_COMPONENT, OCSD_ERR_SEV_WARN, &format!("Warning: Default set for register. Missing {}\n", name)),
    })
    .ok()
}

pub struct TreeFromSnapshot {
    pub tree: DecodeTree,
    pub buffer_file: String,
}

fn log_err(log: &mut dyn ErrorLog, code: ocsd_err_t, msg: String) {
    log.log_error(SS2_COMPONENT, &OcsdError::with_msg(OCSD_ERR_SEV_ERROR, code, msg));
}

/// Create the tree for buffer `buffer_name`. `packet_only`: packet
/// processing without decode. `add_flags` are extra create flags.
pub fn create_tree(
    snap: &Snapshot,
    buffer_name: &str,
    packet_only: bool,
    add_flags: u32,
    logger: Box<dyn ErrorLog>,
) -> Option<TreeFromSnapshot> {
    create_tree_planned(snap, buffer_name, packet_only, add_flags, logger, &mut TreePlan::default())
}

/// As [`create_tree`], also writing down in `plan` what was built: the
/// buffer, each decoder created and its configuration, each memory
/// region mapped.
pub fn create_tree_planned(
    snap: &Snapshot,
    buffer_name: &str,
    packet_only: bool,
    add_flags: u32,
    logger: Box<dyn ErrorLog>,
    plan: &mut TreePlan,
) -> Option<TreeFromSnapshot> {
    let buf = snap.buffer(buffer_name)?;
    plan.format = buf.format.clone();
    plan.buffer = snap.path_of(&buf.file);
    let single = buf.format == "source_data";
    let dfmt_flags = if buf.format == "dstream_coresight" { OCSD_DFRMTR_HAS_FSYNCS } else { OCSD_DFRMTR_FRAME_MEM_ALIGN };
    let mut tree = DecodeTree::new(
        if single { OCSD_TRC_SRC_SINGLE } else { OCSD_TRC_SRC_FRAME_FORMATTED },
        dfmt_flags,
        logger,
    )
    .ok()?;
    let create_flags = add_flags | if packet_only { OCSD_CREATE_FLG_PACKET_PROC } else { OCSD_CREATE_FLG_FULL_DECODER };
    let mut created = 0;
    // OpenCSD's accessor list: which dumps map, and how
    let mut list = AccList::default();

    for (src, core) in snap.sources_of(buffer_name) {
        let Some(dev) = snap.device(&src) else {
            log_err(tree.logger_mut(), OCSD_ERR_TEST_SS_TO_DECODER, format!("Failed to find device data for source {}.\n", src));
            if single {
                break;
            }
            continue;
        };
        let core_dev = if core.is_empty() { None } else { snap.device(&core) };
        if !core.is_empty() && core_dev.is_none() {
            log_err(tree.logger_mut(), OCSD_ERR_TEST_SS_TO_DECODER, format!("Failed to get device data for source {}.\n", src));
        } else {
            // as OpenCSD's snapshot reader: a source with a core is a PE
            // trace source (ETMv3, PTM, ETMv4, ETE), one without is STM or
            // ITM; any other is not created (the core name unchecked)
            let protocol = Protocol::from_device_type(&dev.type_name);
            let pe = matches!(protocol, Some(Protocol::EtmV3 | Protocol::Ptm | Protocol::EtmV4 | Protocol::Ete));
            let kind_ok = if core_dev.is_some() { pe } else { matches!(protocol, Some(Protocol::Stm | Protocol::Itm)) };
            let ap = match core_dev.filter(|_| kind_ok) {
                Some(c) => {
                    let ap = arch_profile(&c.type_name);
                    if ap.arch == ARCH_UNKNOWN {
                        log_err(
                            tree.logger_mut(),
                            OCSD_ERR_TEST_SS_TO_DECODER,
                            format!("Unrecognized Core name {}. Cannot evaluate profile or architecture.", c.type_name),
                        );
                    }
                    ap
                }
                None => ocsd_arch_profile_t::default(),
            };
            let ok = kind_ok
                && (core_dev.is_none() || ap.arch != ARCH_UNKNOWN)
                && match device_config(dev, ap, tree.logger_mut()) {
                    Some(cfg) => match cfg
                        .create_decoder(create_flags)
                        .and_then(|mut d| {
                            d.set_dec_op_flags(create_flags & !(OCSD_CREATE_FLG_PACKET_PROC | OCSD_CREATE_FLG_FULL_DECODER | OCSD_CREATE_FLG_INST_ID));
                            tree.add_decoder(d)
                        })
                    {
                        Ok(_) => {
                            plan.add_decoder(cfg.decoder_name(), &src, cfg.as_any());
                            true
                        }
                        Err(e) => {
                            log_err(tree.logger_mut(), e, format!("Snapshot processor : failed to create {} decoder on decode tree.", cfg.decoder_name()));
                            false
                        }
                    },
                    None => false,
                };
            if ok {
                created += 1;
                if let (false, false, Some(c)) = (packet_only, plan.skip_memory, core_dev) {
                    map_dumps(snap, c, &mut tree, &mut list);
                }
            } else if core_dev.is_some() {
                log_err(tree.logger_mut(), OCSD_ERR_TEST_SS_TO_DECODER, format!("Failed to create decoder for source {}.\n", src));
            } else {
                log_err(
                    tree.logger_mut(),
                    OCSD_ERR_TEST_SS_TO_DECODER,
                    format!("Failed to create decoder for none core source {}.\n", src),
                );
            }
        }
        if single {
            break;
        }
    }
    if created == 0 {
        return None;
    }
    // the files as mapped, one line per range: a client maps each file's
    // lines with one region call
    for (path, space, ranges) in list.listed_files() {
        for r in ranges {
            plan.add_mem(r.start, r.offset, (r.end.wrapping_sub(r.start) as usize).wrapping_add(1), space as u32, &path);
        }
    }
    Some(TreeFromSnapshot { tree, buffer_file: snap.path_of(&buf.file) })
}

/// Map a core's memory dumps as OpenCSD's snapshot reader does: the
/// first dump of a file makes its accessor, later ones add regions to it
/// (a dump starting one of its ranges adds nothing); a failure is logged
/// and the rest go on.
fn map_dumps(snap: &Snapshot, core: &Device, tree: &mut DecodeTree, list: &mut AccList) {
    for d in &core.dumps {
        let path = snap.path_of(&d.path);
        let region = ocsd_file_mem_region_t { file_offset: d.offset, start_address: d.address, region_size: d.length };
        let (ops, res) = if list.file_exists(&path) {
            list.update_file_regions(&path, &[region])
        } else {
            list.add_file_regions(&path, &[region], mem_space_from_str(&d.space))
        };
        for op in ops {
            tree.mapper.apply(op);
        }
        if let Err(e) = res {
            log_err(tree.logger_mut(), e, format!("Failed to create memory accessor for file {}.", path));
        }
    }
}
