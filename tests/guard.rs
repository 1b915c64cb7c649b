//! Integration tests: `guard`.

#[allow(unused_imports)]
use crate::common;
