//! The server's identity, which survives its restarts.
//!
//! Each run a server claims is written with its identity (the run's
//! `holder`). A server that starts again under the same identity knows
//! the runs still `running` under it are its previous incarnation's, dead,
//! and takes them over at once instead of waiting for their leases.
//!
//! That is safe only if no live process holds the same identity, so the
//! identity lives in a file that the server keeps locked (`flock`) while it
//! runs: `server-0.id` in the identity directory, or `server-1.id` when a
//! second server of the machine holds the first, and so on. The lock is
//! the operating system's: a process killed with SIGKILL loses it, so the
//! next server to start takes its identity, and its runs, at once. A
//! file's identity is made once, at random (`srv_…`), so servers of other
//! machines never share one. Without a directory it can write, the server
//! runs under an identity of its own for this start only: its dead runs
//! are then taken over once their lease runs out, by any server.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, Write};
use std::path::{Path, PathBuf};

/// Identity files tried per directory (servers on one machine sharing it).
const SLOTS: usize = 64;

/// The server's identity and the lock that makes it its own.
#[derive(Debug)]
pub struct Identity {
    /// The identity (`srv_…`).
    pub id: String,
    /// The file it came from, locked while the server lives; `None` for
    /// an identity of this start only.
    pub file: Option<PathBuf>,
    _lock: Option<File>,
}

/// `$XDG_STATE_HOME/parlance`, else `~/.local/state/parlance`.
pub fn default_dir() -> Option<PathBuf> {
    let from = |k: &str| {
        std::env::var_os(k)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    from("XDG_STATE_HOME")
        .map(|d| d.join("parlance"))
        .or_else(|| from("HOME").map(|h| h.join(".local/state/parlance")))
}

impl Identity {
    /// The identity of the first free file of `dir` (made when missing);
    /// one of this start only when none can be had (logged).
    pub fn acquire(dir: Option<&Path>) -> Identity {
        let dir = dir.map(Path::to_path_buf).or_else(default_dir);
        let Some(dir) = dir else {
            return Self::ephemeral("no directory for it (no HOME)");
        };
        if let Err(e) = std::fs::create_dir_all(&dir) {
            return Self::ephemeral(&format!("{}: {e}", dir.display()));
        }
        for slot in 0..SLOTS {
            let path = dir.join(format!("server-{slot}.id"));
            match Self::take(&path) {
                Ok(Some(identity)) => return identity,
                Ok(None) => continue, // a live server holds it
                Err(e) => return Self::ephemeral(&format!("{}: {e}", path.display())),
            }
        }
        Self::ephemeral(&format!(
            "{SLOTS} servers of this machine hold every identity of {}",
            dir.display()
        ))
    }

    /// The identity of `path`, if no live process holds it.
    fn take(path: &Path) -> std::io::Result<Option<Identity>> {
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)?;
        match file.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => return Ok(None),
            Err(std::fs::TryLockError::Error(e)) => return Err(e),
        }
        let mut text = String::new();
        file.read_to_string(&mut text)?;
        let id = match text.trim() {
            t if valid(t) => t.to_string(),
            _ => {
                // New (or damaged): made once, then kept.
                let id = parlance_format::new_id("srv");
                file.set_len(0)?;
                file.rewind()?;
                file.write_all(format!("{id}\n").as_bytes())?;
                file.sync_all()?;
                id
            }
        };
        Ok(Some(Identity {
            id,
            file: Some(path.to_path_buf()),
            _lock: Some(file),
        }))
    }

    fn ephemeral(why: &str) -> Identity {
        tracing::warn!(
            why,
            "the server has no lasting identity: runs it leaves behind if it dies are taken over once their lease runs out"
        );
        Identity {
            id: parlance_format::new_id("srv"),
            file: None,
            _lock: None,
        }
    }
}

/// An identity this module wrote: `srv_` and a few safe characters.
fn valid(id: &str) -> bool {
    id.starts_with("srv_")
        && id.len() <= 64
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp() -> PathBuf {
        let d = std::env::temp_dir().join(format!("parlance-identity-{}", rand::random::<u64>()));
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn an_identity_survives_its_holder_and_is_never_shared_while_held() {
        let dir = temp();
        let first = Identity::acquire(Some(&dir));
        assert!(valid(&first.id), "{}", first.id);
        assert_eq!(
            first.file.as_deref(),
            Some(dir.join("server-0.id").as_path())
        );
        // Held: a second server of the machine gets the next one.
        let second = Identity::acquire(Some(&dir));
        assert_ne!(second.id, first.id);
        assert_eq!(
            second.file.as_deref(),
            Some(dir.join("server-1.id").as_path())
        );
        // The first stops (its lock goes with it): its identity is free,
        // and the same.
        let id = first.id.clone();
        drop(first);
        let again = Identity::acquire(Some(&dir));
        assert_eq!(again.id, id);
        drop((second, again));
    }

    #[test]
    fn a_damaged_file_gets_a_new_identity_and_an_unusable_dir_one_for_now() {
        let dir = temp();
        std::fs::write(dir.join("server-0.id"), "'; DROP TABLE x; --").unwrap();
        let fixed = Identity::acquire(Some(&dir));
        assert!(valid(&fixed.id));
        assert_eq!(
            std::fs::read_to_string(dir.join("server-0.id"))
                .unwrap()
                .trim(),
            fixed.id
        );
        // A file where the directory should be.
        let not_dir = dir.join("server-0.id");
        let ephemeral = Identity::acquire(Some(&not_dir));
        assert!(valid(&ephemeral.id));
        assert_eq!(ephemeral.file, None);
    }
}
