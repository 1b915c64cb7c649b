//! Integration tests: `record`.

#[allow(unused_imports)]
use crate::common;
