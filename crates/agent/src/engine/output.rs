//! A tool's output against its limit: measured as the JSON that would be
//! stored and sent, cheaply, since every call's result is checked.

use parlance_format::Block;

/// The bytes of JSON a result's content takes (what would be stored and
/// sent) when that is over `limit`; `None` when it fits. Every call's
/// result is checked, so the check is cheap: plain text is bounded without
/// writing it out (JSON escapes a byte into at most six, and a text
/// block's framing is 25 bytes), and anything else is counted as it is
/// written, building no string (a string per block made each call ~15%
/// slower in `cargo bench -p parlance-agent --bench tools`).
pub(super) fn over_limit(content: &[Block], limit: usize) -> Option<usize> {
    let bound = content.iter().try_fold(0usize, |sum, b| match b {
        Block::Text(t) if t.signature.is_none() && t.item_id.is_none() && t.provider.is_none() => {
            Some(sum.saturating_add(t.text.len().saturating_mul(6).saturating_add(32)))
        }
        _ => None,
    });
    if bound.is_some_and(|b| b <= limit) {
        return None;
    }
    let size = output_size(content);
    (size > limit).then_some(size)
}

/// Bytes of JSON `content` takes, counted as it is written out.
fn output_size(content: &[Block]) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    for b in content {
        // Writing to a counter cannot fail; a block that cannot be written
        // as JSON counts what was written before it failed.
        let _ = serde_json::to_writer(&mut count, b);
    }
    count.0
}

/// A byte count for people: `20.0 MiB`, `512 KiB`, `300 bytes`.
pub(crate) fn bytes(n: usize) -> String {
    const KIB: f64 = 1024.0;
    let f = n as f64;
    if f >= KIB * KIB {
        format!("{:.1} MiB", f / (KIB * KIB))
    } else if f >= KIB {
        format!("{:.0} KiB", f / KIB)
    } else {
        format!("{n} bytes")
    }
}
