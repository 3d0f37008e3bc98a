//! Parlance tool engine and run loop (in progress).
