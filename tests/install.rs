//! Integration tests: `install`.

#[allow(unused_imports)]
use crate::common;
