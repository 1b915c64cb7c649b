//! Integration tests: `derive`.

#[allow(unused_imports)]
use crate::common;
