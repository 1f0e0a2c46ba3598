//! What `PerfData` reads from the header and feature sections of every
//! shared recording (the build-ID and simpleperf file tables with its own
//! parsers) equals what linux-perf-data reads from the whole file.

mod common;
use common::*;

use opencsd_c_api::perf::PerfData;

#[test]
fn feature_sections_as_the_crate_reads_them() {
    let Some(shared) = shared_or_skip() else { return };
    let mut n = 0;
    for p in shared_recordings(&shared) {
        let bytes = std::fs::read(&p).unwrap();
        let Ok(pd) = PerfData::open(&p) else { continue };
        n += 1;
        let f = linux_perf_data::PerfFileReader::parse_file(std::io::Cursor::new(&bytes[..])).unwrap().perf_file;
        // build IDs, by path
        let want = f.build_ids().unwrap();
        assert!(pd.build_ids.len() >= want.len().min(1), "{}", p.display());
        for v in want.values() {
            let path = String::from_utf8_lossy(&v.path);
            let ours = pd.build_ids.get(&path).unwrap_or_else(|| panic!("{}: {} missing", p.display(), path));
            assert!(v.build_id.starts_with(ours.as_slice()) && !ours.as_slice().is_empty(), "{}: {}", p.display(), path);
        }
        assert_eq!(pd.os_release.as_deref(), f.os_release().unwrap(), "{}", p.display());
        let meta: std::collections::HashMap<String, String> =
            f.simpleperf_meta_info().unwrap().unwrap_or_default().into_iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        assert_eq!(pd.simpleperf_meta, meta, "{}", p.display());
        let config = f.event_attributes().iter().find_map(|a| match a.attributes().type_ {
            linux_perf_data::linux_perf_event_reader::PerfEventType::DynamicPmu(_, c, _, _) => Some(c),
            _ => None,
        });
        assert_eq!(pd.etm_config, config, "{}", p.display());
        let aux_index = f.feature_section_data(linux_perf_data::Feature::AUXTRACE).is_some();
        assert!(aux_index || !pd.perf_auxtrace_index, "{}", p.display());
    }
    assert!(n >= 3, "only {} recordings read", n);
}
