//! How many threads llama.cpp gets: the physical cores, as llama.cpp's own
//! tools choose. Decoding is bound by memory bandwidth and the arithmetic
//! units a core's hyper-threads share; a thread per logical CPU only adds
//! contention.

use std::path::Path;

/// The physical cores under `sys` (normally `/sys`): the distinct sets of
/// thread siblings (`devices/system/cpu/cpuN/topology/thread_siblings`),
/// the way llama.cpp counts them. `None` when the files are not there.
pub fn physical_cores_in(sys: &Path) -> Option<usize> {
    let mut siblings = std::collections::BTreeSet::new();
    for cpu in 0.. {
        let file = sys
            .join("devices/system/cpu")
            .join(format!("cpu{cpu}"))
            .join("topology/thread_siblings");
        match std::fs::read_to_string(file) {
            Ok(s) => {
                siblings.insert(s.trim().to_string());
            }
            Err(_) => break,
        }
    }
    (!siblings.is_empty()).then_some(siblings.len())
}

/// The default thread count: the physical cores, but no more than the CPUs
/// this process may use (its affinity or a container's quota); the
/// logical CPUs where the topology is unknown.
pub fn default_threads() -> usize {
    let usable = std::thread::available_parallelism().map_or(1, |n| n.get());
    threads_for(physical_cores_in(Path::new("/sys")), usable)
}

/// The physical cores, at most the usable CPUs; those when unknown.
fn threads_for(physical: Option<usize>, usable: usize) -> usize {
    physical.map_or(usable, |p| p.min(usable))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fake_sys(siblings: &[&str]) -> std::path::PathBuf {
        let root = std::env::temp_dir().join(format!(
            "parlance-sys-{}-{}",
            std::process::id(),
            siblings.join("_").replace(',', "c")
        ));
        for (i, s) in siblings.iter().enumerate() {
            let dir = root.join(format!("devices/system/cpu/cpu{i}/topology"));
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(dir.join("thread_siblings"), format!("{s}\n")).unwrap();
        }
        root
    }

    #[test]
    fn hyper_threads_count_once() {
        // Four logical CPUs, two cores with two threads each.
        assert_eq!(physical_cores_in(&fake_sys(&["3", "3", "c", "c"])), Some(2));
        assert_eq!(physical_cores_in(&fake_sys(&["1", "2", "4"])), Some(3));
        assert_eq!(physical_cores_in(&fake_sys(&[])), None);
    }

    #[test]
    fn the_default_is_the_physical_cores_within_the_usable_cpus() {
        assert_eq!(threads_for(Some(4), 2), 2, "a container's quota");
        assert_eq!(threads_for(Some(2), 4), 2, "hyper-threads");
        assert_eq!(threads_for(None, 3), 3);
        let usable = std::thread::available_parallelism().unwrap().get();
        assert_eq!(
            default_threads(),
            threads_for(physical_cores_in(Path::new("/sys")), usable)
        );
    }
}
