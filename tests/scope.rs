//! Integration tests: `scope`.

#[allow(unused_imports)]
use crate::common;
