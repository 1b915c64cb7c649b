//! Integration tests: `prune`.

#[allow(unused_imports)]
use crate::common;
